-- Matrix factorization (NuPS section 5.1), run by every worker.
--
-- Loss: sum over revealed cells of (x_ij - w_i.h_j)^2 + lambda (|w_i|^2 + |h_j|^2),
-- plain SGD with the regularizer applied per update. Tables: W (one row per
-- matrix row) and H (one row per column), both with an sgd optimizer whose
-- learning rate the job script sets (bold driver) and passes as args.lr.
--
-- Data layout (NuPS): cell (i, j) belongs to the node that owns W key i; within
-- a node the columns are dealt to its workers (by cell count). Each epoch a
-- worker walks its columns in a fresh random order, in batches of whole columns
-- (which columns share a batch is drawn once, at load; the order of batches and
-- of the columns inside each is drawn every epoch). Per batch: pull the batch's W and H rows, ONE kernel call runs
-- sequential per-cell SGD on those copies and turns them into gradient sums,
-- push them (the owner applies w -= lr g: the same change). Lua never loops
-- over cells.
--
-- opts (job:model("mf", opts)): train = path (required), test = path,
--   lambda = 0.02, batch = 200000, w = "W", h = "H" (table names),
--   prefetch = false (see M.epoch), clocks = 4 (clock ticks per epoch),
--   localize = false (true: move the next batch's H rows here, for tables
--   managed by relocation, see M.epoch; "late": wait for the moves only
--   after the batch, relying on per-key consistency).
--   clocks: every worker calls ctx:clock() exactly `clocks` times per epoch,
--   spread evenly over its batches, so the consistency policy (bsp, ssp, asp,
--   or a user's) governs MF at those points. Workers hold different numbers of
--   batches, so ticking once per batch would leave a BSP worker waiting at the
--   end of an epoch for a clock that the others never reach.
--   batch: cells per kernel call on one node; on several nodes, batch x 2 /
--   (all workers): 2 x 1 keeps it, 2 x 2 halves it. Between a worker's pull
--   and its push, others update the same rows: the other workers of its node
--   update its W rows (rows are split over nodes, columns over a node's
--   workers), other nodes update its H rows. H rows see about cells/cols
--   updates each against cells/rows for W (10x more here), so staleness across
--   nodes is what costs accuracy, and it grows with the cells a batch puts on
--   each column (batch x workers per node / cols). Measured on the 20000 x
--   2000 set, 20 epochs: 1 x 2 at 200k cells RMSE 0.309; 2 x 1 at 200k 0.296
--   (at 100k the same, with twice the round trips: 1.4x the time of 1 x 2
--   instead of 1.1x); 2 x 2 at 200k 0.403, at 100k 0.318. A job with a
--   single worker has nobody to be stale against (pull, sequential SGD on the
--   copies, push of the exact change = plain SGD): it takes batches of at least
--   1M cells (one per epoch here; the progress bar still moves on big data).
-- M.epoch args: lr (required: the tables' current lr), epoch (number, seeds the walk).
-- M.epoch returns { loss, sse, reg, cells }; M.evaluate{ set = "test"|"train" }
-- returns { sse, n } (RMSE = sqrt(sum sse / sum n) at the scheduler).

local K = cr.core.kernels

local M = {}
local S = {} -- this worker's state

local known = { train = true, test = true, lambda = true, batch = true, w = true, h = true, prefetch = true,
                clocks = true, localize = true }

local function load(ctx, path)
  local lo, hi = S.W:local_range()
  -- rows/cols: a cell past W's or H's keys is an error naming its line (a
  -- row past W's keys would belong to no node and be dropped silently)
  local cells, err = K.mf_load(path, { row_lo = lo, row_hi = hi, batch = S.batch, seed = ctx.seed,
                                       part = ctx.local_worker, parts = ctx.workers_per_node,
                                       rows = S.W.keys, cols = S.H.keys })
  if not cells then error(err, 0) end
  return cells
end

function M.init(ctx, opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not known[k] then error("mf: unknown option '" .. tostring(k) .. "'", 0) end
  end
  if type(opts.train) ~= "string" then error("mf: option 'train' (path of train.mmc) is required", 0) end
  S.lambda = opts.lambda or 0.02
  S.prefetch = opts.prefetch and true or false
  S.localize = opts.localize or false
  if S.localize ~= true and S.localize ~= false and S.localize ~= "late" then
    error("mf: option 'localize' must be true, false or \"late\"", 0)
  end
  S.clocks = math.tointeger(opts.clocks or 4)
  if not S.clocks or S.clocks < 0 then error("mf: option 'clocks' must be an integer >= 0", 0) end
  local batch = math.tointeger(opts.batch or 200000)
  if not batch or batch < 1 then error("mf: option 'batch' must be a positive integer", 0) end
  S.batch = ctx.workers == 1 and math.max(batch, 1000000) or ctx.nodes == 1 and batch
    or math.max(1, batch * 2 // ctx.workers)
  if type(S.lambda) ~= "number" or S.lambda < 0 then error("mf: option 'lambda' must be a number >= 0", 0) end
  S.W = ctx.tables[opts.w or "W"] or error("mf: no table '" .. (opts.w or "W") .. "'", 0)
  S.H = ctx.tables[opts.h or "H"] or error("mf: no table '" .. (opts.h or "H") .. "'", 0)
  if S.W.dim ~= S.H.dim then error("mf: tables W and H must have the same dim", 0) end
  S.train = load(ctx, opts.train)
  if opts.test then S.test = load(ctx, opts.test) end
  return { cells = S.train:count(), test_cells = S.test and S.test:count() or 0 }
end

-- Per batch: pull the W and H rows, run the kernel, push. With opts.prefetch
-- the next batch's H rows are pulled (pull_async) while the kernel runs: that
-- hides remote latency, and cannot miss this worker's own updates (a batch's
-- columns are its alone within the worker), but those rows are then one batch
-- older with respect to other nodes' updates: on the 20000 x 2000 set with 2
-- nodes, 2 of 5 runs ended at RMSE 0.38 instead of 0.29. Off by default.
function M.epoch(ctx, args)
  local lr = args and args.lr
  if type(lr) ~= "number" then error("mf: epoch needs args.lr (the tables' learning rate)", 0) end
  local W, H, cells, lambda = S.W, S.H, S.train, S.lambda
  cells:shuffle(ctx.seed * 1000003 + ctx.worker * 7919 + (args.epoch or 0))
  local sse, reg, n = 0.0, 0.0, 0
  local nb, done, ticked = cells:batches(), 0, 0
  local wk, hk, nc = cells:next()
  local prefetch = S.prefetch
  local hreq = prefetch and wk and H:pull_async(hk)
  -- Relocation (docs/management.md): the next batch's H rows are moved to
  -- this node while the current batch runs, and waited for before that
  -- batch uses them. W rows are always the worker's own node's (cells are
  -- split by W's owner), so only H moves. On a table not managed by
  -- relocation (classic, replicated keys) localize does nothing but check
  -- the keys and returns no request.
  local loc, late = S.localize, S.localize == "late"
  local lreq = loc and wk and H:localize(hk)
  while wk do
    if lreq and not late then H:wait(lreq) end
    local lprev = late and lreq
    if loc then
      local _, nhk = cells:peek()
      lreq = nhk and H:localize(nhk)
    end
    local Wm = W:pull(wk)
    local Hm
    if prefetch then
      Hm = H:wait(hreq)
      local _, nhk = cells:peek()
      if nhk then hreq = H:pull_async(nhk) end
    else
      Hm = H:pull(hk)
    end
    local a, b = K.mf_sgd(cells, Wm, Hm, lr, lambda)
    W:push(wk, Wm)
    H:push(hk, Hm)
    if lprev then H:wait(lprev) end
    sse, reg, n = sse + a, reg + b, n + nc
    ctx:progress(nc)
    done = done + 1
    while ticked < (done * S.clocks) // nb do ctx:clock(); ticked = ticked + 1 end
    wk, hk, nc = cells:next()
  end
  while ticked < S.clocks do ctx:clock(); ticked = ticked + 1 end
  return { loss = sse + reg, sse = sse, reg = reg, cells = n }
end

function M.evaluate(ctx, args)
  local cells = (args and args.set == "train") and S.train or S.test
  if not cells then error("mf: no test set loaded (pass opts.test)", 0) end
  local sse, n = 0.0, 0
  cells:rewind()
  while true do
    local wk, hk = cells:next()
    if not wk then break end
    local a, b = K.mf_eval(cells, S.W:pull(wk), S.H:pull(hk))
    sse, n = sse + a, n + b
  end
  return { sse = sse, n = n }
end

return M
