-- Integration job: scripts that spin in a message handler, where Lua runs
-- code with hooks off once the count hook raised. arg[1]: a directory to
-- write the scripts in. Each kind of script is stopped and named, and the
-- job goes on; prints "KIND: SECONDS MESSAGE" for each.
local cr = require "crescent"
local dir = arg[1]
local trick = "xpcall(error, function() while true do end end)\n"
local function write(name, text)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(text)
    f:close()
    return dir .. "/" .. name
end
local good = "return function(o) return {may_proceed = function() return true end} end\n"
local function try(kind, f)
    local t0 = os.time()
    local ok, err = pcall(f)
    print(("%s: %d %s"):format(kind, os.time() - t0, ok and "ok" or tostring(err):match("[^\n]*")))
end
local job = cr.job{ nodes = 2, workers = 2 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/hostile.lua", {})
try("policy", function() job:policy(write("pol.lua", trick .. good)) end)
try("scheme", function() job:sampling(write("scheme.lua", trick .. "return function(o) return {} end\n")) end)
try("decision", function()
    job:table{ name = "D", keys = 10, dim = 1, manage = write("decide.lua", trick .. "return function(o) return {} end\n") }
end)
-- A checkpoint names its policy file; the file changed since.
local pol = write("saved.lua", good)
job:policy(pol)
local ck = dir .. "/job.ckpt"
job:save(ck)
write("saved.lua", trick .. good)
try("load", function() job:load(ck) end)
try("model", function() job:call("spin_handler", {}) end)
print("still usable: " .. #job:call("ping", {}).results)
job:close()
