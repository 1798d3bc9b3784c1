-- Integration job: two nodes, short join timeout (for authentication tests).
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 1, join_timeout = 4 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
local r = job:epoch{ steps = 2 }
print(("ok joined steps=%d"):format(r.sum.steps))
