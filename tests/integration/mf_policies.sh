#!/usr/bin/env bash
# The MF model under consistency policies: 2 nodes x 2 workers, each worker
# ticks `clocks` times per epoch. Under bsp no worker ever runs ahead (max gap
# 0); the job then switches to ssp (staleness 1) mid-run, keeps training, and
# the test RMSE keeps falling. A worker with fewer batches must not deadlock
# the others at an epoch's end (uneven batch counts are the normal case here).
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
"$BIN" data zipf-mf --rows 2000 --cols 500 --cells 100000 --rank 8 --noise 0.1 --test-fraction 0.1 \
    --seed 5 --out "$tmp/d" >/dev/null || { echo "data generation failed"; exit 1; }
cat >"$tmp/job.lua" <<LUA
local cr = require "crescent"
local job = cr.job { nodes = 2, workers = 2, seed = 1, policy = "bsp" }
local W = job:table { name = "W", keys = 2000, dim = 8, init = cr.init.normal(0, 0.1),
                      optimizer = cr.optim.sgd { lr = 0.02 } }
local H = job:table { name = "H", keys = 500, dim = 8, init = cr.init.normal(0, 0.1),
                      optimizer = cr.optim.sgd { lr = 0.02 } }
job:model("mf", { train = "$tmp/d/train.mmc", test = "$tmp/d/test.mmc", lambda = 0.02,
                  batch = 4000, clocks = 6 })
local function rmse()
  local r = job:call("evaluate", { set = "test" })
  return math.sqrt(r.sum.sse / r.sum.n)
end
local r0 = rmse()
for e = 1, 3 do job:epoch { lr = 0.02, epoch = e } end
local s = job:stats()
for _, w in ipairs(s.workers) do
  assert(w.clock == 18, ("worker %d: clock %d, expected 18"):format(w.worker, w.clock))
end
assert(s.max_gap == 0, "bsp: max gap " .. s.max_gap)
local r1 = rmse()
job:policy("ssp", { staleness = 1 })
for e = 4, 6 do job:epoch { lr = 0.02, epoch = e } end
s = job:stats()
assert(s.policy == "ssp", "policy is " .. tostring(s.policy))
assert(s.max_gap <= 1, "ssp(1): max gap " .. s.max_gap)
local r2 = rmse()
print(("rmse %.4f -> %.4f (bsp) -> %.4f (ssp)"):format(r0, r1, r2))
assert(r1 < r0 and r2 < r1, "rmse did not fall")
LUA
timeout 120 "$BIN" run "$tmp/job.lua" || { echo "FAIL: job exited $?"; exit 1; }
