-- Integration job: a model pushes NaN rows (tests/models/nan_push.lua); the
-- job must fail with the owner's refusal, not hang.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 1, seed = 1 }
job:table{ name = "C", keys = 10, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/nan_push.lua", {})
job:epoch{}
print("finished")
