-- Integration job for the REPL: a model that reports no progress (it only
-- sleeps and clocks); the REPL drives it.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 2 }
job:table{ name = "C", keys = 4, dim = 1 }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/quiet.lua", {})
