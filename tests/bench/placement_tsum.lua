-- T_sum of the partition metrics (cr.partition.metrics, src/partition/
-- cr_part_metrics.c) for the placement a logistic-regression job runs on, 2
-- nodes x 1 worker, every example training (heldout=0):
--   lua5.4 placement_tsum.lua DATA NODES range|hash|FILE
-- prints "t_sum N". For a placement file, its own assignment. For range
-- and hash, the assignment the job makes: example i (0-based, file order)
-- goes to worker i % NODES (lua/models/logreg.lua deals the examples
-- round robin over the workers: kernels.logreg_load part/parts), key k to
-- its node under the table's range or hash placement (asked of the
-- placement code itself, core.table.placement).
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
  -- the table's own placement code (core.table.placement, src/ps/cr_place.h)
  local pl = cr.core.table.placement(nv, nodes, what, "w")
  for k = 0, nv - 1 do place.v:set(k + 1, pl:owner(k)) end
end
local m = cr.partition.metrics(g, place)
print(("t_sum %d"):format(m.t_sum))
