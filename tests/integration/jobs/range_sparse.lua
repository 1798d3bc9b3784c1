-- Integration job (tests/integration/range_sparse.sh). arg: NODES PLACEMENT
-- (of the dense table D). Range operations: values, and the bytes a
-- pull_range saves over a pull of the same keys; a sparse table S: pushes
-- from every worker, absent keys read as their initial values (and are not
-- stored), stats of rows stored per node.
local cr = require "crescent"
local nodes, placement = tonumber(arg[1]), arg[2]
local job = cr.job{ nodes = nodes, workers = 2, seed = 5, policy = "bsp" }
local D = job:table{ name = "D", keys = 1000, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add(),
                     placement = placement }
local S = job:table{ name = "S", keys = "sparse", dim = 2, init = cr.init.uniform(-1, 1), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/range_sparse_model.lua", {})
local W = job.nodes * job.workers

-- range ops
local r = job:call("push_range", { lo = 100, hi = 900 }).results[1]
assert(r.first == 100 and r.last == 899, "push_range/pull_range values")
for _, k in ipairs{ 0, 99, 100, 512, 899, 900, 999 } do
    local want = (k >= 100 and k < 900) and k or 0
    assert(D:get(k)[1] == want and D:get(k)[2] == -want, ("D[%d] = %s"):format(k, D:get(k)[1]))
end
local function bytes()
    local b, k = 0, 0
    for _, n in ipairs(job:stats().nodes) do b, k = b + n.bytes_remote, k + n.keys_remote end
    return b, k
end
local b0, k0 = bytes()
job:call("pull", { lo = 0, hi = 1000, range = true })
local b1, k1 = bytes()
job:call("pull", { lo = 0, hi = 1000 })
local b2, k2 = bytes()
print(("bytes pull_range %d pull %d (remote keys %d)"):format(b1 - b0, b2 - b1, k1 - k0))
-- the key list (8 bytes a key) is replaced by one [first, end) pair (16 bytes) per remote node
assert(k2 - k1 == k1 - k0, "the same keys went remote")
assert((b2 - b1) - (b1 - b0) == 8 * (k1 - k0) - 16 * (job.nodes - 1),
    ("saved %d bytes, expected %d"):format((b2 - b1) - (b1 - b0), 8 * (k1 - k0) - 16 * (job.nodes - 1)))
local ok, err = pcall(job.call, job, "bad_range", { lo = 10, hi = 1001 })
assert(not ok and err:find("pull_range: range %[10, 1001%) out of range %[0, 1000%) of table 'D'"), tostring(err))

-- sparse
local keys = { -1, -2, 0, 7, math.maxinteger, math.mininteger, 1 << 40 }
for i = 1, 500 do keys[#keys + 1] = (i * 0x9E3779B97F4A7C15) ~ i end
local fresh = { 424242, -99 }
local init = { S:get(fresh[1]), S:get(fresh[2]) }
local before = {}
for i, k in ipairs(keys) do before[i] = S:get(k) end
job:call("sparse_push", { keys = keys })
for i, k in ipairs(keys) do
    local row = S:get(k)
    assert(math.abs(row[1] - (before[i][1] + W)) < 1e-5 and math.abs(row[2] - (before[i][2] + W * (k % 1000))) < 1e-3,
        ("S[%d] = {%s, %s}, expected {%s, %s}"):format(k, row[1], row[2], before[i][1] + W, before[i][2] + W * (k % 1000)))
end
local rows_before = 0
for _, n in ipairs(job:stats().nodes) do rows_before = rows_before + n.sparse.S.rows end
local pr = job:call("sparse_pull", { keys = { fresh[1], fresh[2], keys[1], keys[4] } }).results
for _, res in ipairs(pr) do
    assert(res.sparse == true)
    for j = 1, 2 do
        assert(res.rows[1][j] == init[1][j] and res.rows[2][j] == init[2][j], "absent key: not its initial value")
    end
end
local rows_after, per = 0, {}
for _, n in ipairs(job:stats().nodes) do
    rows_after = rows_after + n.sparse.S.rows
    per[#per + 1] = n.sparse.S.rows
end
assert(rows_after == rows_before, "a pull stored keys")
print("sparse rows " .. table.concat(per, ","))
print(("ok nodes=%d"):format(job.nodes))
job:close()
