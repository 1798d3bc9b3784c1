#!/usr/bin/env bash
# examples/mf.lua on a malformed train file: a one-line "file:line: reason"
# error, non-zero exit, no result line; a missing data directory likewise.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
if "$BIN" run /dev/null 2>&1 | grep -q "not built yet"; then
    echo "crescent run is not built in this tree yet"; exit 77
fi
mkdir -p "$tmp/d"
printf '%%%%MatrixMarket matrix coordinate real general\n10 5 3\n1 1 0.5\n2 2 0.25\n3 9 1.0\n' >"$tmp/d/train.mmc"
printf '%%%%MatrixMarket matrix coordinate real general\n10 5 1\n1 2 0.5\n' >"$tmp/d/test.mmc"
timeout 60 "$BIN" run examples/mf.lua --nodes 2 -- --data "$tmp/d" --epochs 2 >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -ne 0 ] || { echo "FAIL: exit 0 on a bad train file"; exit 1; }
grep -q "$tmp/d/train.mmc:5: column 9 out of range" "$tmp/out" ||
    { echo "FAIL: no 'train.mmc:5: column 9 out of range' message"; exit 1; }
grep -q "^mf result" "$tmp/out" && { echo "FAIL: printed a result after an error"; exit 1; }
timeout 60 "$BIN" run examples/mf.lua -- --data "$tmp/none" >"$tmp/out2" 2>&1
rc=$?
cat "$tmp/out2"
[ $rc -ne 0 ] || { echo "FAIL: exit 0 on a missing data directory"; exit 1; }
grep -q "$tmp/none/train.mmc: cannot open: No such file" "$tmp/out2" || { echo "FAIL: no 'No such file' message"; exit 1; }
echo ok
