-- The C side of manage = "auto" through the job object's rt calls
-- (tests/integration/counts_rt.sh, docs/management.md "Counters"):
-- J:count / J:counts give each node's exact counts of the accesses its
-- workers made, J:manage's 4th argument relocates the listed keys only.
local cr = require "crescent"
local core = require "crescent.core"
local job = cr.job{ nodes = 2, workers = 2, seed = 5 }
local K = 40
local C = job:table{ name = "C", keys = K, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count_reloc.lua", {})
local rt = job.rt
-- tables up to 2^17 keys are counted exactly, larger ones with count-min
-- (a width that is a power of two either way, as sketches take)
for _, t in ipairs { { "B20k", 20000, true }, { "B131k", 131072, true }, { "B200k", 200000, false } } do
    local B = job:table{ name = t[1], keys = t[2], dim = 1, init = cr.init.zeros(), optimizer = cr.optim.add() }
    rt:count(B.id, true)
    for _, b in ipairs(rt:counts(B.id)) do
        local sk = assert(core.sketch.read(b))
        assert(sk:exact() == t[3], ("%s: exact %s, want %s"):format(t[1], tostring(sk:exact()), tostring(t[3])))
    end
    rt:count(B.id, false)
end
local ok, err = pcall(rt.counts, rt, C.id)
assert(not ok and err:find("not counted", 1, true) and err:find("'C'", 1, true), "counts while off: " .. tostring(err))
rt:count(C.id, true)
local function adds_of(r)
    local want = {}
    for k = 1, K do want[k] = 0 end
    for _, w in ipairs(r.results) do for k = 1, K do want[k] = want[k] + w.adds[k] end end
    return want
end
local want = adds_of(job:call("epoch", { steps = 30, batch = 6, round = 1 }))
-- every step pulls its batch twice and pushes it once: 3 accesses per add
local counts = rt:counts(C.id)
assert(#counts == 2 and type(counts[1]) == "string" and type(counts[2]) == "string", "one sketch per node")
local s0, s1 = assert(core.sketch.read(counts[1])), assert(core.sketch.read(counts[2]))
assert(s0:exact() and s1:exact(), "a 40-key table is counted exactly")
for k = 0, K - 1 do
    local got = s0:estimate(k) + s1:estimate(k)
    assert(got == 3 * want[k + 1], ("key %d: counted %d, accessed %d"):format(k, got, 3 * want[k + 1]))
end
local direct = 0
for _, nd in ipairs(job:stats().nodes) do direct = direct + nd.access.direct end
assert(direct == s0:total() + s1:total(), ("direct %d, sketches %d"):format(direct, s0:total() + s1:total()))
-- the per-key relocation set: even keys relocate, the others are classic
local evens = {}
for k = 0, K - 1, 2 do evens[#evens + 1] = k end
rt:manage(C.id, 0, nil, evens)
local want2 = adds_of(job:call("epoch", { steps = 30, batch = 6, round = 2 }))
local skipped, rin = 0, 0
for _, nd in ipairs(job:stats().nodes) do
    skipped, rin = skipped + nd.relocation.skipped, rin + nd.relocation.rows_in
    assert(nd.access["local"] and nd.access.shared and nd.access.sampling == 0, "access counters")
end
assert(skipped > 0 and rin > 0, ("skipped %d, rows in %d"):format(skipped, rin))
rt:manage(C.id, 0, nil, { 0, 2 }) -- most keys leave the set: they come home
for k = 0, K - 1 do
    assert(C:get(k)[1] == want[k + 1] + want2[k + 1], "key " .. k .. " after the switch")
end
-- three techniques in one table: 1 and 3 replicated, the evens relocating, the rest classic
rt:manage(C.id, 0, { 1, 3 }, evens)
local want3 = adds_of(job:call("epoch", { steps = 30, batch = 6, round = 3 }))
local reads = 0
for _, nd in ipairs(job:stats().nodes) do reads = reads + nd.replica.reads end
assert(reads > 0, "replicated keys read from the replicas")
rt:manage(C.id, 0, nil, nil)
for k = 0, K - 1 do
    assert(C:get(k)[1] == want[k + 1] + want2[k + 1] + want3[k + 1], "key " .. k .. " after the mix")
end
-- bad lists, refused naming the table; the previous choice stays
ok, err = pcall(rt.manage, rt, C.id, 0, nil, { 3, 40 })
assert(not ok and err:find("out of range", 1, true) and err:find("'C'", 1, true), tostring(err))
ok, err = pcall(rt.manage, rt, C.id, 0, { 4 }, { 4, 6 })
assert(not ok and err:find("both replicated and relocating", 1, true) and err:find("'C'", 1, true), tostring(err))
ok, err = pcall(rt.manage, rt, C.id, 1, nil, { 3 })
assert(not ok and err:find("mode 0", 1, true), tostring(err))
rt:count(C.id, false)
ok, err = pcall(rt.counts, rt, C.id)
assert(not ok and err:find("not counted", 1, true), tostring(err))
print(("ok counts skipped=%d rows_in=%d"):format(skipped, rin))
job:close()
