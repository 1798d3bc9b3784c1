-- Integration job for crescent run --restarts: E epochs (arg 1, default 6)
-- of the count model, a for loop that does not look at job.epochs; each
-- epoch adds 4 steps x 4 workers to every key of C, so the final value is
-- exact whatever was restarted.
local cr = require "crescent"
local E = tonumber(arg[1]) or 6
local job = cr.job{ nodes = 2, workers = 2, seed = 1, policy = "bsp" }
local C = job:table{ name = "C", keys = 10, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
for _ = 1, E do
    job:epoch{ steps = 4, sleep = job.epochs == 2 and 0.5 or 0.1 } -- epoch 3 takes 2 s: the test kills in it
    job:log{ epoch = job.epochs }
end
print(("done epochs=%d C0=%s expected=%d"):format(job.epochs, C:get(0)[1], E * 16))
job:close()
