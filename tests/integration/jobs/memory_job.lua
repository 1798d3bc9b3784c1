-- Integration job: the job-wide memory cap, cr.job{memory_mb = N}, reaches
-- every worker's Lua state (a model option memory_mb still wins), and a bad
-- value is refused by name. arg[1]: nodes.
local cr = require "crescent"
local ok, err = pcall(cr.job, { memory_mb = 0 })
print("bad: " .. tostring(err):match("[^\n]*"))
local job = cr.job{ nodes = tonumber(arg[1]) or 1, workers = 2, memory_mb = 24 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
local hostile = os.getenv("CRESCENT_ROOT") .. "/tests/models/hostile.lua"
job:model(hostile)
ok, err = pcall(job.call, job, "probe", { what = "grow" })
print("job cap: " .. tostring(err):match("[^\n]*"))
job:model(hostile, { memory_mb = 40 })
ok, err = pcall(job.call, job, "probe", { what = "grow" })
print("model cap: " .. tostring(err):match("[^\n]*"))
job:close()
