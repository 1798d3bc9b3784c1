#!/usr/bin/env bash
# Placements of dense tables (docs/placement.md): range, hash and a
# placement file on 1 and 2 nodes: known pushes read back from the scheduler
# and every worker, local keys match the owners, initial values and
# checkpoints do not depend on placement or node count; placement files for
# another table, another node count, cut short or unreadable are refused
# with a one-line error naming the file and the table, leaving the job as
# it was.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
job="$JOBS/place.lua"
# a file placement of 50 keys on 2 nodes, 32 and 18 keys, interleaved
{ echo '# crescent placement 1'; echo 'k 2'; echo 'examples 0'; echo 'keys 50'
  for k in $(seq 0 49); do echo "v $k $(( (k * 7 + 3) % 11 < 4 ? 1 : 0 ))"; done; } >"$TMP/p2.txt"
init=""
for p in range hash "$TMP/p2.txt"; do
    for n in 1 2; do
        [ "$p" = "$TMP/p2.txt" ] && [ "$n" = 1 ] && continue  # the file is for 2 nodes
        run_timed "$job" -- "$p" "$n" run
        [ $rc -eq 0 ] || fail "placement $p on $n nodes: exit $rc"
        grep -q "^ok placement=" "$TMP/out" || fail "no ok line"
        i=$(sed -n 's/^init //p' "$TMP/out")
        [ -z "$init" ] && init=$i
        [ "$i" = "$init" ] || fail "initial values differ under $p on $n nodes: $i vs $init"
    done
done
grep -q "per-node 32,18" "$TMP/out" || fail "the file's placement was not followed: $(grep per-node "$TMP/out")"
# hash placement spreads the keys over both nodes
run_timed "$job" -- hash 2 run
grep -q "per-node 50,0\|per-node 0,50" "$TMP/out" && fail "hash placement put every key on one node"
# checkpoints are rows by key: saved under one placement, loaded under any other, on 1 or 2 nodes
run_timed "$job" -- "$TMP/p2.txt" 2 save "$TMP/a.ckpt"
[ $rc -eq 0 ] || fail "save under the file placement"
want=$(sed -n 's/^digest //p' "$TMP/out")
for pn in "range 1" "hash 2" "range 2"; do
    run_timed "$job" -- ${pn% *} ${pn#* } load "$TMP/a.ckpt"
    got=$(sed -n 's/^digest //p' "$TMP/out")
    [ "$got" = "$want" ] || fail "loaded under $pn: digest $got, saved $want"
done
run_timed "$job" -- range 2 save "$TMP/b.ckpt"
want=$(sed -n 's/^digest //p' "$TMP/out")
run_timed "$job" -- "$TMP/p2.txt" 2 load "$TMP/b.ckpt"
got=$(sed -n 's/^digest //p' "$TMP/out")
[ "$got" = "$want" ] || fail "range checkpoint loaded under the file placement: $got, saved $want"

# refused placement files: one line naming the file (and line) and the table; nothing changed
bad() { # file, expected text
    run_timed "$JOBS/place_bad.lua" -- "$1"
    [ $rc -eq 0 ] || fail "place_bad.lua with $1: exit $rc"
    grep -q "ok unchanged" "$TMP/out" || fail "job changed by a refused placement"
    local line
    line=$(grep "^refused: " "$TMP/out")
    echo "$line" | grep -qF "table 'A'" || fail "error does not name the table: $line"
    echo "$line" | grep -qF "$1" || fail "error does not name the file: $line"
    echo "$line" | grep -qF "$2" || fail "error lacks '$2': $line"
}
{ echo '# crescent placement 1'; echo 'k 2'; echo 'examples 0'; echo 'keys 60'
  for k in $(seq 0 59); do echo "v $k $((k % 2))"; done; } >"$TMP/other.txt"
bad "$TMP/other.txt" "places 60 keys, the table has 50"
sed 's/^k 2/k 3/' "$TMP/p2.txt" >"$TMP/k3.txt"
bad "$TMP/k3.txt" "is for k = 3 machines, the job has 2 nodes"
head -n 30 "$TMP/p2.txt" >"$TMP/short.txt"
bad "$TMP/short.txt" "26 of 50 examples and keys assigned: the file ends early (cut short?)"
head -c 300 "$TMP/p2.txt" >"$TMP/cut.txt"
tail -c 6 "$TMP/cut.txt" | grep -q '^v [0-9]*$' || printf 'v 41' >>"$TMP/cut.txt"
bad "$TMP/cut.txt" "$TMP/cut.txt:"
bad "$TMP/missing.txt" "cannot open"
bad "hashed" "cannot open"
# the script's exit: one line, non-zero, naming the script line
timeout 60 "$CRESCENT_BIN" run "$job" -- "$TMP/k3.txt" 2 run >"$TMP/out" 2>&1 && fail "a bad placement ran"
[ "$(wc -l <"$TMP/out")" -eq 1 ] || { cat "$TMP/out"; fail "not a one-line error"; }
grep -q "place.lua:12: job:table{}: table 'A': placement file $TMP/k3.txt" "$TMP/out" || fail "$(cat "$TMP/out")"
# what other placements refuse, each naming the table
run_timed "$JOBS/place_refuse.lua"
[ $rc -eq 0 ] || fail "place_refuse.lua: exit $rc"
for what in manage distribution prepare_sample local_range; do
    grep "^$what: " "$TMP/out" | grep -q "table '[RH]' has placement hash" || fail "no refusal of $what"
done
grep -q "^ok refusals" "$TMP/out" || fail "place_refuse.lua did not finish"
no_orphans || exit 1
exit 0
