-- Every shipped sampling scheme through the parameter server, switched from
-- the job script while the job runs (job:sampling between calls): rows
-- match keys, marginals match the weights (chi-square on whole pools),
-- stats add up, local keys only at level 4, and a handle prepared under
-- one scheme is served as prepared after a switch. Args: nodes workers.
package.path = os.getenv("CRESCENT_ROOT") .. "/tests/integration/jobs/?.lua;" .. package.path
local L = require "sampling_lib"
local nodes, workers = tonumber(arg[1]) or 1, tonumber(arg[2]) or 2
local K = 40
local job = L.start(nodes, workers, K)
local w = {}
for k = 0, K - 1 do w[k + 1] = (k % 9 == 4) and 0 or (1 + k % 5) end
job:distribution{ name = "neg", table = "E", kind = "weights", weights = w }
assert(job:stats().scheme == "conform", "default scheme")

local G, U = 20, 3
local N = G * U * 10 -- per handle: whole pools, so reuse counts come out exact

local function delta(a, b)
    local d = {}
    for k, v in pairs(b) do d[k] = v - a[k] end
    return d
end

-- Draw with the current scheme; check rows, marginals and counters.
local function draw(reuse)
    local before = job:stats().sampling
    local r = job:call("draw", { dist = "neg", n = N, m = 47, handles = 2 }).results
    local d = delta(before, job:stats().sampling)
    local counts, tot = L.merge(r, K)
    assert(tot.bad == 0, ("%s: %d rows did not match their key"):format(job.sampling_name, tot.bad))
    assert(d.served_local + d.served_pooled == tot.pulled, "every sample served locally or from a fetch")
    assert(tot.remote == d.served_pooled, "samples of other nodes' keys are the ones served from fetches")
    assert(d.postponed <= d.served_pooled, "only fetched samples are postponed")
    for i = 1, K do
        assert(counts[i] % reuse == 0, ("key %d drawn %d times: not a multiple of reuse %d"):format(i - 1, counts[i], reuse))
        counts[i] = counts[i] // reuse
    end
    return counts, tot, d, r
end

local function chi2_ok(counts, weights, what)
    local x, crit = L.chi2(counts, weights)
    print(("%s: chi2 = %.1f (critical %.1f)"):format(what, x, crit))
    assert(x < crit, what .. ": marginals do not match the distribution")
end

-- conform: every sample its own draw
job:sampling("conform")
local counts, tot, d = draw(1)
chi2_ok(counts, w, "conform")
assert(d.drawn == tot.pulled and d.reused == 0 and d.postponed == 0, "conform: one draw per sample, no reuse")
if nodes > 1 then assert(d.remote > 0 and d.remote == d.served_pooled, "conform: remote rows fetched") end

-- bounded: pools of G reused U times (set from a {name, opts} pair)
job:sampling("bounded", { pool = G, reuse = U })
assert(job.sampling_name == "bounded:pool=20,reuse=3", job.sampling_name)
counts, tot, d = draw(U)
chi2_ok(counts, w, "bounded")
assert(d.reused == tot.pulled - tot.pulled // U, "bounded: all but the first pass are reuses")
assert(d.drawn < tot.pulled and d.postponed == 0, "bounded: fewer draws than samples, no postponing")

-- longterm: as bounded, plus postponing
job:sampling("longterm:pool=20,reuse=3")
counts, tot, d = draw(U)
chi2_ok(counts, w, "longterm")
assert(d.reused == tot.pulled - tot.pulled // U, "longterm: reuse as bounded")
print(("longterm: postponed %d of %d fetched samples"):format(d.postponed, d.served_pooled))

-- a handle prepared under conform, pulled after a switch to local: served
-- as prepared (keys of any node); new handles are local only
job:sampling("conform")
job:call("keep", { dist = "neg", n = 400 })
job:sampling("local")
local fin = job:call("finish").results
local fbad, fremote = 0, 0
for _, f in ipairs(fin) do fbad, fremote = fbad + f.bad, fremote + f.remote end
assert(fbad == 0, "kept handle: rows match keys")
if nodes > 1 then assert(fremote > 0, "kept handle: prepared under conform, it still has remote keys") end

-- local: keys of this node only, from the weights restricted to them
local before = job:stats().sampling
local r = job:call("draw", { dist = "neg", n = N, m = 47, handles = 2, local_only = true }).results
d = delta(before, job:stats().sampling)
local _, ltot = L.merge(r, K)
assert(ltot.bad == 0 and ltot.remote == 0, "local: local keys only")
assert(d.remote == 0 and d.served_pooled == 0 and d.served_local == ltot.pulled, "local: nothing fetched")
for node = 0, nodes - 1 do
    local mine = {}
    for _, x in ipairs(r) do if x.node == node then mine[#mine + 1] = x end end
    local c = L.merge(mine, K)
    local lo, hi = node * math.ceil(K / nodes), math.min((node + 1) * math.ceil(K / nodes), K)
    local wn = {}
    for k = 0, K - 1 do wn[k + 1] = (k >= lo and k < hi) and w[k + 1] or 0 end
    chi2_ok(c, wn, ("local node %d"):format(node))
end

local st = job:stats()
assert(st.scheme == "local", "stats name the scheme")
for _, k in ipairs { "drawn", "served_local" } do assert(st.sampling[k] > 0, k .. " counted") end
local per = 0
for _, n in ipairs(st.nodes) do per = per + n.sampling.drawn end
assert(per == st.sampling.drawn, "node counters add up to the total")
print(("ok sampling schemes nodes=%d workers=%d"):format(nodes, workers))
job:close()
