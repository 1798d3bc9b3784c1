-- Integration job: what a table placed by hash (or a file) refuses, each
-- with a message naming the table (docs/placement.md): management other
-- than classic, sampling distributions, sampling on the workers,
-- T:local_range. Each refusal is printed on a line of its own.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 1, seed = 3 }
local function refused(what, ok, err)
    assert(not ok, what .. " was accepted")
    print(what .. ": " .. tostring(err):gsub("\n.*", ""))
end
refused("manage", pcall(job.table, job, { name = "R", keys = 20, dim = 2, placement = "hash", manage = "relocate" }))
assert(job.ntables == 0, "a refused table was created")
local H = job:table{ name = "H", keys = 20, dim = 2, placement = "hash", manage = "classic" }
refused("distribution", pcall(job.distribution, job, { name = "u", table = "H", kind = "uniform" }))
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/place_refuse_model.lua", {})
refused("prepare_sample", pcall(job.call, job, "sample", {}))
refused("local_range", pcall(job.call, job, "range", {}))
H:set(19, { 1, 2 })
assert(H:get(19)[2] == 2, "the table still works")
print("ok refusals")
job:close()
