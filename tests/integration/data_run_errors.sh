#!/usr/bin/env bash
# A job script reading bad data through cr.data: non-zero exit, and the
# message names the script line and the data file's line; good data loads.
set -u
B=$CRESCENT_BIN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if "$B" run /dev/null 2>&1 | grep -q "not built yet"; then echo "crescent run is not built in this tree yet"; exit 77; fi
fail() { echo "FAIL: $*"; exit 1; }
cd "$tmp"
printf '%%%%MatrixMarket matrix coordinate real general\n4 3 2\n1 1 0.5\n2 4 1\n' >bad.mmc
printf '%%%%MatrixMarket matrix coordinate real general\n4 3 1\n1 1 0.5\n' >good.mmc
printf 'a\tr\tb\n' >train.tsv
printf 'a\tq\tb\n' >test.tsv
cat >job.lua <<'LUA'
local cr = require "crescent"
local g = cr.data.matrix_market("good.mmc")
print("good", g.rows, g.cols, g.nnz)
local which = ...
if which == "mm" then
  local m = cr.data.matrix_market("bad.mmc")
elseif which == "kg" then
  local tr = cr.data.triples("train.tsv")
  local te = cr.data.triples("test.tsv", { entities = tr.entities, relations = tr.relations })
end
print("result")
LUA
timeout 60 "$B" run job.lua mm >out 2>&1; rc=$?
cat out
[ $rc -ne 0 ] || fail "exit 0 on bad data"
grep -q "job.lua:6: bad.mmc:4: column 4 out of range 1..3" out || fail "message does not name job.lua:6 and bad.mmc:4"
grep -q "^result" out && fail "printed a result after the error"
grep -q "^good" out || fail "good data did not load"
timeout 60 "$B" run job.lua kg >out 2>&1; rc=$?
cat out
[ $rc -ne 0 ] || fail "exit 0 on an unknown relation"
grep -q "job.lua:9: test.tsv:1: unknown relation 'q'" out || fail "message does not name job.lua:9 and test.tsv:1"
echo ok
