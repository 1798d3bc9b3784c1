-- Bad uses of an i32 table (tests/integration/table_i32.sh), one per run:
-- arg[1] names the case; each must stop the job with one clear line.
local cr = require "crescent"
local case = arg[1]
local job = cr.job{ nodes = 1, workers = 1 }
local model = os.getenv("CRESCENT_ROOT") .. "/tests/models/count_i32.lua"
if case == "f64" then job:table{ name = "C", keys = 4, dim = 1, dtype = "f64" } end
if case == "sgd" then job:table{ name = "C", keys = 4, dim = 1, dtype = "i32", optimizer = cr.optim.sgd{ lr = 0.1 } } end
if case == "normal" then job:table{ name = "C", keys = 4, dim = 1, dtype = "i32", init = cr.init.normal(0, 1) } end
if case == "fraction" then job:table{ name = "C", keys = 4, dim = 1, dtype = "i32", init = cr.init.constant(0.5) } end
if case == "replicate" then
    job:table{ name = "C", keys = 4, dim = 1, dtype = "i32", optimizer = "assign", manage = "replicate" }
end
local C = job:table{ name = "C", keys = 4, dim = 2, dtype = "i32", init = cr.init.constant(7) }
local F = job:table{ name = "F", keys = 4, dim = 2 }
assert(C:get(1)[2] == 7 and F.dtype == "f32", "constant init, f32 default")
if case == "set" then C:set(1, { 1, 2.5 }) end
if case == "setbig" then C:set(1, { 1, 1 << 31 }) end
if case == "dist" then job:distribution{ name = "u", table = "C", kind = "uniform" } end
job:model(model, {})
if case == "f32push" or case == "i32push" or case == "sample" then job:call("bad", { what = case }) end
print("ok " .. tostring(case))
job:close()
