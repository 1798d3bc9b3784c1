-- Integration job: misuse of tables, arg[1] = pull | push | get.
local cr = require "crescent"
local what = arg[1]
local job = cr.job{ nodes = 2, workers = 1 }
local C = job:table{ name = "C", keys = 10, dim = 3 }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/bad_keys.lua", {})
if what == "get" then C:get(99) end
job:epoch{ what = what }
