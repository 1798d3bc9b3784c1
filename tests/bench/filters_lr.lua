-- Bench model (tests/bench/filters.sh): plain logistic regression by SGD
-- over fixed minibatches of a LIBSVM file, one dim-1 table W of weights
-- (feature id f is key f - 1). Worker w takes examples w, w + W, ...;
-- each batch pulls the weights of its distinct features and pushes their
-- gradient: the same key lists every epoch, as key caching expects.
local M = {}
local S = {}

function M.init(ctx, opts)
  local X, err = cr.core.data.libsvm(opts.data)
  if not X then error(err, 0) end
  local ptr, idx, val, label = X.ptr, X.idx, X.val, X.label
  local W = ctx.nodes * ctx.workers_per_node
  S.batches = {}
  local mine = {}
  for i = ctx.worker + 1, X.rows, W do mine[#mine + 1] = i end
  for b0 = 1, #mine, opts.batch do
    -- a batch: its distinct keys, and per example y, then (position, value) pairs, flat
    local pos, keys, start, y, ps, vs = {}, {}, {}, {}, {}, {}
    for t = b0, math.min(b0 + opts.batch - 1, #mine) do
      local i = mine[t]
      start[#start + 1] = #ps + 1
      y[#y + 1] = label:get(i, 1) > 0 and 1 or 0
      for p = ptr:get(i) + 1, ptr:get(i + 1) do
        local f = idx:get(p)
        if not pos[f] then keys[#keys + 1] = f; pos[f] = #keys end
        ps[#ps + 1], vs[#vs + 1] = pos[f], val:get(p, 1)
      end
    end
    start[#start + 1] = #ps + 1
    local k = cr.core.util.ints(#keys)
    for j = 1, #keys do k:set(j, keys[j]) end
    S.batches[#S.batches + 1] = { keys = k, n = #keys, start = start, y = y, ps = ps, vs = vs,
                                  g = cr.core.util.matrix(#keys, 1) }
  end
end

function M.epoch(ctx)
  local W, loss, n = ctx.tables.W, 0, 0
  for _, b in ipairs(S.batches) do
    local wm = W:pull(b.keys)
    local w, g = {}, {}
    for j = 1, b.n do w[j], g[j] = wm:get(j, 1), 0 end
    local ps, vs = b.ps, b.vs
    for e = 1, #b.y do
      local z = 0
      for p = b.start[e], b.start[e + 1] - 1 do z = z + w[ps[p]] * vs[p] end
      local pr, y = 1 / (1 + math.exp(-z)), b.y[e]
      loss = loss - (y == 1 and math.log(pr + 1e-12) or math.log(1 - pr + 1e-12))
      for p = b.start[e], b.start[e + 1] - 1 do g[ps[p]] = g[ps[p]] + (pr - y) * vs[p] end
      n = n + 1
    end
    for j = 1, b.n do b.g:set(j, 1, g[j] / #b.y) end
    W:push(b.keys, b.g)
  end
  return { loss = loss, n = n }
end

return M
