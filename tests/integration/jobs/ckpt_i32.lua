-- Integration job (tests/integration/ckpt_i32.sh): an i32 count table and
-- an f32 table through job:save / job:load. Args: mode, path.
--   save      set counts beyond float32's exact range, save, print every row
--   load      load into a fresh job (any --nodes), print every row
--   f32       a job whose C is an f32 table: loading the file is refused
--   i32       a job whose F is an i32 table: likewise
local cr = require "crescent"
local mode, path = arg[1], arg[2]
local job = cr.job{ nodes = 2, workers = 1, seed = 3 }
local K = 50
local C = job:table{ name = "C", keys = K, dim = 3, dtype = mode == "f32" and "f32" or "i32",
                     optimizer = mode == "f32" and "add" or nil }
local F = job:table{ name = "F", keys = 7, dim = 2, init = mode ~= "i32" and cr.init.normal(0, 1) or nil,
                     dtype = mode == "i32" and "i32" or nil, optimizer = mode == "i32" and "add" or nil }
local function dump()
    for k = 0, K - 1 do print(k, table.concat(C:get(k), " ")) end
    for k = 0, 6 do print(k, table.concat(F:get(k), " ")) end
end
if mode == "save" then
    for k = 0, K - 1 do C:set(k, { (1 << 24) + 2 * k + 1, -(1 << 30) - k, 0x7fffffff - k }) end
    dump()
    job:save(path)
elseif mode == "load" then
    C:set(0, { 1, 2, 3 })
    job:load(path)
    dump()
else
    local ok, err = pcall(job.load, job, path)
    assert(not ok, "a checkpoint of the other dtype was loaded")
    print(err)
    os.exit(1)
end
job:close()
