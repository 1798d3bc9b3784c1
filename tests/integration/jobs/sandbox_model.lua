-- Integration job: runs every probe of tests/models/hostile.lua, prints one
-- line per probe ("probe NAME: ok|error MESSAGE"), then the sweep, then the
-- probe named by arg[2] without pcall (the job must end with its error).
-- arg[1]: nodes; arg[3]: victim file; arg[4]: a data file the job declares
-- as an option; arg[5]: one it declares in allow_read; arg[6]: one it does
-- not declare.
local cr = require "crescent"
local job = cr.job{ nodes = tonumber(arg[1]) or 1, workers = 2 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
local victim, data = arg[3], arg[4]
local ok, err = pcall(job.model, job, os.getenv("CRESCENT_ROOT") .. "/tests/models/hostile.lua", { memory_mb = "lots" })
print("bad memory_mb: " .. tostring(err):match("[^\n]*"))
ok, err = pcall(job.model, job, os.getenv("CRESCENT_ROOT") .. "/tests/models/hostile.lua", { allow_read = { "/dev" } })
print("bad allow_read: " .. tostring(err):match("[^\n]*"))
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/hostile.lua",
          { memory_mb = 64, data = data, allow_read = { arg[5] } })
local names = { "io", "os_execute", "require", "bytecode", "bytecode_text", "string_dump", "debug_mt", "debug",
                "string_mt", "loadlib", "gc_stop", "rep31", "rep30", "grow", "write_text", "mf_load", "text" }
for _, what in ipairs(names) do
    local ok, err = pcall(job.call, job, "probe", { what = what, victim = victim })
    print(("probe %s: %s"):format(what, ok and "ok" or ("error " .. tostring(err):match("[^\n]*"))))
end
local r = job:call("sweep", { victim = victim }).results
for i, w in ipairs(r) do print(("sweep %d: leaks=[%s]"):format(i, w.leaks)) end
print("allowed rows=" .. job:call("allowed", { path = data }).results[1].rows)
print("allowed by allow_read rows=" .. job:call("allowed", { path = arg[5] }).results[1].rows)
ok, err = pcall(job.call, job, "allowed", { path = arg[6] })
print("undeclared: " .. tostring(err):match("[^\n]*"))
print("still usable: " .. #job:call("allowed", { path = data }).results)
if arg[2] then job:call("probe", { what = arg[2], victim = victim }) end
print("not reached")
