-- Integration job for ps_data_probe.sh: table C (add rule) incremented by
-- every worker, epoch after epoch, until the file arg[1] exists (the probe is
-- done), so that the probe hits a running job; then the values are checked
-- exactly as count.lua does. Args: FLAG_FILE.
local cr = require "crescent"
local flag = assert(arg[1], "usage: probe.lua FLAG_FILE")
local job = cr.job{ nodes = 2, workers = 2, seed = 1, policy = "bsp" }
local C = job:table{ name = "C", keys = 10, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
print("job running")
io.stdout:flush()
local W, steps = job.nodes * job.workers, 0
local function done()
    local f = io.open(flag)
    if f then f:close() end
    return f ~= nil
end
repeat
    local r = job:epoch{ steps = 2, sleep = 0.02 }
    assert(r.sum.steps == W * 2, "every worker ran")
    steps = steps + 2
until done() or steps >= 3000
for k = 0, 9 do
    local row = C:get(k)
    for j = 1, 3 do
        assert(row[j] == W * steps, ("key %d = %s, expected %d"):format(k, tostring(row[j]), W * steps))
    end
end
print(("ok probe job nodes=%d workers=%d steps=%d"):format(job.nodes, W, steps))
job:close()
