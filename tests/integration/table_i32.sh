#!/usr/bin/env bash
# dtype = "i32" tables (docs/job-scripts.md, "Tables"): int32 counts stay
# exact. Workers add +1 (int32 matrices) to random keys on 1 and 2 nodes,
# classic, relocating, replicated (every key; and 5 keys replicated, the
# rest relocated) and under auto; every key ends equal to its number of
# adds, a key pre-set to 2^24 too (float32 would lose the +1s), also after
# a checkpoint round trip taken while keys were relocated or replicated.
# Decision scripts replicate an i32 table's hot keys as an f32 table's.
# Bad uses are refused with one clear line naming the script line or table.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for run in "1 classic" "2 classic" "2 relocate" "2 replicate" "2 mixed" "2 auto"; do
    set -- $run
    run_timed "$JOBS/count_i32.lua" -- "$1" "$2" 2 "$TMP"
    [ "$rc" -eq 0 ] || fail "i32 counts on $1 nodes, $2: exit $rc"
    grep -q "^ok nodes=$1 manage=$2 adds=" "$TMP/out" || fail "no ok line for $run"
    if [ "$2" = auto ]; then
        grep -q "^auto f32 2,0,998; auto i32 2,0,998; " "$TMP/out" || fail "auto: an i32 table decided otherwise"
    fi
    moved=$(sed -n 's/.*moved=\([0-9]*\).*/\1/p' "$TMP/out")
    rupd=$(sed -n 's/.*replica_updates=\([0-9]*\).*/\1/p' "$TMP/out")
    case $2 in relocate | mixed) [ "${moved:-0}" -gt 0 ] || fail "$2: no key moved" ;; esac
    case $2 in replicate | mixed) [ "${rupd:-0}" -gt 0 ] || fail "$2: no replica updated" ;; esac
done
# the REPL shows an i32 row's integers in full (an f32 row shows 7 digits)
printf '%s\n' 'job = cr.job{nodes = 2, workers = 1}' 'C = job:table{name = "C", keys = 4, dim = 3, dtype = "i32"}' \
    'C:set(3, {16777217, -3, 2147483647})' 'C:get(3)' 'C.dtype, C.optimizer' \
    | timeout 30 "$CRESCENT_BIN" repl >"$TMP/out" 2>&1 || fail "repl: exit $?"
grep -qx "{16777217, -3, 2147483647}" "$TMP/out" || { cat "$TMP/out"; fail "repl row"; }
grep -qx "i32	add" "$TMP/out" || { cat "$TMP/out"; fail "repl dtype"; }
bad() { # case pattern
    timeout 30 "$CRESCENT_BIN" run "$JOBS/i32_bad.lua" -- "$1" >"$TMP/out" 2>&1
    local rc=$?
    [ $rc -ne 0 ] || { cat "$TMP/out"; fail "case $1: exit 0"; }
    grep -q -- "$2" "$TMP/out" || { cat "$TMP/out"; fail "case $1: expected a message matching '$2'"; }
    ! grep -q "^ok" "$TMP/out" || fail "case $1 went on"
}
bad f64 "i32_bad.lua:7: job:table{}: table 'C': unknown dtype f64 (f32 or i32)"
bad sgd "i32_bad.lua:8: job:table{}: table 'C': an i32 table takes the optimizer add (the default) or assign, not sgd"
bad normal "i32_bad.lua:9: job:table{}: table 'C': an i32 table starts at cr.init.zeros() or cr.init.constant(integer)"
bad fraction "i32_bad.lua:10: job:table{}: table 'C': an i32 table starts at"
bad replicate "i32_bad.lua:12: .*replicate: table 'C' uses the rule 'assign', which cannot be replicated"
bad set "i32_bad.lua:17: C:set: row\[2\] = 2.5 is not an int32 (table 'C' holds i32 counts)"
bad setbig "i32_bad.lua:18: C:set: row\[2\] = 2147483648 is not an int32"
bad dist "i32_bad.lua:19: job:distribution{}: table 'C' holds i32 counts; sampling is for f32 tables"
bad f32push "count_i32.lua:[0-9]*: push: table 'C' holds i32 values, got an f32 matrix"
bad i32push "count_i32.lua:[0-9]*: push: table 'F' holds f32 values, got an i32 matrix"
bad sample "count_i32.lua:[0-9]*: prepare_sample: table 'C' holds i32 counts; sampling is for f32 tables"
no_orphans || exit 1
exit 0
