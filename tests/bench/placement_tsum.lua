-- T_sum of the partition metrics (cr.partition.metrics, src/partition/
-- cr_metrics.c) for the placement a logistic-regression job runs on, 2
-- nodes x 1 worker, every example training (heldout=0):
--   lua5.4 placement_tsum.lua DATA NODES range|hash|FILE
-- prints "t_sum N". For a placement file, its own assignment. For range
-- and hash, the assignment the job makes: example i (0-based, file order)
-- goes to worker i % NODES (lua/models/logreg.lua deals the examples
-- round robin over the workers: kernels.logreg_load part/parts), key k to
-- node k // ceil(keys / NODES) (range, src/ps/cr_table.h) or to
-- mix(k) % NODES (hash: the splitmix64 finalizer of src/ps/cr_place.h).
local cr = require "crescent"
local data, nodes, what = arg[1], math.tointeger(arg[2]), arg[3]
local g = assert(cr.partition.graph(data))
local place
if what ~= "range" and what ~= "hash" then
  place = assert(cr.partition.load(what))
else
  place = assert(cr.partition { graph = g, k = nodes, method = "random" })
  local nu, nv = #place.u, #place.v
  for i = 1, nu do place.u:set(i, (i - 1) % nodes) end
  local block = (nv + nodes - 1) // nodes
  local function mix(k) -- uint64 arithmetic on Lua's wrapping int64
    k = k ~ (k >> 30); k = k * -4658895280553007687 -- 0xbf58476d1ce4e5b9
    k = k ~ (k >> 27); k = k * -7723592293110705685 -- 0x94d049bb133111eb
    return k ~ (k >> 31)
  end
  local function umod(h, n) return (((h >> 1) % n) * 2 + (h & 1)) % n end
  for k = 0, nv - 1 do
    place.v:set(k + 1, what == "range" and k // block or umod(mix(k), nodes))
  end
end
local m = cr.partition.metrics(g, place)
print(("t_sum %d"):format(m.t_sum))
