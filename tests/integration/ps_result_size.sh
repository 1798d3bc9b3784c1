#!/usr/bin/env bash
# A model result of more than 2,000,000 values (here 1,200,000 keys) is
# refused at the worker with a clear error instead of being merged for
# seconds to minutes in the scheduler; the job stays usable, and a result
# just under the bound still arrives whole.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cat >"$TMP/model.lua" <<'LUA'
local M = {}
function M.init() end
function M.big(ctx, args)
    local t = {}
    for i = 1, args.n do t[i * 7] = i end
    return t
end
return M
LUA
cat >"$TMP/job.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 1, workers = 1 }
job:model(arg[1], {})
local ok, err = pcall(function() job:call("big", { n = 1200000 }) end)
print("big:", ok, err)
local r = job:call("big", { n = 999999 })
local n = 0
for _ in pairs(r.results[1]) do n = n + 1 end
print("under the bound:", n)
LUA
timeout 120 "$CRESCENT_BIN" run "$TMP/job.lua" -- "$TMP/model.lua" >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "run"; }
cat "$TMP/out"
grep -q "^big:	false	.*worker 0 (node 0): result too large: more than 2000000 values" "$TMP/out" || fail "a 1.2M-key result not refused"
grep -qx "under the bound:	999999" "$TMP/out" || fail "a result under the bound did not arrive whole"
no_orphans || exit 1
