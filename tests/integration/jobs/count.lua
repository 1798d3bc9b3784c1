-- Integration job: table C (add rule) incremented by every worker; checks
-- the final values and prints stats. Args: steps (default 5).
local cr = require "crescent"
local steps = tonumber(arg[1]) or 5
local job = cr.job{ nodes = 2, workers = 2, seed = 1, policy = "bsp" }
local C = job:table{ name = "C", keys = 10, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
local r = job:epoch{ steps = steps }
local W = job.nodes * job.workers
assert(r.sum.steps == W * steps, "every worker ran")
for k = 0, 9 do
    local row = C:get(k)
    assert(row[1] == W * steps and row[3] == W * steps, ("key %d = %s, expected %d"):format(k, row[1], W * steps))
end
local st = job:stats()
job:log{ epoch = 1, steps = r.sum.steps, messages = r.messages, max_gap = st.max_gap, note = "a \"quoted\"\tline" }
print(("ok nodes=%d workers=%d messages=%d items=%d"):format(job.nodes, W, r.messages, r.items))
job:close()
