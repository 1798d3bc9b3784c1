-- Bad input to relocation and manage= (tests/integration/reloc_errors.sh).
-- Arg: which mistake.
local cr = require "crescent"
local case = arg[1]
local job = cr.job{ nodes = 2, workers = 1, seed = 1 }
local spec = ({ unknown = "sideways", auto = "auto:hott=1", malformed = { replicate = { 1, 2 }, relocate = "most" },
               field = { relocate = "rest", copies = 3 }, range = { replicate = { 0, 99 }, relocate = "rest" },
               replicate = "replicate", relrange = { relocate = { 3, 40 }, classic = "rest" },
               twice = { relocate = { 3, 5, 3 }, classic = "rest" },
               both = { replicate = { 1, 2 }, relocate = { 2 }, classic = "rest" },
               norest = { relocate = { 2 }, replicate = { 1 } },
               script = "./no/such/rule.lua" })[case]
if spec ~= nil then
    job:table{ name = "C", keys = 40, dim = 2, manage = spec, optimizer = cr.optim.assign() } -- line 14
elseif case == "later" then
    local C = job:table{ name = "C", keys = 40, dim = 2 }
    C:manage("nope") -- line 17
elseif case == "laterrange" then
    local C = job:table{ name = "C", keys = 40, dim = 2, manage = "auto" }
    C:manage{ relocate = { 0, -1 }, classic = "rest" } -- line 20
elseif case == "freq" then
    job:table{ name = "C", keys = 40, dim = 2, manage = "auto", frequencies = { 1, 2, 3 } } -- line 22
else
    job:table{ name = "C", keys = 40, dim = 2, manage = "relocate" }
    job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/reloc_bad.lua", {})
    job:epoch{}
end
print("no error")
job:close()
