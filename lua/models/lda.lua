-- Latent Dirichlet allocation by collapsed Gibbs sampling on the parameter
-- server (thesis 3.4; the LightLDA / YahooLDA lineage), run by every worker.
--
-- Where the state lives:
--   * the word-topic counts n_wk (V keys x K) and the topic totals n_k (one
--     key x K) are integer parameter tables (dtype "i32", optimizer add):
--     workers push count deltas, so the tables stay exact;
--   * the documents are split over the workers (document j of the training
--     split goes to worker j % workers) and stay there with their tokens'
--     topics; a document's topic counts n_dk are rebuilt from its topics
--     when the sampler visits it (kernels.lda_load, src/kernels/cr_lda.c).
--
-- One epoch = one sweep over the worker's tokens, chunk by chunk (opts.chunk
-- tokens of whole documents, 4000000 by default): the rows of the chunk's
-- words and n_k are pulled (the pull for the next chunk is issued before the
-- current chunk is sampled, so it travels while the kernel runs), the chunk
-- is sampled against that snapshot plus its own changes, and the count
-- changes are pushed as one delta per row (not per token). Other workers'
-- changes reach a worker with its next pull: the staleness is at most one
-- chunk plus what the consistency policy allows (clocks below).
--
-- Samplers (opts.sampler): "mh" (default): LightLDA's amortized O(1)
-- Metropolis-Hastings, alternating a word proposal from alias tables of
-- the chunk's snapshot with a document proposal, `mh_steps` cycles per
-- token, exact acceptance ratios; "plain": the O(K) collapsed Gibbs
-- conditional, the reference.
--
-- Consistency: every worker calls ctx:clock() exactly `clocks` times per
-- epoch (default 1: at its end), when its sampled tokens pass 1/c, 2/c, ...
-- of its share, so bsp, ssp and asp hold the workers together as they say.
-- Every push is waited for before a clock, so at a barrier the tables hold
-- every sampled assignment: n_wk(w, k) equals the number of tokens of word
-- w with topic k over all workers (M.counts reads a worker's share of that
-- for the invariant test).
--
-- Calls from the job script (job:call):
--   start{}                 every worker pushes the counts of its initial
--                           (uniformly random, seeded) topics; once, first
--   epoch{epoch=}           -> {tokens, changed, seconds}
--   loglik{}                -> {word_ll, doc_ll, tokens}: this worker's part
--                           of the collapsed log-likelihood log p(w, z):
--                           the doc part of its documents, and the word part
--                           of the n_wk rows in its slice of the keys
--                           (worker 0 adds the n_k part)
--   counts{lo=, hi=}        -> {flat row-major (hi - lo) x K counts of this
--                           worker's assignments}
--   info{}                  -> {tokens}: this worker's training tokens
--   save_topics{table=, offsets=}
--                           every worker writes its tokens' topics to the
--                           i32 table `table` (one key per training token:
--                           worker w's at [offsets[w + 1], + its tokens)),
--                           so that job:save holds the whole assignment
--   restore_topics{table=, offsets=}
--                           the reverse, after job:load: every worker reads
--                           its tokens' topics back (instead of start{}; the
--                           counts come from the checkpoint's n_wk and n_k)
-- Options (job:model("lda", opts)): data (path), format ("libsvm" | "text"),
--   vocab (text format: the words, id = position - 1), V (vocabulary size),
--   K, alpha, beta, sampler, mh_steps (2), chunk (4000000), heldout_every
--   (0: every document trains), clocks (1), nwk / nk (table names, "n_wk"
--   and "n_k").
local K = cr.core.kernels

local M = {}
local S = {}

local known = { data = true, format = true, vocab = true, V = true, K = true, alpha = true, beta = true,
                sampler = true, mh_steps = true, chunk = true, heldout_every = true, clocks = true,
                nwk = true, nk = true, memory_mb = true }

local function posint(opts, k, default, min)
  local v = opts[k]
  if v == nil then return default end
  v = math.tointeger(v)
  if not v or v < (min or 1) then error(("lda: option '%s' must be an integer >= %d"):format(k, min or 1), 0) end
  return v
end

local function positive(opts, k)
  local v = opts[k]
  if type(v) ~= "number" or not (v > 0) or v == math.huge then
    error(("lda: option '%s' must be a number > 0"):format(k), 0)
  end
  return v
end

local function tbl(ctx, name)
  return ctx.tables[name] or error("lda: no table '" .. name .. "'", 0)
end

function M.init(ctx, opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not known[k] then error("lda: unknown option '" .. tostring(k) .. "'", 0) end
  end
  if type(opts.data) ~= "string" then error("lda: option 'data' (path of the corpus) is required", 0) end
  S.K, S.V = posint(opts, "K", nil, 2), posint(opts, "V", nil, 1)
  if not S.K then error("lda: option 'K' must be an integer >= 2", 0) end
  if not S.V then error("lda: option 'V' (vocabulary size) is required", 0) end
  S.alpha, S.beta = positive(opts, "alpha"), positive(opts, "beta")
  S.sampler = opts.sampler or "mh"
  if S.sampler ~= "mh" and S.sampler ~= "plain" then error("lda: option 'sampler' must be \"mh\" or \"plain\"", 0) end
  S.mh_steps = posint(opts, "mh_steps", 2)
  S.clocks = posint(opts, "clocks", 1, 0)
  S.NWK, S.NK = tbl(ctx, opts.nwk or "n_wk"), tbl(ctx, opts.nk or "n_k")
  if S.NWK.dim ~= S.K or S.NK.dim ~= S.K then error("lda: tables n_wk and n_k must have dim K", 0) end
  local C, err = K.lda_load(opts.data, { format = opts.format or "libsvm", vocab = opts.vocab, V = S.V,
                                         part = ctx.worker, parts = ctx.workers,
                                         heldout_every = posint(opts, "heldout_every", 0, 0), split = "train" })
  if not C then error(err, 0) end
  C:init(S.K, ctx.seed * 7919 + ctx.worker)
  S.nchunks = C:chunks(posint(opts, "chunk", 4000000))
  S.C, S.seed, S.worker, S.workers = C, ctx.seed, ctx.worker, ctx.workers
  S.dk = cr.core.util.matrix(1, S.K, "i32")
  S.zero = cr.core.util.ints { 0 }
  return { docs = C:docs(), tokens = C:tokens() }
end

-- With at most two chunks per worker (the default on gcide: one), each
-- chunk keeps its row and change matrices from sweep to sweep: at K = 1000
-- they are 150 MB each, and a new one every sweep cost 7% of the sweep in
-- allocation and page faults. With more chunks they are made per chunk
-- (keeping them all would hold every chunk's rows at once).
local function buffers(c, n)
  local b = S.bufs and S.bufs[c]
  if b then return b end
  b = { rows = cr.core.util.matrix(n, S.K, "i32"), dwk = cr.core.util.matrix(n, S.K, "i32") }
  if S.nchunks <= 2 then S.bufs = S.bufs or {}; S.bufs[c] = b end
  return b
end

-- Push the counts of every chunk's current assignment (tables start at
-- zero; n_k's add rule sums the chunks' topic totals).
function M.start(ctx)
  for c = 1, S.nchunks do
    local keys = S.C:chunk_keys(c)
    local dwk = buffers(c, #keys).dwk
    S.C:counts(c, dwk, S.dk)
    S.NWK:push(keys, dwk)
    S.NK:push(S.zero, S.dk)
  end
  return { tokens = S.C:tokens() }
end

local function pull_chunk(c)
  local keys = S.C:chunk_keys(c)
  local b = buffers(c, #keys)
  return { c = c, keys = keys, dwk = b.dwk, rows = S.NWK:pull_async(keys, b.rows), nk = S.NK:pull_async(S.zero) }
end

function M.epoch(ctx, args)
  local C, t0 = S.C, cr.core.util.now()
  local share = math.max(C:tokens(), 1)
  local opts = { sampler = S.sampler, alpha = S.alpha, beta = S.beta, mh_steps = S.mh_steps }
  local tokens, changed, ticked = 0, 0, 0
  local pw, pk -- this chunk's pushes, in flight
  local function wait_pushes()
    if pw then S.NWK:wait(pw); S.NK:wait(pk); pw, pk = nil, nil end
  end
  local nxt = S.nchunks > 0 and pull_chunk(1) or nil
  while nxt do
    local cur = nxt
    local rows, nk = S.NWK:wait(cur.rows), S.NK:wait(cur.nk)
    -- the next chunk's rows travel while this one samples; they miss this
    -- chunk's changes to shared words (a staler snapshot, exact counts)
    nxt = cur.c < S.nchunks and pull_chunk(cur.c + 1) or nil
    wait_pushes()
    local dwk = cur.dwk
    opts.seed = (S.seed * 1000003 + S.worker) * 1009 + (args.epoch or 0) * 131 + cur.c
    local n, ch = C:sample(cur.c, rows, nk, dwk, S.dk, opts)
    if nxt then -- async (the rows are copied) so the next chunk samples meanwhile
      pw, pk = S.NWK:push_async(cur.keys, dwk), S.NK:push_async(S.zero, S.dk)
    else -- the sweep's last chunk: nothing to overlap, so no copy
      S.NWK:push(cur.keys, dwk); S.NK:push(S.zero, S.dk)
    end
    tokens, changed = tokens + n, changed + ch
    ctx:progress(n)
    while ticked < S.clocks - 1 and tokens >= (ticked + 1) * share / S.clocks do
      wait_pushes()
      ctx:clock(); ticked = ticked + 1
    end
  end
  wait_pushes()
  while ticked < S.clocks do ctx:clock(); ticked = ticked + 1 end
  return { tokens = tokens, changed = changed, seconds = cr.core.util.now() - t0 }
end

function M.info(ctx)
  return { tokens = S.C:tokens() }
end

-- The keys [lo, hi) of this worker's tokens in the topics table, checked
-- against the table and the worker's token count.
local function topic_range(ctx, args, op)
  local Z = tbl(ctx, tostring(args.table))
  local offs = args.offsets
  local lo = type(offs) == "table" and math.tointeger(offs[S.worker + 1])
  local n = S.C:tokens()
  if not lo or lo < 0 or lo + n > Z.keys or Z.dim ~= 1 then
    error(("lda: %s: table '%s' (%d keys, dim %d) has no room for worker %d's %d tokens at offset %s")
      :format(op, args.table, Z.keys, Z.dim, S.worker, n, tostring(offs and offs[S.worker + 1])), 0)
  end
  return Z, lo, lo + n
end

-- Topics travel in pieces of STEP tokens: a worker holds one piece at a
-- time (4 bytes a topic, 8 a key), whatever its share. move(Z, first
-- token, count) moves one piece of this worker's tokens, at keys lo + first.
local STEP = 1 << 20

local function by_pieces(ctx, args, op, move)
  local Z, lo, hi = topic_range(ctx, args, op)
  for f = 0, hi - lo - 1, STEP do move(Z, lo, f, math.min(STEP, hi - lo - f)) end
  return { tokens = hi - lo }
end

function M.save_topics(ctx, args)
  return by_pieces(ctx, args, "save_topics", function(Z, lo, f, n)
    Z:push_range(lo + f, lo + f + n, S.C:topics(f, n))
  end)
end

function M.restore_topics(ctx, args)
  return by_pieces(ctx, args, "restore_topics", function(Z, lo, f, n)
    S.C:set_topics(Z:pull_range(lo + f, lo + f + n), f)
  end)
end

-- This worker's part of log p(w, z) (see the header): the caller sums.
function M.loglik(ctx)
  local V, W = S.V, S.workers
  local lo, hi = V * S.worker // W, V * (S.worker + 1) // W
  local word = 0.0
  local step = math.max(1, 4000000 // S.K)
  for k0 = lo, hi - 1, step do
    local n = math.min(step, hi - k0)
    local keys = cr.core.util.ints(n)
    for i = 1, n do keys:set(i, k0 + i - 1) end
    word = word + K.lda_word_loglik(S.NWK:pull(keys), S.beta)
  end
  if S.worker == 0 then
    -- sum_k [lgamma(V beta) - lgamma(n_k + V beta)]
    word = word - K.lda_word_loglik(S.NK:pull(S.zero), V * S.beta)
  end
  return { word_ll = word, doc_ll = S.C:doc_loglik(S.alpha), tokens = S.C:tokens() }
end

-- This worker's assignment counts of words [lo, hi), flat row-major.
function M.counts(ctx, args)
  local m = S.C:word_topic_counts(args.lo, args.hi)
  local out = {}
  for i = 1, m:rows() do
    for k = 1, S.K do out[#out + 1] = m:get(i, k) end
  end
  return { counts = out }
end

return M
