-- Knowledge-graph embeddings (NuPS section 5.1), run by every worker.
--
-- Models: complex, distmult, transe_l1, transe_l2, rescal (scores in
-- src/kernels/cr_kge.h). Tables: E (one row per entity, dim d) and R (one row
-- per relation: d floats, or d*d for rescal), both with an adagrad optimizer
-- on the server (the job script makes them). Loss per triple: logistic,
-- softplus(-f) for a positive and softplus(f) for a negative, plus
-- lambda (|e_s|^2 + |w_r|^2 + |e_o|^2) (per-update L2).
--
-- Negatives: each positive (s, r, o) is followed by `neg` corruptions of its
-- subject and `neg` of its object, the entities drawn through the PS sampling
-- API from the distribution `dist` over E (the job script declares it:
-- job:distribution{name = "neg", table = "E", kind = "uniform"}). The rows
-- pull_sample returns are the rows the kernel uses for the negatives (the
-- batcher's negrows layout): they are not pulled a second time. The next
-- batch's samples are prepared and fetched (pull_sample_async) while the
-- kernel runs on the current one.
--
-- Data: every worker reads the training triples and keeps triple i iff
-- i % workers == worker (in C, kernels.kge_batches{part, parts}). Each epoch
-- it walks its share in a fresh seeded order, in batches of `batch`
-- positives. Per batch: pull the positives' entity rows and the relation
-- rows, take the negatives' keys and rows from the sampler, ONE kernel call
-- (kernels.kge_step) computes the loss and the gradient over the whole batch
-- (1 + 2 neg triples per positive), then push the gradients (the servers
-- apply adagrad) without waiting: the next batch's pulls see them (per-key
-- consistency; see step). Lua never loops over triples.
--
-- opts (job:model("kge", opts)): model (required), train (path, required),
--   valid, test (paths), entities, relations (paths of ID<TAB>NAME files;
--   without them the names of train, then valid and test, are numbered in
--   order of appearance, the same on every worker), neg = 1, batch = 1000,
--   lambda = 0, e = "E", r = "R" (table names), dist = "neg" (the
--   distribution), sampling = true (false: uniform negatives drawn by the
--   batcher itself and pulled; for comparisons), clocks = 4 (ctx:clock calls
--   per epoch, spread over the batches, so a consistency policy governs the
--   run as in lua/models/mf.lua), localize = false (true: batches one
--   ahead, moved to this node, for tables managed by relocation:
--   epoch_ahead).
-- M.epoch args: epoch (number, seeds the walk), localize (false: the plain
--   loop this epoch even with opts.localize, when no key relocates; the
--   example passes it from the tables' census). Returns {loss, reg,
--   positives, triples}.
-- M.evaluate args: set = "valid" | "test". Each worker ranks its share of
--   the set against all entities (filtered by train, valid and test) and
--   returns sums {rr, hits1, hits3, hits10, rank, queries}: MRR = rr / queries
--   at the scheduler.

local K = cr.core.kernels
local D = cr.core.data
local U = cr.core.util

local M = {}
local S = {} -- this worker's state

local known = { model = true, train = true, valid = true, test = true, entities = true, relations = true,
                neg = true, batch = true, lambda = true, e = true, r = true, dist = true, sampling = true,
                clocks = true, memory_mb = true, allow_read = true, localize = true }
local models = { complex = true, distmult = true, transe = true, transe_l1 = true, transe_l2 = true, rescal = true }

local function int_opt(opts, k, dflt, lo)
  local v = opts[k] == nil and dflt or math.tointeger(opts[k])
  if not v or v < lo then error(("kge: option '%s' must be an integer >= %d"):format(k, lo), 0) end
  return v
end

-- Triples of path with ids from the dictionaries (reader errors are
-- "file:line: ..." and end the init).
local function read(path, dicts)
  local t, err = D.triples(path, dicts)
  if not t then error(err, 0) end
  return t
end

local function load(opts)
  local dicts = { entities = opts.entities, relations = opts.relations }
  local train = read(opts.train, (opts.entities or opts.relations) and dicts or nil)
  -- without dictionary files, train numbered the names: valid and test
  -- must use the same numbering (a name train lacks is an error)
  if not opts.entities then dicts.entities = train.entities end
  if not opts.relations then dicts.relations = train.relations end
  local valid = opts.valid and read(opts.valid, dicts)
  local test = opts.test and read(opts.test, dicts)
  return train, valid, test
end

-- This worker's share of an evaluation set as a flat Ints {s, r, o, ...}
-- (once per set, at init: evaluation only).
local function share(t, part, parts)
  local n = t.n > part and (t.n - part + parts - 1) // parts or 0
  local v = U.ints(3 * n)
  for i = 0, n - 1 do
    local j = part + i * parts
    v:set(3 * i + 1, t.s:get(j + 1))
    v:set(3 * i + 2, t.r:get(j + 1))
    v:set(3 * i + 3, t.o:get(j + 1))
  end
  return v
end

local function range_ints(n)
  local v = U.ints(n)
  for i = 1, n do v:set(i, i - 1) end
  return v
end

function M.init(ctx, opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not known[k] then error("kge: unknown option '" .. tostring(k) .. "'", 0) end
  end
  if not models[opts.model] then
    error(("kge: unknown model '%s' (complex, distmult, transe_l1, transe_l2, rescal)"):format(tostring(opts.model)), 0)
  end
  if type(opts.train) ~= "string" then error("kge: option 'train' (path of the training triples) is required", 0) end
  S.model = opts.model
  S.neg = int_opt(opts, "neg", 1, 0)
  S.batch = int_opt(opts, "batch", 1000, 1)
  S.clocks = int_opt(opts, "clocks", 4, 0)
  S.lambda = opts.lambda or 0
  if type(S.lambda) ~= "number" or S.lambda < 0 then error("kge: option 'lambda' must be a number >= 0", 0) end
  S.E = ctx.tables[opts.e or "E"] or error("kge: no table '" .. (opts.e or "E") .. "'", 0)
  S.R = ctx.tables[opts.r or "R"] or error("kge: no table '" .. (opts.r or "R") .. "'", 0)
  local d = S.E.dim
  local dr = S.model == "rescal" and d * d or d
  if S.R.dim ~= dr then
    error(("kge: table %s has dim %d, %s needs %d (%s)"):format(S.R.name, S.R.dim, S.model, dr,
          S.model == "rescal" and "d*d" or "the entity dim"), 0)
  end
  if S.model == "complex" and d % 2 ~= 0 then error(("kge: complex needs an even dim (got %d)"):format(d), 0) end
  S.dist = opts.dist or "neg"
  S.sampling = opts.sampling ~= false
  S.localize = opts.localize and true or false
  local train, valid, test = load(opts)
  if train.n_ent > S.E.keys or train.n_rel > S.R.keys then
    error(("kge: the data has %d entities and %d relations, tables %s and %s hold %d and %d"):format(
          train.n_ent, train.n_rel, S.E.name, S.R.name, S.E.keys, S.R.keys), 0)
  end
  S.batches = K.kge_batches(train, { batch = S.batch, neg = S.neg, entities = S.E.keys, relations = S.R.keys,
                                     seed = ctx.seed, part = ctx.worker, parts = ctx.workers, negrows = true })
  S.filter = { train }
  if valid then S.filter[#S.filter + 1] = valid end
  if test then S.filter[#S.filter + 1] = test end
  S.sets = {}
  if valid then S.sets.valid = share(valid, ctx.worker, ctx.workers) end
  if test then S.sets.test = share(test, ctx.worker, ctx.workers) end
  return { positives = S.batches:count(), entities = train.n_ent, relations = train.n_rel,
           valid = valid and valid.n or 0, test = test and test.n or 0 }
end

-- Negatives: start fetching n sampled entities (keys and rows), and wait for
-- them. Through the sampling API unless opts.sampling = false.
local function neg_start(n)
  if n == 0 then return nil end
  if S.sampling then
    local h = S.E:prepare_sample(S.dist, n)
    return { id = S.E:pull_sample_async(h, n) }
  end
  local keys = S.batches:draw(n)
  return { keys = keys, id = S.E:pull_async(keys) }
end

local function neg_wait(q)
  if not q then return U.ints(0), U.matrix(0, S.E.dim) end
  if S.sampling then return S.E:wait(q.id) end
  return q.keys, S.E:wait(q.id)
end

-- Pushes go out without waiting (push_async): a later pull of the same key
-- by this worker sees them (per-key consistency: its own node's shard or
-- replica applied them at once, a home applies its requests in arrival
-- order), so the next batch's pulls need not wait for their answers. A
-- batch waits for the previous batch's pushes after its own pulls were
-- answered (by then their answers are in: same homes, earlier requests), so
-- at most one batch of pushes is in flight, and their errors surface.
local function wait_pushes(pending)
  for i = #pending, 1, -1 do
    local p = pending[i]
    pending[i] = nil
    p[1]:wait(p[2])
  end
end

-- One batch: the pulls (started together by the caller: pull_async), ONE
-- kernel call, the pushes (asynchronous, see above). Returns loss, reg,
-- triples.
local function step(E, R, opt, pe, pr, ekeys, rkeys, batch, nkeys, nrows, pending)
  local Em, Rm = E:wait(pe), R:wait(pr)
  local gE, gR, gS = U.matrix(Em:rows(), E.dim), U.matrix(Rm:rows(), R.dim), U.matrix(nrows:rows(), E.dim)
  opt.es, opt.ges = nrows, gS
  local l, r, n = K.kge_step(S.model, Em, Rm, gE, gR, batch, opt)
  wait_pushes(pending)
  pending[1] = { E, E:push_async(ekeys, gE) }
  pending[2] = { R, R:push_async(rkeys, gR) }
  if #nkeys > 0 then pending[3] = { E, E:push_async(nkeys, gS) } end
  return l, r, n
end

-- With relocation (S.localize, docs/management.md) the batches are taken one
-- ahead: while batch i trains, batch i+1 (its positives' entities and
-- relations, and its negatives, whose rows the sampler fetched during batch
-- i-1) is moved to this node with localize, and waited for before it
-- trains, so its pulls and pushes are local. The negatives' rows are then
-- one batch older than without relocation. On tables that do not relocate
-- localize returns at once.
local function epoch_ahead(E, R, B, opt, tick, pending)
  local q = neg_start(B:needs())
  local function take()
    local nkeys, nrows = neg_wait(q)
    local ekeys, rkeys, batch, pos = B:next(nkeys)
    if not ekeys then return nil end
    q = neg_start(B:needs())
    return { ekeys, rkeys, batch, pos, nkeys, nrows,
             le = E:localize(ekeys), ln = #nkeys > 0 and E:localize(nkeys), lr = R:localize(rkeys) }
  end
  local cur = take()
  while cur do
    local nxt = take()
    E:wait(cur.le)
    if cur.ln then E:wait(cur.ln) end
    R:wait(cur.lr)
    local l, r, n = step(E, R, opt, E:pull_async(cur[1]), R:pull_async(cur[2]), cur[1], cur[2], cur[3], cur[5],
                         cur[6], pending)
    tick(l, r, cur[4], n)
    cur = nxt
  end
end

function M.epoch(ctx, args)
  local E, R, B = S.E, S.R, S.batches
  B:shuffle(ctx.seed * 1000003 + ctx.worker * 7919 + ((args and args.epoch) or 0))
  local opt = { lambda = S.lambda }
  local loss, reg, npos, ntrip = 0.0, 0.0, 0, 0
  local nb, done, ticked = B:batches(), 0, 0
  local pending = {} -- this worker's pushes in flight (step)
  local function tick(l, r, pos, n)
    loss, reg, npos, ntrip = loss + l, reg + r, npos + pos, ntrip + n
    ctx:progress(pos)
    done = done + 1
    local due = (done * S.clocks) // nb
    if ticked < due then wait_pushes(pending) end -- a clock covers this worker's updates before it
    while ticked < due do ctx:clock(); ticked = ticked + 1 end
  end
  if S.localize and not (args and args.localize == false) then
    epoch_ahead(E, R, B, opt, tick, pending)
  else
    local q = neg_start(B:needs())
    while true do
      local nkeys, nrows = neg_wait(q)
      local ekeys, rkeys, batch, pos = B:next(nkeys)
      if not ekeys then break end
      -- this batch's rows (after the previous batch's pushes, which they see)
      -- travel while the next batch's negatives are drawn and requested
      local pe, pr = E:pull_async(ekeys), R:pull_async(rkeys)
      q = neg_start(B:needs()) -- the next batch's negatives arrive while this one runs
      local l, r, n = step(E, R, opt, pe, pr, ekeys, rkeys, batch, nkeys, nrows, pending)
      tick(l, r, pos, n)
    end
  end
  wait_pushes(pending) -- the epoch ends with every update applied
  while ticked < S.clocks do ctx:clock(); ticked = ticked + 1 end
  return { loss = loss + reg, logloss = loss, reg = reg, positives = npos, triples = ntrip }
end

-- Filtered ranks of this worker's share of the set, as sums.
function M.evaluate(ctx, args)
  local set = args and args.set or "test"
  local mine = S.sets[set]
  if not mine then error("kge: no " .. tostring(set) .. " set loaded (pass opts." .. tostring(set) .. ")", 0) end
  if #mine == 0 then return { rr = 0, hits1 = 0, hits3 = 0, hits10 = 0, rank = 0, queries = 0 } end
  S.all_e = S.all_e or range_ints(S.E.keys)
  S.all_r = S.all_r or range_ints(S.R.keys)
  local r, err = cr.core.eval.link_prediction { model = S.model, entities = S.E:pull(S.all_e),
                                                relations = S.R:pull(S.all_r), test = mine, filter = S.filter }
  if not r then error("kge: " .. tostring(err), 0) end
  local q = r.queries
  return { rr = r.mrr * q, hits1 = r.hits1 * q, hits3 = r.hits3 * q, hits10 = r.hits10 * q, rank = r.mr * q,
           queries = q }
end

return M
