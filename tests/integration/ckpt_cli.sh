#!/usr/bin/env bash
# crescent ckpt: describes a checkpoint written by job:save (metadata, tables,
# value statistics), exits 1 on NaN values and on damaged files (with the
# file named), 2 on usage errors.
set -u
BIN=${CRESCENT_BIN:-./crescent} ROOT=${CRESCENT_ROOT:-.}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- out"; cat "$tmp/out"; echo "--- err"; cat "$tmp/err"; exit 1; }
cat >"$tmp/job.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 2, seed = 2 }
job:table{ name = "W", keys = 5000, dim = 4, init = cr.init.uniform(-1, 1),
           optimizer = cr.optim.adagrad{ lr = 0.1, init = 0.5 } }
job:table{ name = "b", keys = 3, dim = 1, optimizer = cr.optim.add() }
job.b:set(2, { 7 })
job:save(arg[1])
job.b:set(1, { 0 / 0 })
job:save(arg[2])
LUA
(cd "$tmp" && "$BIN" run job.lua ok.ckpt nan.ckpt) >"$tmp/out" 2>"$tmp/err" || fail "job failed"

"$BIN" ckpt "$tmp/ok.ckpt" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || fail "ckpt ok.ckpt: exit $rc"
grep -q "^meta crescent.nodes = 2$" "$tmp/out" || fail "metadata not listed"
grep -qx "resume: epoch 0, seed 2, policy bsp, curve 0 epochs" "$tmp/out" || fail "resume summary"
grep -q "^table W: 5000 keys x dim 4, optimizer adagrad (4 state floats per row)$" "$tmp/out" || fail "table W"
grep -qE "^  values: min -0\.99[0-9]*, max 0\.99[0-9]*, mean " "$tmp/out" || fail "W value range"
grep -q "^  state: min 0.5, max 0.5, mean 0.5$" "$tmp/out" || fail "adagrad state"
grep -q "^table b: 3 keys x dim 1, optimizer add$" "$tmp/out" || fail "table b"
grep -q "^  values: min 0, max 7, mean 2.33333$" "$tmp/out" || fail "b values"

# a version 1 file (written before the resume state existed): tables only
"$BIN" run "$ROOT/tests/integration/jobs/ckpt_version.lua" "$tmp/ok.ckpt" "$tmp/v1.ckpt" 1 || fail "patch version"
"$BIN" ckpt "$tmp/v1.ckpt" >"$tmp/out" 2>"$tmp/err" || fail "ckpt v1.ckpt"
grep -q "v1.ckpt: crescent checkpoint version 1, " "$tmp/out" || fail "v1: version"
grep -qx "resume: none (tables only: written by an older crescent, or not by job:save)" "$tmp/out" || fail "v1: resume"

"$BIN" ckpt "$tmp/nan.ckpt" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "NaN checkpoint: exit $rc, expected 1"
grep -q "1 NOT FINITE" "$tmp/out" || fail "NaN not counted"
grep -q "nan.ckpt: some values are not finite" "$tmp/err" || fail "NaN not reported"

head -c 5000 "$tmp/ok.ckpt" >"$tmp/cut.ckpt"
"$BIN" ckpt "$tmp/cut.ckpt" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "truncated: exit $rc"
grep -qx "crescent ckpt: $tmp/cut.ckpt: truncated" "$tmp/err" || fail "truncated: message"
printf 'W 1 2 3\n' >"$tmp/text.ckpt"
"$BIN" ckpt "$tmp/text.ckpt" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "text.ckpt: not a crescent checkpoint" "$tmp/err" || fail "not a checkpoint"
"$BIN" ckpt >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "usage: crescent ckpt" "$tmp/err" || fail "usage: exit $rc"
echo "ckpt cli ok"
