-- Word vectors: skip-gram or CBOW with negative sampling (Mikolov et al.'s
-- word2vec tool; NuPS section 5.1), run by every worker.
--
-- Tables: `in` (input vectors, the tool's syn0: uniform in [-0.5/d, 0.5/d],
-- which the job script sets) and `out` (output vectors, syn1neg: zero), both
-- with the add optimizer (cr.optim.add): a worker pushes the change of each
-- row (after - before), so the owner adds exactly what the kernel did to the
-- copy. A third table of one key (`progress`, dim 1, zero, add) counts the
-- corpus words done by all workers: each batch pushes its words, so every
-- worker reads the job's global progress (asynchronously, one batch late)
-- for the learning rate, which decays
-- linearly from alpha to alpha * 1e-4 over epochs * (vocabulary words) as in
-- the tool (whose threads share one counter the same way).
--
-- Corpus: streamed (kernels.w2v_reader): worker w of W takes the lines with
-- (line - 1) % W == w, one batch of whole lines at a time (opts.batch corpus
-- words, 50000 by default), subsampled with the tool's rule (threshold
-- sample), so a worker holds one batch and the vocabulary, never the corpus.
-- The job script counts the vocabulary once (kernels.w2v_vocab, min_count)
-- and passes it as text ("word count" lines), so every worker maps words to
-- the same ids (ids = keys of both tables, by descending count).
--
-- Per batch: the distinct words of the batch (keys) are pulled from `in` and
-- `out`; the negatives come from the PS sampling API (distribution `neg` over
-- `out`, counts^0.75, declared by the job script) as a pool of `pool`
-- samples (keys and their `out` rows), prepared one batch ahead with
-- pull_sample_async, so the next batch's pool is drawn and its remote rows
-- fetched while this batch trains; one kernel call (R:train) runs the tool's
-- loop over every sentence of the batch on the copies, each update picking
-- its `negative` negatives uniformly from the pool; then both changes are
-- pushed. Lua never loops over tokens.
--
-- Negatives and conformity (docs/models.md, NuPS section 4): the tool draws
-- `negative` fresh words for every (context, center) pair, about 14 per
-- corpus word on gcide-brown with sample 1e-4 (2.8 pairs per word times 5);
-- a row-copying draw per negative would copy more rows than the batch
-- itself holds. Here a batch draws `pool` samples (default batch / 5: 10000
-- for 50000 words) and each is used about pairs * negative / pool times
-- (~70 there), at uniformly random positions of the batch. Every negative is
-- still marginally distributed as counts^0.75 (the pool is drawn from it,
-- picks are uniform), but the negatives of one batch share one pool: under
-- the conform scheme (L1) the model's negatives are at the bounded level L2
-- with B = the negatives of one batch (conditional on samples outside the
-- batch, a negative is distributed as pi); under bounded.lua (pools of G
-- reused U times) the reuse multiplies and B grows to cover both. A smaller
-- pool copies fewer rows (faster) and reuses more; on gcide-brown pools of
-- batch / 5 and batch / 2 gave the same synonym accuracy (docs/models.md).
-- A pool word that is also a word of the batch uses the batch's freshly
-- pulled row (one row for both roles, as in the tool); only pool words not
-- in the batch use the row fetched with the sample, one batch older.
--
-- Between a worker's pull and its push, other workers update the same rows
-- (frequent words are in every batch): their changes meet at the owner as
-- sums, like the tool's lock-free threads, one batch late.
--
-- Consistency: with clocks = c > 0 every worker calls ctx:clock() c times
-- per epoch, when its corpus words pass 1/c, 2/c, ... of its share (raw /
-- workers; the rest at the end of the epoch), so a policy (bsp, ssp, ...)
-- can hold workers together; the default 0 never waits, as the tool's
-- threads never do.
--
-- opts (job:model("word2vec", opts)): corpus (path), vocab (text, above),
--   words (vocabulary words in the corpus: the count behind the decay),
--   raw (all corpus words: for clocks), clocks = 0,
--   epochs (for the decay), model = "sg" | "cbow", window = 5, negative = 5,
--   alpha = 0.025, sample = 1e-3, batch = 50000, pool = batch / 5,
--   max_sentence = 1000, dist = "neg", input = "in", output = "out",
--   progress = "progress", loss = false (the loss costs an exp and a log
--   per target: off unless asked), localize = false (true: move each
--   batch's words here, for tables managed by relocation).
--
-- Relocation (docs/management.md): when `in` and `out` are managed by
-- relocation, the words of the batch after the current one are localized
-- while the current one trains (the reader reads one batch ahead, R:peek)
-- and waited for before that batch trains, so its pulls and pushes find
-- the rows local. Replicated keys and classic keys need nothing (localize
-- returns at once).
-- M.epoch args: epoch (1-based). Returns { words, raw, kept, pairs, loss,
--   seconds } for this worker (sums at the scheduler).
local K = cr.core.kernels

local M = {}
local S = {}

local known = { corpus = true, vocab = true, words = true, epochs = true, model = true, window = true,
                negative = true, alpha = true, sample = true, batch = true, pool = true, max_sentence = true,
                dist = true, input = true, output = true, progress = true, loss = true, memory_mb = true,
                raw = true, clocks = true, localize = true }

local function posint(opts, k, default, min)
  local v = opts[k]
  if v == nil then return default end
  v = math.tointeger(v)
  if not v or v < (min or 1) then error(("word2vec: option '%s' must be an integer >= %d"):format(k, min or 1), 0) end
  return v
end

local function number(opts, k, default)
  local v = opts[k]
  if v == nil then return default end
  if type(v) ~= "number" or v < 0 or v ~= v then error(("word2vec: option '%s' must be a number >= 0"):format(k), 0) end
  return v
end

local function tbl(ctx, name)
  return ctx.tables[name] or error("word2vec: no table '" .. name .. "'", 0)
end

function M.init(ctx, opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not known[k] then error("word2vec: unknown option '" .. tostring(k) .. "'", 0) end
  end
  if type(opts.corpus) ~= "string" then error("word2vec: option 'corpus' (path of a text file) is required", 0) end
  if type(opts.vocab) ~= "string" then error("word2vec: option 'vocab' (\"word count\" lines) is required", 0) end
  local model = opts.model or "sg"
  if model ~= "sg" and model ~= "cbow" then error("word2vec: option 'model' must be \"sg\" or \"cbow\"", 0) end
  S.train = { model = model, window = posint(opts, "window", 5), negative = posint(opts, "negative", 5, 0),
              alpha = 0.025, loss = opts.loss and true or false }
  S.alpha = number(opts, "alpha", 0.025)
  S.epochs = posint(opts, "epochs", 1)
  S.words = posint(opts, "words", 1)
  S.clocks = posint(opts, "clocks", 0, 0)
  S.share = posint(opts, "raw", S.words) / ctx.workers -- this worker's corpus words, about
  local batch = posint(opts, "batch", 50000)
  S.pool = posint(opts, "pool", math.max(1, batch // 5))
  S.dist = opts.dist or "neg"
  S.localize = opts.localize and true or false
  S.IN, S.OUT = tbl(ctx, opts.input or "in"), tbl(ctx, opts.output or "out")
  S.PROG = tbl(ctx, opts.progress or "progress")
  if S.IN.dim ~= S.OUT.dim then error("word2vec: tables in and out must have the same dim", 0) end
  local R, err = K.w2v_reader(opts.corpus, opts.vocab, {
    part = ctx.worker, parts = ctx.workers, batch = batch, max_sentence = posint(opts, "max_sentence", 1000),
    sample = number(opts, "sample", 1e-3), seed = ctx.seed * 7919 + ctx.worker })
  if not R then error(err, 0) end
  S.R = R
  return { workers = ctx.workers }
end

-- The pool of negatives for the next batch: S.pool samples of distribution
-- S.dist over `out` (keys and their rows), drawn and fetched in the
-- background; sample_wait returns keys (Ints) and rows (Matrix).
local function sample_start()
  return S.OUT:pull_sample_async(S.OUT:prepare_sample(S.dist, S.pool), S.pool)
end

local function sample_wait(req)
  return S.OUT:wait(req)
end

function M.epoch(ctx, args)
  local epoch = math.tointeger(args and args.epoch) or 1
  local R, IN, OUT, PROG, tr = S.R, S.IN, S.OUT, S.PROG, S.train
  R:rewind(epoch)
  local zero = cr.core.util.ints { 0 }
  local count = cr.core.util.matrix(1, 1)
  local total = S.epochs * S.words + 1
  local t0 = cr.core.util.now()
  local words, raw, kept, pairs, loss, ticked = 0, 0, 0, 0, 0.0, 0
  local neg = tr.negative > 0
  local sreq = neg and sample_start() or nil
  local done = PROG:pull(zero):get(1, 1)
  local preq, qreq -- progress push and pull in flight
  -- with relocation: the batch after the current one is moved here while
  -- the current one trains (R:peek reads it ahead), waited for before it
  -- trains
  local li, lo
  local push0, push1 -- this batch's pushes, in flight
  local function wait_pushes()
    if push0 then IN:wait(push0); OUT:wait(push1); push0, push1 = nil, nil end
  end
  local function ahead()
    local nk = S.localize and R:peek()
    if nk then li, lo = IN:localize(nk), OUT:localize(nk) end
  end
  ahead()
  while true do
    local keys, braw, bwords, bkept = R:next()
    if not keys then break end
    if li then IN:wait(li); OUT:wait(lo); li, lo = nil, nil end
    ahead()
    local pk, prow, okeys = nil, nil, keys
    if neg then
      pk, prow = sample_wait(sreq)
      sreq = sample_start() -- the next batch's pool, fetched while this one trains
      okeys = R:pool(pk)
    end
    tr.alpha = S.alpha * math.max(1 - done / total, 1e-4)
    -- both pulls travel together; the pushes go out without waiting and
    -- are waited for after the next batch's pulls were answered (a later
    -- pull of a key sees this worker's push of it: per-key consistency),
    -- so a batch waits for one round trip, not four
    local a0, a1 = IN:pull_async(keys), OUT:pull_async(keys)
    local s0, s1 = IN:wait(a0), OUT:wait(a1)
    wait_pushes()
    local d1, l, p = R:train(s0, s1, prow, tr)
    push0, push1 = IN:push_async(keys, s0), OUT:push_async(okeys, d1)
    -- the global count: this batch's words go out, and the total read
    -- back, without waiting (a remote worker would wait two round trips):
    -- the rate uses the total as of the previous batch
    if preq then PROG:wait(preq) end
    count:set(1, 1, bwords)
    preq = PROG:push_async(zero, count)
    if qreq then done = PROG:wait(qreq):get(1, 1) end
    qreq = PROG:pull_async(zero)
    words, raw, kept, pairs, loss = words + bwords, raw + braw, kept + bkept, pairs + p, loss + l
    ctx:progress(braw)
    while ticked < S.clocks - 1 and raw >= (ticked + 1) * S.share / S.clocks do
      wait_pushes() -- a clock covers this worker's updates before it
      ctx:clock(); ticked = ticked + 1
    end
  end
  wait_pushes() -- the epoch ends with every update applied
  while ticked < S.clocks do ctx:clock(); ticked = ticked + 1 end
  if li then IN:wait(li); OUT:wait(lo) end
  if sreq then sample_wait(sreq) end -- the pool for a batch that did not come
  if preq then PROG:wait(preq) end
  if qreq then PROG:wait(qreq) end
  return { words = words, raw = raw, kept = kept, pairs = pairs, loss = loss,
           seconds = cr.core.util.now() - t0 }
end

return M
