#!/usr/bin/env bash
# Probe defect 10: a test cell whose row id is past W's keys (the train
# file's rows) was dropped from the test RMSE by every node; now it is an
# error naming the test file and line, like a column past H's keys, with
# one node and with two.
set -u
. "${CRESCENT_ROOT:?}/tests/integration/jobs/lib.sh"
BIN=${CRESCENT_BIN:?} tmp=$TMP FAIL_LOG=$TMP/out
cd "$CRESCENT_ROOT"
printf '%s\n' '%%MatrixMarket matrix coordinate real general' '4 3 4' '1 1 1.0' '2 2 2.0' '3 3 1.5' '4 1 0.5' >"$tmp/train.mmc"
printf '%s\n' '%%MatrixMarket matrix coordinate real general' '6 3 2' '1 1 1.0' '6 2 2.0' >"$tmp/row.mmc"
printf '%s\n' '%%MatrixMarket matrix coordinate real general' '4 5 2' '1 1 1.0' '2 5 2.0' >"$tmp/col.mmc"
for nodes in 1 2; do
    timeout 60 "$BIN" run examples/mf.lua --nodes $nodes -- train="$tmp/train.mmc" test="$tmp/row.mmc" \
        epochs=1 dim=2 >"$tmp/out" 2>&1 && fail "row past W's keys, --nodes $nodes: exit 0"
    grep -q "row.mmc:4: row 6 out of range 1..4" "$tmp/out" || fail "row, --nodes $nodes: no file:line error"
    timeout 60 "$BIN" run examples/mf.lua --nodes $nodes -- train="$tmp/train.mmc" test="$tmp/col.mmc" \
        epochs=1 dim=2 >"$tmp/out" 2>&1 && fail "column past H's keys, --nodes $nodes: exit 0"
    grep -q "col.mmc:4: column 5 out of range 1..3" "$tmp/out" || fail "column, --nodes $nodes: no file:line error"
done
echo ok
