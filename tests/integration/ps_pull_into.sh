#!/usr/bin/env bash
# T:pull(keys, into) and T:pull_async(keys, into) (docs/models.md): the rows
# go into the given matrix, which is returned (the same object), on 1 node
# and across 2; the keys as a Lua table or Ints, with or without into, in
# one script; a matrix of the wrong shape or value type is refused with a
# clear error naming the table.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
fail() { echo "FAIL: $*"; exit 1; }
cat >"$tmp/job.lua" <<LUA
local cr = require "crescent"
local job = cr.job { nodes = 1, workers = 1, seed = 3 }
local C = job:table { name = "C", keys = 100, dim = 3, dtype = "i32", init = cr.init.constant(7), optimizer = "add" }
local F = job:table { name = "F", keys = 100, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add {} }
C:set(99, { 1, 2, 3 })
job:model("$tmp/model.lua", { bad = arg[1] })
local r = job:epoch {}
assert(r.sum.ok == job.nodes * job.workers, "not every worker checked its pulls")
print("ok: pull into on " .. job.nodes .. " node(s)")
LUA
cat >"$tmp/model.lua" <<'LUA'
local M, C, F, bad = {}, nil, nil, nil
function M.init(ctx, o) C, F, bad = ctx.tables.C, ctx.tables.F, o.bad end
function M.epoch(ctx)
  local keys = cr.core.util.ints { 0, 99, 50 }
  local m = cr.core.util.matrix(3, 3, "i32")
  if bad == "shape" then C:pull(keys, cr.core.util.matrix(2, 3, "i32")) end
  if bad == "dtype" then C:pull_async(keys, cr.core.util.matrix(3, 3)) end
  assert(C:pull(keys, m) == m, "pull returns its into")
  assert(m:get(1, 1) == 7 and m:get(2, 3) == 3 and m:get(3, 2) == 7, "rows of C")
  m:set(1, 1, 0)
  local id = C:pull_async({ 99, 0, 1 }, m)
  assert(C:wait(id) == m and m:get(1, 1) == 1 and m:get(2, 1) == 7, "pull_async into")
  local f = cr.core.util.matrix(1, 3)
  F:push({ 42 }, cr.core.util.matrix { { 1.5, 0, 0 } })
  assert(F:pull({ 42 }, f) == f and f:get(1, 1) >= 1.5, "f32 into")
  assert(C:pull({ 0 }):get(1, 1) == 7, "without into")
  return { ok = 1 }
end
return M
LUA
for n in 1 2; do
    timeout 60 "$BIN" run "$tmp/job.lua" --nodes "$n" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "$n node(s)"; }
    grep "^ok" "$tmp/out" || fail "no ok line on $n node(s)"
done
timeout 60 "$BIN" run "$tmp/job.lua" -- shape >"$tmp/out" 2>&1 && fail "a 2 x 3 into for 3 keys was accepted"
grep -q "pull: 3 keys of table 'C' need a 3 x 3 i32 matrix to go into, got 2 x 3 i32" "$tmp/out" || { cat "$tmp/out"; fail "shape message"; }
timeout 60 "$BIN" run "$tmp/job.lua" -- dtype >"$tmp/out" 2>&1 && fail "an f32 into for an i32 table was accepted"
grep -q "need a 3 x 3 i32 matrix to go into, got 3 x 3 f32" "$tmp/out" || { cat "$tmp/out"; fail "dtype message"; }
echo "ok: refused: wrong shape, wrong value type"
