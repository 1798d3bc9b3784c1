-- Integration job: worker 0 fails at once while worker 1 spins in pure Lua,
-- never reaching a clock, barrier, progress or sleep (probe defect 4).
local cr = require "crescent"
local nodes = tonumber(arg[1]) or 2
local job = cr.job{ nodes = nodes, workers = 2 // nodes }
job:table{ name = "C", keys = 4, dim = 1 }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/quiet.lua", {})
job:epoch{ fail = 0, spin = 1 }
print("not reached")
