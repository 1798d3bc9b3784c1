-- Integration job for the traffic filters: 2 nodes x 2 workers, a dim-1
-- table, two epochs of the same key lists. arg[1]: "off", "kc" (key
-- caching only) or "all" (key caching, zero removal, sigmod 0.3). Checks
-- every final value against the sum of all pushes (exact), prints the
-- remote bytes of each epoch and the filters' counters.
local cr = require "crescent"
local mode = arg[1] or "off"
local filters = ({ off = nil, kc = { key_cache = true },
                   all = { key_cache = true, zeros = true, sigmod = 0.3 } })[mode]
local root = os.getenv("CRESCENT_ROOT")
local K, B, P = 4000, 20, 300
local job = cr.job{ nodes = 2, workers = 2, seed = 1, policy = "bsp" }
local F = job:table{ name = "F", keys = K, dim = 1, init = cr.init.zeros(), optimizer = cr.optim.add(),
                     filters = filters }
job:model(root .. "/tests/models/filters.lua", { batches = B, per_batch = P })
local e1 = job:epoch{}
local e2 = job:epoch{}
-- expected: every worker's pushes, twice
local model = dofile(root .. "/tests/models/filters.lua")
local want = {}
for k = 0, K - 1 do want[k] = 0 end
for w = 0, job.nodes * job.workers - 1 do
    for b = 1, B do
        local key, value = model.batch(w, b, K, P)
        for i = 1, P do want[key(i)] = want[key(i)] + 2 * value(i, 1) end
    end
end
local bad = 0
F:each_run(1000, function(node, lo, n)
    local rows = F:_rows(node, lo, n)
    for i = 1, n do
        if rows:get(i, 1) ~= want[lo + i - 1] then
            bad = bad + 1
            if bad < 5 then print(("key %d = %.9g, expected %.9g"):format(lo + i - 1, rows:get(i, 1), want[lo + i - 1])) end
        end
    end
end)
assert(bad == 0, ("%d values differ from the sum of the pushes"):format(bad))
local st = job:stats()
local hits, before, after = 0, 0, 0
for _, n in ipairs(st.nodes) do
    local f = n.filters and n.filters.F
    if f and f.key_cache then
        hits, before, after = hits + f.key_cache.hits, before + f.key_cache.bytes_before, after + f.key_cache.bytes_after
    end
    if f then
        for name, c in pairs(f) do
            print(("node %d %s: hits=%d bytes_before=%d bytes_after=%d"):format(n.node, name, c.hits, c.bytes_before,
                                                                             c.bytes_after))
        end
    end
end
print(("ok mode=%s values exact epoch1_bytes=%d epoch2_bytes=%d kc_hits=%d kc_before=%d kc_after=%d"):format(
    mode, e1.bytes_remote, e2.bytes_remote, hits, before, after))
job:close()
