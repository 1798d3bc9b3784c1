-- Integration job: a model pushes NaN rows (tests/models/nan_push.lua). The
-- push is refused whole, before any row (local or remote) is applied.
-- arg[1]: nodes (default 2); arg[2] = "catch": catch the error, print the
-- rows of C and go on; otherwise the job must fail naming the refusal.
-- arg[3] = "last": only the last key's row is NaN (remote for node 0).
local cr = require "crescent"
local job = cr.job{ nodes = tonumber(arg[1]) or 2, workers = 1, seed = 1 }
local C = job:table{ name = "C", keys = 10, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/nan_push.lua", {})
if arg[2] ~= "catch" then
    job:epoch{}
    print("finished")
    return
end
local ok, err = pcall(job.epoch, job, { last = arg[3] == "last" })
print("epoch: " .. (ok and "ok" or tostring(err):match("[^\n]*")))
for _, k in ipairs { 0, 9 } do print(("C[%d] = %s"):format(k, table.concat(C:get(k), ","))) end
