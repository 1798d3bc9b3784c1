-- Integration job (tests/integration/repl_sample.sh): sampled rows of
-- replicated keys read the local replica (read-your-writes). Args: nodes,
-- manage (replicate | hot: 4 keys replicated, the rest relocated).
local cr = require "crescent"
local nodes, manage = tonumber(arg[1]) or 2, arg[2] or "replicate"
local job = cr.job{ nodes = nodes, workers = 1, seed = 5 }
local K = 8
local spec = manage == "hot" and { replicate = { 0, 1, 4, 5 }, relocate = "rest" } or manage
local C = job:table{ name = "C", keys = K, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add(), manage = spec }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/repl_sample.lua", {})
job:distribution{ name = "u", table = "C", kind = "uniform" }
local n = 0
for _, async in ipairs { false, true } do
    local r = job:call("epoch", { steps = 200, samples = 8, async = async })
    n = n + r.sum.checked
end
print(("ok nodes=%d manage=%s checked=%d"):format(nodes, manage, n))
