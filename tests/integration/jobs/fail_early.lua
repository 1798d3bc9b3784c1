-- Integration job: worker 1 fails at once while the others have a long
-- epoch ahead (steps x sleep seconds); the error must end the job quickly.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 2 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
job:epoch{ steps = tonumber(arg[1]) or 400, sleep = 0.05, fail_early = 1 }
print("not reached")
