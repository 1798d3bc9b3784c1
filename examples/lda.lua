-- Topic models: latent Dirichlet allocation by collapsed Gibbs sampling on a
-- parameter server (lua/models/lda.lua), with word-topic counts in integer
-- tables and LightLDA's O(1) Metropolis-Hastings sampler.
--
--   make data          (builds data/gcide.svm and data/gcide.svm.vocab, among others)
--   crescent run examples/lda.lua [--nodes 2] [--workers 2] [--metrics lda.jsonl] [-- K=100 iterations=50 ...]
--
-- Script options (after "--", as name=value or --name value):
--   data (data/gcide.svm: a LIBSVM bag of words, "label id:count ...",
--   feature ids 1-based; or a plain-text corpus with format=text, one
--   document per line), format (libsvm | text), vocab (the words, one per
--   line as "word [count]", line n = feature id n; default data.vocab when it
--   exists; with format=text the vocabulary is counted from the corpus with
--   min_count), V (vocabulary size when there is no vocab file), min_count
--   (5, format=text), K (100), alpha (0.1), beta (0.01), sampler (mh | plain),
--   mh_steps (2), iterations (50), chunk (4000000 tokens of documents per
--   pull and push: one chunk per worker per sweep on gcide),
--   heldout_every (10: every 10th document is held out for the perplexity),
--   perplexity_every (0: held-out perplexity only at the end; N: also every N
--   iterations, its time not counted as training), clocks (1 per iteration,
--   for the consistency policy), topwords (a path: the 10 most frequent words
--   of each topic), quiet (0), checkpoint (a path: saved every
--   checkpoint_every (10) iterations and after the last, with every token's
--   topic; if it exists at start the run resumes from it and goes on to
--   `iterations`; the data, K and the number of workers must be those of
--   the saving run, docs/checkpoints.md).
--   Nodes, workers, seed, the consistency policy (--policy) and the metrics
--   file are options of `crescent run`.
-- Every iteration prints and logs loglik_per_token (the collapsed
-- log-likelihood log p(w, z) per training token) and tokens_per_s (training
-- tokens over the sampling time); the last record holds heldout_perplexity
-- (document completion on the held-out documents, cr.eval.lda_perplexity).
local cr = require "crescent"

local opt = { data = "data/gcide.svm", format = "libsvm", K = 100, alpha = 0.1, beta = 0.01, sampler = "mh",
              mh_steps = 2, iterations = 50, chunk = 4000000, heldout_every = 10, perplexity_every = 0,
              clocks = 1, min_count = 5, quiet = 0, checkpoint_every = 10 }
local numeric = { K = true, alpha = true, beta = true, mh_steps = true, iterations = true, chunk = true,
                  heldout_every = true, perplexity_every = true, clocks = true, min_count = true, quiet = true,
                  V = true, checkpoint_every = true }
local me = "examples/lda.lua"
local accept = { vocab = "string", topwords = "string", checkpoint = "string" }
for k in pairs(opt) do accept[k] = "string" end
for k in pairs(numeric) do accept[k] = "number" end
local _, given = cr.script.options(me, arg or {}, opt, accept)
local function int_opt(k, min)
  if opt[k] ~= nil and (not math.tointeger(opt[k]) or opt[k] < min) then
    error(("%s: option %s must be an integer >= %d, got %s"):format(me, k, min, tostring(opt[k])), 0)
  end
end
int_opt("K", 2); int_opt("iterations", 1); int_opt("mh_steps", 1); int_opt("chunk", 1); int_opt("V", 1)
int_opt("heldout_every", 0); int_opt("perplexity_every", 0); int_opt("clocks", 0); int_opt("min_count", 1)
int_opt("checkpoint_every", 1)
if opt.heldout_every == 1 then error(me .. ": option heldout_every must be 0 (none) or >= 2", 0) end
for _, k in ipairs { "alpha", "beta" } do
  if not (opt[k] > 0) then error(("%s: option %s must be > 0"):format(me, k), 0) end
end
if opt.sampler ~= "mh" and opt.sampler ~= "plain" then error(me .. ": option sampler must be mh or plain", 0) end
if opt.format ~= "libsvm" and opt.format ~= "text" then error(me .. ": option format must be libsvm or text", 0) end

local cwd = os.getenv("PWD")
local function abs(p) return (p:sub(1, 1) == "/" or not cwd) and p or (cwd .. "/" .. p) end
local say = opt.quiet == 0 and print or function() end
local Kr = cr.core.kernels
do
  local f = io.open(opt.data, "r")
  if not f then
    error(("%s: %s: cannot open the corpus%s"):format(me, opt.data, given.data and "" or " (make data builds it)"), 0)
  end
  f:close()
end
opt.data = abs(opt.data)

-- The vocabulary: words (for topwords) and V.
local words
if opt.format == "text" then
  words = Kr.lda_vocab(opt.data, opt.min_count)
  opt.V = #words
else
  local vpath = opt.vocab or (opt.data .. ".vocab")
  local f = io.open(vpath, "r")
  if f then
    words = {}
    for line in f:lines() do words[#words + 1] = line:match("^(%S+)") or "" end
    f:close()
    opt.V = opt.V or #words
  elseif opt.vocab then
    error(("%s: %s: cannot open the vocabulary"):format(me, opt.vocab), 0)
  end
  if not opt.V then error(me .. ": " .. opt.data .. ": no vocabulary file " .. vpath .. ": give V=", 0) end
end
if opt.V < 1 then error(me .. ": " .. opt.data .. ": empty vocabulary", 0) end

local job = cr.job { nodes = 1, workers = 1, seed = 1 } -- crescent run --nodes/--workers/--seed override
local NWK = job:table { name = "n_wk", keys = opt.V, dim = opt.K, dtype = "i32", init = cr.init.zeros(),
                        optimizer = cr.optim.add {} }
local NK = job:table { name = "n_k", keys = 1, dim = opt.K, dtype = "i32", init = cr.init.zeros(),
                       optimizer = cr.optim.add {} }
-- a worker's Lua state holds the rows and the changes of two chunks (the
-- one sampling and the next one's pull; kept from sweep to sweep when a
-- worker has at most two): at most 4 x min(V, chunk) rows of K int32 counts
local mem = math.max(256, (4 * math.min(opt.V, opt.chunk) * opt.K * 4) // (1024 * 1024) + 128)
job:model("lda", { memory_mb = mem, data = opt.data, format = opt.format, vocab = opt.format == "text" and words or nil, V = opt.V,
                   K = opt.K, alpha = opt.alpha, beta = opt.beta, sampler = opt.sampler, mh_steps = opt.mh_steps,
                   chunk = opt.chunk, heldout_every = opt.heldout_every, clocks = opt.clocks })
-- Every worker's training tokens: worker w's topics live at keys
-- [offsets[w + 1], offsets[w + 1] + parts[w + 1]) of table z (checkpoint=).
local N, offsets, parts = 0, {}, {}
for i, r in ipairs(job:call("info", {}).results) do
  offsets[i], parts[i], N = N, r.tokens, N + r.tokens
end
if N == 0 then error(("%s: %s: no tokens to train on (an empty document set)"):format(me, opt.data), 0) end
-- checkpoint=: the token topics (i32, one key per token) go into the
-- checkpoint with n_wk and n_k; the run's shape goes into job.state.
local ck = opt.checkpoint and abs(opt.checkpoint)
local shape = { data = opt.data, K = opt.K, V = opt.V, heldout_every = opt.heldout_every, parts = parts }
if ck then
  job:table { name = "z", keys = N, dim = 1, dtype = "i32", init = cr.init.zeros(), optimizer = cr.optim.assign {} }
end
local resumed = ck and cr.script.resume(job, ck) -- the line saying so comes below, after the sizes
if resumed then
  local saved = type(job.state) == "table" and job.state.lda or {}
  local function show(v) return type(v) == "table" and ("{" .. table.concat(v, ",") .. "} tokens per worker")
                                or tostring(v) end
  for _, k in ipairs { "data", "K", "V", "heldout_every", "parts" } do
    if show(saved[k]) ~= show(shape[k]) then
      error(("%s: %s: saved with %s = %s, this run has %s: resume with the same data, K and workers"):format(
          me, opt.checkpoint, k, show(saved[k]), show(shape[k])), 0)
    end
  end
  job:call("restore_topics", { table = "z", offsets = offsets })
else
  job:call("start", {})
end
say(("lda: %s: %d training tokens, V %d, K %d, alpha %g, beta %g, sampler %s, %d worker(s)"):format(
    opt.data, N, opt.V, opt.K, opt.alpha, opt.beta, opt.sampler, job.nodes * job.workers))
if resumed then say(("lda: resumed from %s after iteration %d"):format(opt.checkpoint, job.epochs)) end

-- The held-out documents, read on the scheduler.
local test
if opt.heldout_every > 0 then
  local T, err = Kr.lda_load(opt.data, { format = opt.format, vocab = opt.format == "text" and words or nil,
                                         V = opt.V, heldout_every = opt.heldout_every, split = "test" })
  if not T then error(err, 0) end
  local toks, offs = T:tokens_offsets(1)
  test = { tokens = toks, offsets = offs, docs = T:docs(), n = T:tokens() }
end

-- n_wk and n_k gathered from the nodes (V x K and 1 x K int32 matrices).
local function gather()
  local all = cr.core.util.matrix(opt.V, opt.K, "i32")
  NWK:each_run(16384, function(node, k, n) Kr.w2v_copy_rows(all, k, (NWK:_rows(node, k, n))) end)
  return all, (NK:_rows(NK:owner(0), 0, 1))
end

-- nwk, nk: the gathered tables (gather() when not given)
local function perplexity(nwk, nk)
  if not test or test.n == 0 then return nil end
  if not nwk then nwk, nk = gather() end
  return cr.eval.lda_perplexity { n_wk = nwk, n_k = nk, alpha = opt.alpha, beta = opt.beta,
                                  tokens = test.tokens, offsets = test.offsets, seed = 1 }
end

local function loglik()
  local r = job:call("loglik", {}).sum
  return (r.word_ll + r.doc_ll) / N
end

local train_s, ll, rec = 0.0, nil, nil
local first = job.epochs + 1 -- 1, or the iteration after the checkpoint's
if first > opt.iterations then -- a resumed run that was already done
  ll = loglik()
  rec = { iteration = job.epochs, loglik_per_token = ll, train_seconds = 0 }
end
for it = first, opt.iterations do
  local r = job:epoch { total = N, epoch = it }
  train_s = train_s + r.seconds
  local tps = r.sum.tokens / math.max(r.seconds, 1e-9)
  ll = loglik()
  rec = { iteration = it, loglik_per_token = ll, tokens_per_s = tps, seconds = r.seconds, train_seconds = train_s,
          changed = r.sum.changed / math.max(r.sum.tokens, 1), bytes_remote = r.bytes_remote }
  local line = ("iteration %d  loglik/token %.4f  %.2fs  %.0f tokens/s  %.1f%% moved"):format(it, ll, r.seconds, tps,
      100 * rec.changed)
  if opt.perplexity_every > 0 and it % opt.perplexity_every == 0 and it < opt.iterations then
    local final_nwk, final_nk = gather() -- for the perplexity and the top words
local p = perplexity(final_nwk, final_nk)
    if p then rec.heldout_perplexity = p.perplexity; line = line .. ("  held-out perplexity %.1f"):format(p.perplexity) end
  end
  say(line)
  if it < opt.iterations then job:log(rec) end
  if ck and (it % opt.checkpoint_every == 0 or it == opt.iterations) then
    job.state = { lda = shape }
    job:call("save_topics", { table = "z", offsets = offsets })
    job:save(ck)
  end
end

local final_nwk, final_nk = gather() -- for the perplexity and the top words
local p = perplexity(final_nwk, final_nk)
rec.heldout_perplexity = p and p.perplexity
rec.tokens_per_s_mean = N * math.max(opt.iterations - first + 1, 0) / math.max(train_s, 1e-9)
job:log(rec)
if p then say(("held-out perplexity %.2f on %d documents (%d tokens scored)"):format(p.perplexity, test.docs, p.tokens)) end

if opt.topwords then
  local nwk = final_nwk
  local f, e = io.open(opt.topwords, "w")
  if not f then error(me .. ": topwords: " .. e, 0) end
  -- the n most frequent words of each topic: one pass over the rows,
  -- keeping each topic's best n in descending order
  local n, top = 10, {}
  for k = 1, opt.K do top[k] = {} end
  for w = 1, opt.V do
    local row = nwk:row(w)
    for k = 1, opt.K do
      local c, t = row[k], top[k]
      if c > 0 and (#t < n or c > t[#t][2]) then
        local i = math.min(#t + 1, n)
        while i > 1 and t[i - 1][2] < c do t[i] = t[i - 1]; i = i - 1 end
        t[i] = { w - 1, c }
      end
    end
  end
  for k = 1, opt.K do
    for i, e in ipairs(top[k]) do top[k][i] = e[1] end
  end
  for k = 1, opt.K do
    local ws = {}
    for i, w in ipairs(top[k]) do ws[i] = words and words[w + 1] or tostring(w) end
    f:write(("topic %d: %s\n"):format(k - 1, table.concat(ws, " ")))
  end
  f:close()
  say(("lda: wrote the top words of %d topics to %s"):format(opt.K, opt.topwords))
end
print(("lda result: loglik_per_token=%.4f heldout_perplexity=%s tokens_per_s=%.0f train_seconds=%.3f tokens=%d K=%d sampler=%s"):format(
    ll, p and ("%.2f"):format(p.perplexity) or "-", rec.tokens_per_s_mean, train_s, N, opt.K, opt.sampler))
