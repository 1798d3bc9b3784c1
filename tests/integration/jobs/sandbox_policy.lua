-- Integration job: switches to tests/policies/hostile.lua once per probe and
-- place (constructor, may_proceed), runs an epoch, prints one line per try:
-- "policy NAME AT: ok|error MESSAGE". arg[1]: nodes, arg[2]: victim file.
local cr = require "crescent"
local job = cr.job{ nodes = tonumber(arg[1]) or 1, workers = 2 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", { memory_mb = 64 })
local path = os.getenv("CRESCENT_ROOT") .. "/tests/policies/hostile.lua"
local names = { "io", "os_execute", "require", "bytecode", "string_dump", "debug_mt", "loadlib", "gc_stop",
                "rep31", "rep30", "model_globals" }
for _, what in ipairs(names) do
    for _, at in ipairs { "load", "decide" } do
        local ok, err = pcall(function()
            job:policy(path, { what = what, at = at, victim = arg[2] })
            job:epoch{ steps = 2 }
        end)
        print(("policy %s %s: %s"):format(what, at, ok and "ok" or ("error " .. tostring(err):match("[^\n]*"))))
    end
end
job:policy("bsp")
local r = job:epoch{ steps = 2 }
print("after: steps=" .. r.sum.steps)
job:close()
