-- Integration job: policies that let no one go on. Each epoch under them
-- ends with an error naming the policy (and the clocks) instead of waiting
-- for ever, and the job goes on under bsp. Prints "KIND: SECONDS MESSAGE".
local cr = require "crescent"
local root = os.getenv("CRESCENT_ROOT")
local job = cr.job{ nodes = 2, workers = 2, policy = "bsp" }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(root .. "/tests/models/count.lua", {})
local function try(kind, policy, opts)
    job:policy(root .. "/tests/policies/" .. policy, opts)
    local t0 = os.time()
    local ok, err = pcall(job.epoch, job, { steps = 5 })
    print(("%s: %d %s"):format(kind, os.time() - t0, ok and "ok" or tostring(err):match("[^\n]*")))
end
try("never", "never.lua")
try("upto", "never.lua", { upto = 2 })
try("spin", "spin.lua")
job:policy("bsp")
print("still usable: " .. job:epoch{ steps = 2 }.sum.steps)
job:close()
