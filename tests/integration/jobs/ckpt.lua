-- Integration job: arg[1] = save PATH | load PATH | corrupt-load PATH.
-- save: train a little with adagrad, write a checkpoint, print a digest.
-- load: fresh job (any node count), load, print the same digest.
local cr = require "crescent"
local mode, path = arg[1], arg[2]
local job = cr.job{ nodes = 2, workers = 1, seed = 7 }
local A = job:table{ name = "A", keys = 1000, dim = 4, init = cr.init.normal(0, 0.1),
                     optimizer = cr.optim.adagrad{ lr = 0.1, eps = 1e-6, init = 0.1 } }
local B = job:table{ name = "B", keys = 37, dim = 2, init = cr.init.uniform(-1, 1), optimizer = cr.optim.sgd{ lr = 0.5 } }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/ckpt_model.lua", {})
local function digest()
    local s = 0
    for _, k in ipairs{ 0, 1, 499, 500, 999 } do for j, x in ipairs(A:get(k)) do s = s + x * j end end
    for _, k in ipairs{ 0, 18, 36 } do for j, x in ipairs(B:get(k)) do s = s + x * j end end
    return ("%.6f"):format(s)
end
if mode == "save" then
    job:epoch{ steps = 3 }
    job:save(path)
    print("digest " .. digest())
    -- one more epoch: the adagrad state must continue identically after a load
    job:epoch{ steps = 1 }
    print("after " .. digest())
else
    local before = digest()
    job:load(path)
    print("digest " .. digest())
    job:epoch{ steps = 1 }
    print("after " .. digest())
    assert(before ~= digest(), "load changed nothing")
end
job:close()
