-- Integration job: arg NODES save|load PATH [PLACEMENT]: a sparse table's
-- checkpoint round trip across node counts and placements; prints a digest
-- of known keys' rows (set ones and never written ones) and, on save, the
-- rows stored per node.
local cr = require "crescent"
local nodes, mode, path, pl = tonumber(arg[1]), arg[2], arg[3], arg[4]
local job = cr.job{ nodes = nodes, workers = 1, seed = 3 }
local S = job:table{ name = "S", keys = "sparse", dim = 3, init = cr.init.uniform(-1, 1),
                     optimizer = cr.optim.adagrad{ lr = 0.1 }, placement = pl }
local D = job:table{ name = "D", keys = 20, dim = 1, init = cr.init.normal(0, 1) }
local keys = { -1, -2, 0, 5, 123456789012345, math.mininteger, math.maxinteger }
for i = 1, 300 do keys[#keys + 1] = i * 7919 * 1000003 end
local function digest()
    local s = 0
    for i, k in ipairs(keys) do for j, x in ipairs(S:get(k)) do s = s + x * (j + i % 7) end end
    for k = 0, 19 do s = s + D:get(k)[1] * k end
    return ("%.5f"):format(s)
end
if mode == "save" then
    for i, k in ipairs(keys) do if i % 2 == 0 then S:set(k, { i, -i, 0.5 }) end end
    D:set(3, { 42 })
    local rows = {}
    for _, n in ipairs(job:stats().nodes) do rows[#rows + 1] = n.sparse.S.rows end
    print("rows " .. table.concat(rows, ","))
    job:save(path)
else
    job:load(path)
    local rows = 0
    for _, n in ipairs(job:stats().nodes) do rows = rows + n.sparse.S.rows end
    print("loaded rows " .. rows)
end
print("digest " .. digest())
job:close()
