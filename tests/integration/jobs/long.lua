-- Integration job: a long epoch (about arg[1] seconds), for kill tests.
local cr = require "crescent"
local secs = tonumber(arg[1]) or 30
local job = cr.job{ nodes = 2, workers = 1 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
io.stderr:write("job running\n")
job:epoch{ steps = math.floor(secs / 0.05), sleep = 0.05 }
print("finished")
