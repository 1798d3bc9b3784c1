-- Integration job for placements (tests/integration/place.sh).
-- arg: PLACEMENT NODES MODE [PATH]; MODE: run | save | load.
-- run: pushes known values, checks them back from the scheduler (A:get) and
-- from every worker (pull), checks that the workers' local keys partition
-- the keys with the owners the scheduler gives, and prints a digest of
-- table I's initial values (the same under every placement and node count).
-- save: trains a little and saves to PATH; load: loads PATH; both print a
-- digest of every row.
local cr = require "crescent"
local placement, nodes, mode, path = arg[1], tonumber(arg[2]), arg[3], arg[4]
local job = cr.job{ nodes = nodes, workers = 2, seed = 3, policy = "bsp" }
local A = job:table{ name = "A", keys = 50, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add(),
                     placement = placement }
local I = job:table{ name = "I", keys = 50, dim = 2, init = cr.init.uniform(-1, 1),
                     optimizer = cr.optim.adagrad{ lr = 0.1 }, placement = placement }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/place_model.lua", {})
local W = job.nodes * job.workers

local function digest(T)
    local s = 0
    for k = 0, T.keys - 1 do for j, x in ipairs(T:get(k)) do s = s + x * (j + k % 7) end end
    return ("%.6f"):format(s)
end

if mode == "run" then
    print("init " .. digest(I))
    job:epoch{}
    for k = 0, A.keys - 1 do
        local r = A:get(k)
        assert(r[1] == W * k and r[2] == W * (2 * k + 1) and r[3] == W * 7,
            ("key %d = {%s, %s, %s}"):format(k, r[1], r[2], r[3]))
    end
    local rd = job:call("read_all", {})
    for w, res in ipairs(rd.results) do
        for k = 0, A.keys - 1 do
            assert(res.rows[k + 1][1] == W * k, ("worker %d read key %d = %s"):format(w, k, res.rows[k + 1][1]))
        end
    end
    local seen, per = {}, {}
    for _, res in ipairs(job:call("local_keys", {}).results) do
        assert(res.nodes == job.nodes)
        per[res.node] = #res.keys
        for i, k in ipairs(res.keys) do
            assert(A:owner(k) == res.node, ("key %d: owner %d on the scheduler, listed by node %d"):format(k, A:owner(k), res.node))
            assert(res.owners[i] == res.node, ("key %d: worker says owner %d"):format(k, res.owners[i]))
            seen[k] = (seen[k] or 0) + 1
        end
    end
    for k = 0, A.keys - 1 do assert(seen[k] == job.workers, ("key %d listed %s times"):format(k, seen[k])) end
    local counts = {}
    for n = 0, job.nodes - 1 do counts[#counts + 1] = tostring(per[n]) end
    print("per-node " .. table.concat(counts, ","))
    print(("ok placement=%s nodes=%d"):format(A.placement, job.nodes))
elseif mode == "save" then
    job:epoch{}
    I:set(3, { 0.25, -0.5 })
    job:save(path)
    print("digest " .. digest(A) .. " " .. digest(I))
else
    job:load(path)
    print("digest " .. digest(A) .. " " .. digest(I))
end
job:close()
