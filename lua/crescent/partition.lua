-- crescent.partition: partition a bipartite graph (examples x keys) over k
-- machines and judge the result (docs/partitioning.md).
--
--   local g = cr.partition.graph("train.libsvm")            -- or (path, "mm"|"edges"|"libsvm")
--   local g2 = cr.partition.graph{ u = {0, 0, 1}, v = {0, 1, 1} }   -- from edge arrays
--   local place, m = cr.partition{ graph = g, k = 16, method = "parsa", blocks = 4 }
--   print(m.t_max, m.m_max, m.seconds); place.u:get(1) -- worker of example 0
--   cr.partition.save(place, "p.txt"); local p = cr.partition.load("p.txt")
--
-- Methods: random, parsa, tsh1, tsh2, mbp, dppa, metis (see methods()).
-- dppa with hash_bins > 0 adds m.hashing = {bins, bins_used, edges,
-- edge_ratio, density, mean_v_degree}: how hashing densified the graph.
--
-- Dynamic reallocation (paper 001, docs/partitioning-mbp-dppa.md):
--   local cache = cr.partition.lru(1000)          -- recent samples, bounded
--   cache:put(id, { idx = Ints, val = Matrix }, keys_accessed)   -- or cache:put_rows(first_id, csr [, keys_csr])
--   local r = cr.partition.reallocate{ placement = place, cache = cache, batch = next_batch }
--   -- place.v is updated in place; r.key/r.from/r.to list the moves
-- Both are the C functions themselves, so their errors name the caller's line.
-- Expected failures (missing file, malformed line, unavailable method) return
-- nil, message; programming errors raise at the caller's line.
local core = require "crescent.core"
local C = core.partition

local M = {}

-- Graph from a file, or from edge arrays { u = ..., v = ..., examples = nu, keys = nv }.
function M.graph(src, format)
  if type(src) == "table" then
    for key in pairs(src) do
      if key ~= "u" and key ~= "v" and key ~= "examples" and key ~= "keys" then
        error("unknown graph field '" .. tostring(key) .. "' (u, v, examples, keys)", 2)
      end
    end
    local ok, g = pcall(C.graph_from_edges, src.u or {}, src.v or {}, src.examples or 0, src.keys or 0)
    if not ok then error(g, 2) end
    return g
  end
  if type(src) ~= "string" then error("graph: expected a path or an edge table", 2) end
  local ok, g, msg = pcall(C.graph, src, format)
  if not ok then error(g, 2) end
  return g, msg
end

M.load = C.load
M.save = C.save
M.metrics = C.metrics
M.methods = C.methods
M.lru = C.lru
M.reallocate = C.reallocate

-- Improvement of `m` over `base` as in the papers: (base - m) / m per metric.
function M.improvement(base, m)
  local function f(a, b) return b > 0 and (a - b) / b or 0 end
  return { m_max = f(base.m_max, m.m_max), t_max = f(base.t_max, m.t_max), t_sum = f(base.t_sum, m.t_sum) }
end

local function run(spec)
  if type(spec) ~= "table" then error("partition: expected a table { graph = ..., k = ..., method = ... }", 3) end
  local opts, graph, k, method = {}, spec.graph, spec.k, spec.method or "parsa"
  for key, val in pairs(spec) do
    if key ~= "graph" and key ~= "k" and key ~= "method" and key ~= "format" then opts[key] = val end
  end
  if type(graph) == "string" then
    local g, msg = M.graph(graph, spec.format)
    if not g then return nil, msg end
    graph = g
  end
  if graph == nil then error("partition: 'graph' is required", 3) end
  if math.type(k) ~= "integer" then error("partition: 'k' must be an integer", 3) end
  local ok, place, metrics = pcall(C.run, graph, k, method, opts)
  if not ok then error(place, 3) end
  return place, metrics
end

return setmetatable(M, { __call = function(_, spec)
  local place, metrics = run(spec) -- not a tail call: keeps the caller's line for error()
  return place, metrics
end, __index = C })
