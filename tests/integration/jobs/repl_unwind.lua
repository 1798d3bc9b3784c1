-- Integration job for the REPL: the hostile model; the REPL drives it.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 2 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/hostile.lua", { memory_mb = 64 })
