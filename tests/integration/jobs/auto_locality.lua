-- Integration job (tests/integration/auto_locality.sh): manage = "auto" on
-- the locality model (tests/models/locality.lua). Args: nodes, rounds,
-- shift (1: the own and hot keys change every round, so auto switches
-- techniques at every epoch boundary). Each node's workers use 50 keys
-- homed on the next node (only they use them), hammer 2 hot keys (in
-- every batch), use 100 shared keys now and then (from every node), and
-- spread one access per batch uniformly. After each epoch auto must
-- relocate the own keys, replicate the hot ones, keep the shared and spread
-- ones classic; every key must end equal to its number of adds.
local cr = require "crescent"
-- decide at every epoch boundary, however short the epochs (docs/management.md, "When it decides")
require("crescent.manage_table").DECIDE_SHARE = math.huge
local nodes, rounds, shift = tonumber(arg[1]) or 2, tonumber(arg[2]) or 2, arg[3] == "1"
local job = cr.job{ nodes = nodes, workers = 2, seed = 3 }
local K = 2000
local C = job:table{ name = "C", keys = K, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add(),
                     manage = "auto" }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/locality.lua", {})
assert(C.choice == "classic", "nothing expected, nothing counted: classic")

-- The keys of round r: node i's own keys are 50 keys homed on node i + 1.
local function plan(r)
    local own, hot, off = {}, {}, shift and (r - 1) * 25 or 0
    for i = 0, nodes - 1 do
        local home = (i + 1) % nodes
        local first = nil
        for k = 0, K - 1 do if C:owner(k) == home then first = k; break end end
        own[i + 1] = {}
        for j = 0, 49 do own[i + 1][j + 1] = first + 100 + off + j end
    end
    -- the hot keys: homed on node 0 and on node 1 (not among the own keys)
    hot[1], hot[2] = 20 + (shift and r or 0), K - 20 - (shift and r or 0)
    local shared = {}
    for k = 600, 649 do shared[#shared + 1] = k; shared[#shared + 1] = k + 1000 end
    return own, hot, shared
end

local want = {}
for k = 1, K do want[k] = 0 end
-- keys pulled or pushed through another node, all nodes (access.remote
-- counts only tables that are not plain classic: epoch 1's is)
local function crossed()
    local n = 0
    for _, nd in ipairs(job:stats().nodes) do n = n + nd.keys_remote end
    return n
end
local remote, bytes, ownset = {}, {}, {}
for r = 1, rounds do
    local own, hot, shared = plan(r)
    local c0 = crossed()
    local res = job:epoch{ own = own, hot = hot, shared = shared, round = r, steps = 150, n_uni = 1, n_shared = 4 }
    remote[r] = crossed() - c0
    for _, w in ipairs(res.results) do for k = 1, K do want[k] = want[k] + w.adds[k] end end
    bytes[r] = res.bytes_remote
    local c = C.choice
    local rel, rep = {}, {}
    if type(c) == "table" then
        for _, k in ipairs(c.replicate or {}) do rep[k] = true end
        if type(c.relocate) == "table" then for _, k in ipairs(c.relocate) do rel[k] = true end end
    end
    -- the choice after epoch r is made from epoch r's accesses
    local n_own, n_rel_own = 0, 0
    for i = 1, nodes do for _, k in ipairs(own[i]) do n_own = n_own + 1; if rel[k] then n_rel_own = n_rel_own + 1 end end end
    local r_, l_, c_ = C:census()
    print(("round %d: remote=%d bytes_remote=%d census repl=%d reloc=%d classic=%d own relocated %d/%d why=%s"):format(
        r, remote[r], res.bytes_remote, r_, l_, c_, n_rel_own, n_own, tostring(C.manage_why)))
    assert(rep[hot[1]] and rep[hot[2]], "round " .. r .. ": the hot keys are replicated")
    assert(r_ == 2, ("round %d: %d keys replicated, expected the 2 hot ones"):format(r, r_))
    assert(n_rel_own >= 0.9 * n_own, ("round %d: only %d of %d own keys relocated"):format(r, n_rel_own, n_own))
    -- nothing else is relocated: not the shared keys, not the spread ones
    -- (own keys of earlier rounds, no longer used, may stay relocated: auto
    -- takes a key out of the set only when the counts show it shared)
    for i = 1, nodes do for _, k in ipairs(own[i]) do ownset[k] = true end end
    for k in pairs(rel) do assert(ownset[k], ("round %d: key %d relocated, not an own key"):format(r, k)) end
    assert(c_ == K - r_ - l_)
    if r == 1 then -- a checkpoint round trip of the three-way table, keys away and replicated
        local path = os.tmpname()
        job:save(path)
        job:load(path)
        os.remove(path)
        assert(select(2, C:census()) == l_, "the choice survives a checkpoint round trip")
    end
end
if not shift then
    assert(remote[2] * 3 < remote[1], ("remote accesses: epoch 1 %d, epoch 2 %d: expected far fewer"):format(
        remote[1], remote[2]))
end
local moved, skipped = 0, 0
for _, nd in ipairs(job:stats().nodes) do
    moved, skipped = moved + nd.relocation.rows_in, skipped + nd.relocation.skipped
end
assert(moved > 0 and skipped > 0, ("rows moved %d, localizes skipped %d"):format(moved, skipped))
-- every key equals its adds, read through the workers (replicated keys
-- may lag a sync round: checked through the job only) and the job
local rep_final = {}
if type(C.choice) == "table" then for _, k in ipairs(C.choice.replicate or {}) do rep_final[k] = true end end
local rd = job:call("read_all", {})
local total = 0
C:get(0) -- brings the moved keys home; then the rows in runs (one replica settle each)
C:each_run(1000, function(node, lo, n)
    local v = job:_guard(job.rt.get_rows, C.id, node, lo, n, C.dim, C.sdim)
    for i = 1, n do
        local k = lo + i - 1
        assert(v:get(i, 1) == want[k + 1] and v:get(i, 2) == want[k + 1],
               ("key %d = %s, expected %d"):format(k, tostring(v:get(i, 1)), want[k + 1]))
        total = total + want[k + 1]
    end
end)
for _, w in ipairs(rd.results) do
    for k = 1, K do
        if not rep_final[k - 1] then
            assert(w.values[k] == want[k], ("worker read key %d = %s, expected %d"):format(k - 1, tostring(w.values[k]), want[k]))
        end
    end
end
print(("ok auto nodes=%d rounds=%d adds=%d moved=%d skipped=%d remote=%s"):format(nodes, rounds, total, moved,
    skipped, table.concat(remote, ",")))
job:close()
