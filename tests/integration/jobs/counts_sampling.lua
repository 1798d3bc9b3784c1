-- Accesses by cause (tests/integration/counts_rt.sh): keys handed out by
-- the sampler count as "sampling", once per sample, in the node counters
-- and in the sketches; the sampler's own fetches of remote rows are not
-- counted as the workers' direct accesses. Under conform and bounded pools,
-- and conform on a relocating table (local samples read through the router).
package.path = os.getenv("CRESCENT_ROOT") .. "/tests/integration/jobs/?.lua;" .. package.path
local core = require "crescent.core"
local L = require "sampling_lib"
local K = 40
local job = L.start(2, 2, K)
local w = {}
for k = 0, K - 1 do w[k + 1] = 1 + k % 5 end
job:distribution{ name = "neg", table = "E", kind = "weights", weights = w }
local rt, E = job.rt, job.tables.E

local function totals()
    local d, s = 0, 0
    for _, nd in ipairs(job:stats().nodes) do d, s = d + nd.access.direct, s + nd.access.sampling end
    return d, s
end

for _, scheme in ipairs { { "conform" }, { "bounded", { pool = 20, reuse = 3 } }, { "conform", manage = "relocate" } } do
    job:sampling(scheme[1], scheme[2])
    if scheme.manage then E:manage(scheme.manage) end
    rt:count(E.id, true)
    local d0, s0 = totals()
    local counts, tot = L.merge(job:call("draw", { dist = "neg", n = 600, m = 47, handles = 2 }).results, K)
    local d1, s1 = totals()
    assert(d1 == d0, ("%s: %d direct accesses counted for sampling"):format(scheme[1], d1 - d0))
    assert(s1 - s0 == tot.pulled, ("%s: sampling %d, pulled %d"):format(scheme[1], s1 - s0, tot.pulled))
    local sk = rt:counts(E.id)
    local a, b = assert(core.sketch.read(sk[1])), assert(core.sketch.read(sk[2]))
    for k = 0, K - 1 do
        assert(a:estimate(k) + b:estimate(k) == counts[k + 1],
            ("%s: key %d counted %d, drawn %d"):format(scheme[1], k, a:estimate(k) + b:estimate(k), counts[k + 1]))
    end
    assert(tot.remote > 0, "some samples were of the other node's keys")
end
print("ok counts sampling")
job:close()
