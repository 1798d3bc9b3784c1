#!/usr/bin/env bash
# Checkpoints of i32 tables (docs/checkpoints.md): counts beyond float32's
# exact range (2^24 + odd, -2^30 - k, 2^31 - 1 - k) round-trip exactly into
# 1, 2 and 3 nodes; the file records the dtype (crescent ckpt shows it and
# integer ranges); loading into a table of the other dtype is refused,
# naming the file and the table.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
run() { timeout 60 "$CRESCENT_BIN" run "$JOBS/ckpt_i32.lua" "$@" 2>"$TMP/err"; }
run --nodes 2 -- save "$TMP/c.ckpt" >"$TMP/save" || { cat "$TMP/err"; fail "save"; }
grep -q "^1	16777219 -1073741825 2147483646$" "$TMP/save" || { cat "$TMP/save"; fail "C:get after C:set"; }
for nodes in 1 2 3; do
    run --nodes $nodes -- load "$TMP/c.ckpt" >"$TMP/load$nodes" || { cat "$TMP/err"; fail "load into $nodes nodes"; }
    diff "$TMP/save" "$TMP/load$nodes" || fail "load into $nodes nodes differs"
done
"$CRESCENT_BIN" ckpt "$TMP/c.ckpt" >"$TMP/desc" 2>&1 || { cat "$TMP/desc"; fail "crescent ckpt"; }
grep -q "^table C: 50 keys x dim 3, optimizer add, dtype i32$" "$TMP/desc" || { cat "$TMP/desc"; fail "dtype not shown"; }
grep -q "^  values: min -1073741873, max 2147483647, mean " "$TMP/desc" || { cat "$TMP/desc"; fail "integer range"; }
grep -q "^table F: 7 keys x dim 2, optimizer sgd$" "$TMP/desc" || { cat "$TMP/desc"; fail "f32 table line"; }
run -- f32 "$TMP/c.ckpt" >"$TMP/out" && fail "i32 counts loaded into an f32 table"
grep -q "c.ckpt: table 'C' holds i32 values, the job's is dtype f32" "$TMP/out" || { cat "$TMP/out" "$TMP/err"; fail "f32 message"; }
run -- i32 "$TMP/c.ckpt" >"$TMP/out" && fail "f32 values loaded into an i32 table"
grep -q "c.ckpt: table 'F' holds f32 values, the job's is dtype i32" "$TMP/out" || { cat "$TMP/out" "$TMP/err"; fail "i32 message"; }
no_orphans || exit 1
exit 0
