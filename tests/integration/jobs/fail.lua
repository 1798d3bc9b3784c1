-- Integration job: worker args.fail raises a runtime error inside the model.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 2 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
job:epoch{ steps = 2, fail = tonumber(arg[1]) or 3 }
print("not reached")
