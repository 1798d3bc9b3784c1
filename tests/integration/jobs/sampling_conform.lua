-- Sampling at level 1 (the default scheme) through the parameter server:
-- rows match keys, weighted and uniform marginals pass a chi-square test
-- (and a wrong distribution fails it), async pulls, remote fetches on 2
-- nodes. Args: nodes workers.
package.path = os.getenv("CRESCENT_ROOT") .. "/tests/integration/jobs/?.lua;" .. package.path
local L = require "sampling_lib"
local nodes, workers = tonumber(arg[1]) or 1, tonumber(arg[2]) or 2
local K = 40
local job = L.start(nodes, workers, K)
local w = {}
for k = 0, K - 1 do w[k + 1] = (k % 7 == 3) and 0 or (k + 1) ^ 0.75 end
job:distribution{ name = "neg", table = "E", kind = "weights", weights = w }
job:distribution{ name = "uni", table = "E", kind = "uniform" }

local function run(dist, async, n, m)
    local r = job:call("draw", { dist = dist, n = n, m = m, handles = 4, async = async }).results
    local counts, tot = L.merge(r, K)
    assert(tot.bad == 0, ("%d rows did not match their key"):format(tot.bad))
    assert(tot.pulled == 4 * n * nodes * workers, "every sample pulled")
    return counts, tot
end

local counts, tot = run("neg", false, 2000, 37)
local x, crit = L.chi2(counts, w)
print(("weights: chi2 = %.1f (critical %.1f) remote = %d"):format(x, crit, tot.remote))
assert(x < crit, "weighted marginals do not match the weights")
local uw = {}
for i = 1, K do uw[i] = 1 end
local xu = L.chi2(counts, uw)
assert(xu > crit, ("the test cannot tell the weights from uniform (chi2 %.1f)"):format(xu))

counts, tot = run("uni", true, 1500, 100)
x, crit = L.chi2(counts, uw)
print(("uniform async: chi2 = %.1f (critical %.1f) remote = %d"):format(x, crit, tot.remote))
assert(x < crit, "uniform marginals do not look uniform")
if nodes > 1 then assert(tot.remote > 0, "2 nodes: some samples must be remote") end
print(("ok sampling conform nodes=%d workers=%d"):format(nodes, workers))
job:close()
