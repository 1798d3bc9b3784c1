-- Integration job: worker 0 errors while the others spin in a pure Lua
-- loop that never reaches clock, barrier, progress or sleep.
local cr = require "crescent"
local job = cr.job{ nodes = tonumber(arg[1]) or 2, workers = 2 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/hostile.lua", {})
job:call("spin", {})
print("not reached")
