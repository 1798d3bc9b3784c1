-- Sparse logistic regression (thesis ch. 6), run by every worker.
--
-- Objective: sum_i log(1 + exp(-y_i <x_i, w>)) + l1 |w|_1 + l2/2 |w|^2 over
-- the training examples of a LIBSVM file (label > 0: y = +1, else -1).
-- Feature id f (1-based in the file) is key f - 1 of the weight table, the
-- numbering of `crescent partition` for the same file.
--
-- Where the state lives: the weights in one table (keys = the file's largest
-- feature id); the examples on the workers, each with its margin <x_i, w>
-- (kernels.logreg_load, src/kernels/cr_logreg.c). Which worker holds which
-- example: with opts.placement (a placement file of `crescent partition`)
-- the examples its u lines place on this worker's node, dealt round robin
-- over the node's workers; otherwise the training examples dealt round robin
-- over all workers. opts.heldout of the file's examples (a seeded hash of
-- the example's number) are left out for the job script's test set.
--
-- Optimizers (opts.optimizer, the table's rule must match):
--   dbpg      delayed block proximal gradient. The key space is cut into
--             opts.blocks ranges (opts.bounds); an epoch visits them in
--             order. For block b a worker computes, over its examples, the
--             loss gradient g_j and a curvature u_j of every active key of
--             the block it touches (the largest within the key's trust
--             radius, plus opts.rho x a Gershgorin bound of the block:
--             src/kernels/cr_logreg.h), pushes (g_j, u_j) (table dim 2),
--             ticks its clock, pulls the block's keys back (w_j, r_j) and
--             moves its margins by the change of each weight. The server
--             rule (optim/cr_optim.h) sums the pushes of all the workers
--             that registered the key (M.start) and then takes the proximal
--             step within the trust radius r_j; its KKT filter marks a key
--             that stays at 0 (r_j = -1 in the pulled row), and the worker
--             drops it from the block: it is neither pushed nor pulled again.
--             One clock per block: under ssp with staleness tau a worker is
--             at most tau blocks ahead of the slowest; tau = 0 (bsp) is the
--             exact block proximal gradient method (a push waits for its
--             acknowledgement, so after the barrier every worker's gradient
--             of the block is in; the pull sees the step).
--             Traffic: every key a worker's examples touch is pushed once
--             and pulled once per epoch (less once the filter drops it):
--             per remote key and epoch, the key and two floats each way
--             (32 bytes), plus each message's overhead.
--   ftrl, adagrad  minibatches of opts.batch examples: pull the batch's
--             keys, one kernel call for the loss gradient summed over the
--             batch (adagrad: plus l2 w; ftrl's l1, l2 are the rule's), push.
--             `clocks` ticks per epoch.
--
-- Calls from the job script (job:call):
--   start{}      -> {examples, nnz, positives, keys}; dbpg: registers this
--                  worker as a pusher of each of its keys (once, first)
--   epoch{epoch=} -> {loss (sum at the margins after the epoch: dbpg; the
--                  running loss of the batches: ftrl, adagrad), examples,
--                  skipped (dbpg: keys dropped by the KKT filter so far)}
--   objective{}  -> {loss, examples}: the loss sum at the table's current
--                  weights (pulls this worker's keys; dbpg: its margins,
--                  which at tau = 0 are those weights')
-- Options (job:model("logreg", opts)): data (path, required), features
-- (the table's keys), heldout (0.2), split_seed (1), placement (a file, or
-- nil), optimizer ("dbpg"), blocks (64), bounds (blocks + 1 increasing keys
-- from 0: the blocks' key ranges; default equal ranges), rho (0.1), batch
-- (1000), clocks (1, ftrl and adagrad), l2 (0: adagrad's worker-side L2),
-- table ("w").
local K = cr.core.kernels

local M = {}
local S = {}

local known = { data = true, features = true, heldout = true, split_seed = true, placement = true, optimizer = true,
                blocks = true, bounds = true, rho = true, batch = true, clocks = true, l2 = true, table = true, memory_mb = true }

local function posint(opts, k, default, min)
  local v = opts[k]
  if v == nil then return default end
  v = math.tointeger(v)
  if not v or v < (min or 1) then error(("logreg: option '%s' must be an integer >= %d"):format(k, min or 1), 0) end
  return v
end

function M.init(ctx, opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not known[k] then error("logreg: unknown option '" .. tostring(k) .. "'", 0) end
  end
  if type(opts.data) ~= "string" then error("logreg: option 'data' (path of a LIBSVM file) is required", 0) end
  S.opt = opts.optimizer or "dbpg"
  if S.opt ~= "dbpg" and S.opt ~= "ftrl" and S.opt ~= "adagrad" then
    error(("logreg: unknown optimizer '%s' (dbpg, ftrl or adagrad)"):format(tostring(S.opt)), 0)
  end
  S.T = ctx.tables[opts.table or "w"] or error("logreg: no table '" .. (opts.table or "w") .. "'", 0)
  local want = S.opt == "dbpg" and 2 or 1
  if S.T.dim ~= want then error(("logreg: optimizer %s needs a table of dim %d"):format(S.opt, want), 0) end
  S.l2 = opts.l2 or 0
  if type(S.l2) ~= "number" or S.l2 < 0 then error("logreg: option 'l2' must be a number >= 0", 0) end
  S.clocks = posint(opts, "clocks", 1, 0)
  local lo = { features = S.T.keys, heldout = opts.heldout or 0.2, seed = posint(opts, "split_seed", 1, 0),
               split = "train" }
  if opts.placement then
    lo.placement, lo.node, lo.nodes = opts.placement, ctx.node, ctx.nodes
    lo.part, lo.parts = ctx.local_worker, ctx.workers_per_node
  else
    lo.part, lo.parts = ctx.worker, ctx.workers
  end
  local D, err = K.logreg_load(opts.data, lo)
  if not D then error(err, 0) end
  S.D = D
  S.rho = opts.rho or 0.1
  if type(S.rho) ~= "number" or not (S.rho >= 0 and S.rho <= 1) then error("logreg: option 'rho' must be in [0, 1]", 0) end
  if S.opt == "dbpg" then
    local nb = posint(opts, "blocks", 64)
    if opts.bounds ~= nil then
      if type(opts.bounds) ~= "table" or #opts.bounds ~= nb + 1 then
        error("logreg: option 'bounds' must hold blocks + 1 keys", 0)
      end
    end
    S.nb = D:blocks(nb, S.T.keys, opts.bounds)
    S.bufs = {}
  else
    S.nb = D:batches(posint(opts, "batch", 1000))
    S.bkeys = {}
    for b = 1, S.nb do S.bkeys[b] = D:batch_keys(b) end
  end
  return { examples = D:examples(), nnz = D:nnz(), positives = D:positives(), keys = #D:keys() }
end

-- dbpg: one registration push (0, -1) per key this worker will push.
function M.start(ctx)
  local D = S.D
  local r = { examples = D:examples(), nnz = D:nnz(), positives = D:positives(), keys = #D:keys() }
  -- once: a second registration would make the rule wait for pushes that never come
  if S.opt ~= "dbpg" or S.started then return r end
  S.started = true
  local keys = D:keys()
  local n = #keys
  if n > 0 then
    local m = cr.core.util.matrix(n, 2)
    for i = 1, n do m:set(i, 2, -1) end
    S.T:push(keys, m)
  end
  return r
end

-- Block b's active keys and its push and pull matrices, kept from epoch to
-- epoch until the KKT filter drops keys of the block.
local function block_bufs(b)
  local c = S.bufs[b]
  local n = S.D:block_active(b)
  if c and c.n == n then return c end
  c = { n = n }
  if n > 0 then
    c.keys, c.out, c.rows = S.D:block_keys(b), cr.core.util.matrix(n, 2), cr.core.util.matrix(n, 2)
  end
  S.bufs[b] = c
  return c
end

local function epoch_dbpg(ctx)
  local D, T = S.D, S.T
  local dropped = 0
  for b = 1, S.nb do
    local c = block_bufs(b)
    if c.n > 0 then
      D:block_grad(b, c.out, S.rho)
      T:push(c.keys, c.out)
    end
    ctx:clock()
    if c.n > 0 then dropped = dropped + D:block_update(b, T:pull(c.keys, c.rows)) end
  end
  ctx:progress(D:examples())
  return { loss = D:loss(), examples = D:examples(), skipped = D:skipped(), dropped = dropped }
end

local function epoch_batches(ctx)
  local D, T = S.D, S.T
  local loss, ticked = 0.0, 0
  local l2 = S.opt == "adagrad" and S.l2 or 0
  for b = 1, S.nb do
    local keys = S.bkeys[b]
    local w = T:pull(keys)
    local g = cr.core.util.matrix(#keys, 1)
    loss = loss + D:batch_grad(b, w, g, l2)
    T:push(keys, g)
    while ticked < (b * S.clocks) // S.nb do ctx:clock(); ticked = ticked + 1 end
  end
  while ticked < S.clocks do ctx:clock(); ticked = ticked + 1 end
  ctx:progress(D:examples())
  return { loss = loss, examples = D:examples() }
end

function M.epoch(ctx)
  if S.opt == "dbpg" then return epoch_dbpg(ctx) end
  return epoch_batches(ctx)
end

function M.objective(ctx)
  local D = S.D
  if S.opt ~= "dbpg" and D:examples() > 0 then D:margins_keys(S.T:pull(D:keys())) end
  return { loss = D:loss(), examples = D:examples() }
end

return M
