-- Integration job (tests/integration/reloc_count.sh): the counting model
-- under relocation. Args: nodes, rounds. Every key must end equal to the
-- number of adds to it, read through the workers (pulls of moved keys) and
-- through the job (C:get brings keys home), after a checkpoint round trip,
-- and after switching techniques between rounds.
local cr = require "crescent"
local nodes, rounds = tonumber(arg[1]) or 2, tonumber(arg[2]) or 3
local dir = arg[3] or os.getenv("TMPDIR") or "/tmp"
local job = cr.job{ nodes = nodes, workers = 2, seed = 3 }
local K = 40
local C = job:table{ name = "C", keys = K, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add(),
                     manage = "relocate" }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count_reloc.lua", {})
job:distribution{ name = "u", table = "C", kind = "uniform" }
local want = {}
for k = 1, K do want[k] = 0 end
local moved = 0
for round = 1, rounds do
    local r = job:call("epoch", { steps = 60, batch = 6, round = round })
    for _, w in ipairs(r.results) do
        for k = 1, K do want[k] = want[k] + w.adds[k] end
    end
    local st = job:stats()
    for _, nd in ipairs(st.nodes) do moved = moved + nd.relocation.rows_in end
    -- while keys are away: the workers read every key (forwarded pulls);
    -- replicated keys (round 3) lag by up to a sync round: checked below
    local rd = job:call("read_all", {})
    for _, w in ipairs(rd.results) do
        for k = round == 3 and 5 or 1, K do
            assert(w.values[k] == want[k], ("round %d: worker read key %d = %s, expected %d"):format(
                round, k - 1, tostring(w.values[k]), want[k]))
        end
    end
    -- the job sets a row that may be away (round 1: relocated; round 3: replicated)
    local sk = round == 3 and 1 or 5
    C:set(sk, { want[sk + 1] + 100, want[sk + 1] + 100 })
    want[sk + 1] = want[sk + 1] + 100
    -- sampling fetches find moved keys too
    local sp = job:call("sample_all", { want = want, from = round == 3 and 4 or 0 })
    assert(sp.sum.sampled > 0, "samples were checked")
    if round == 1 then -- checkpoint with moved keys, then load it back
        local path = dir .. "/reloc_count.ckpt"
        job:save(path)
        job:load(path)
        C:manage("classic") -- between rounds: everything home, then relocation again
        C:manage("relocate")
    elseif round == 2 then -- hot keys replicated, the rest relocated, then a checkpoint round trip
        C:manage{ replicate = { 0, 1, 2, 3 }, relocate = "rest" }
        job:save(dir .. "/reloc_count2.ckpt")
        job:load(dir .. "/reloc_count2.ckpt")
    end
end
assert(nodes == 1 or moved > 0, "keys were relocated")
for k = 0, K - 1 do
    local row = C:get(k)
    assert(row[1] == want[k + 1] and row[2] == want[k + 1],
           ("key %d = %s, expected %d"):format(k, tostring(row[1]), want[k + 1]))
end
local total = 0
for k = 1, K do total = total + want[k] end
local st = job:stats()
local fwd, shared, msgs = 0, 0, 0
for _, nd in ipairs(st.nodes) do
    fwd, shared, msgs = fwd + nd.access.forwarded, shared + nd.access.shared, msgs + nd.relocation.messages
end
print(("ok nodes=%d adds=%d moved=%d forwarded=%d shared=%d reloc_messages=%d"):format(
    nodes, total, moved, fwd, shared, msgs))
job:close()
