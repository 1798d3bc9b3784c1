-- Integration job: arg[1] = a placement that job:table must refuse. The
-- refusal is printed; then the job must be as before: no table A (the same
-- name is free again, the next table gets id 0) and still usable.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 1, seed = 3 }
local ok, err = pcall(job.table, job, { name = "A", keys = 50, dim = 3, placement = arg[1] })
assert(not ok, "the placement was accepted")
print("refused: " .. tostring(err))
assert(job.tables.A == nil and job.ntables == 0, "a refused table left something behind")
local A = job:table{ name = "A", keys = 50, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
assert(A.id == 0)
A:set(49, { 1, 2, 3 })
assert(A:get(49)[3] == 3)
print("ok unchanged")
job:close()
