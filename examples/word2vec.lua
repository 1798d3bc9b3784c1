-- Word vectors (skip-gram or CBOW with negative sampling) on a parameter
-- server, the word2vec tool's recipe (lua/models/word2vec.lua), evaluated on
-- a synonym test and on word analogies.
--
--   make data          (builds data/gcide-brown.txt and data/wordnet-synonyms.tsv, among others)
--   crescent run examples/word2vec.lua [--nodes 2] [--workers 2] [--metrics w2v.jsonl] [-- sg=0 epochs=3 ...]
--
-- Script options (after "--", as name=value or --name value):
--   corpus (data/gcide-brown.txt: any whitespace-tokenized text file, one
--   sentence per line, plain or gzip), sg (1: skip-gram; 0: CBOW), dim (100),
--   window (5), negative (5), sample (1e-3), min_count (5), alpha (0.025 for
--   skip-gram, 0.05 for CBOW, as the tool), epochs (1), batch (50000 corpus
--   words per kernel call), pool (negatives drawn per batch; default batch / 5),
--   clocks (0: clock ticks per epoch, for the consistency policy; 0 never waits),
--   save (a path: the input vectors in the word2vec text format, which
--   gensim's KeyedVectors.load_word2vec_format and fastText read),
--   synonyms (data/wordnet-synonyms.tsv), analogy
--   (../shared/data/analogy/questions-words.txt; "none" skips a test), quiet (0),
--   manage (auto: how `in` and `out` are managed, docs/management.md: auto,
--   the choice per key from the accesses observed at every epoch, starting
--   from the expected accesses (word counts, and the negatives' draws); nups:
--   the NuPS heuristic decided once from them, per table; classic, relocate,
--   replicate; or hot: the NuPS heuristic over both tables together, keys
--   whose expected accesses exceed 100x the mean replicated, the rest
--   relocated), localize (1; 0: the model never moves
--   keys, for comparisons), checkpoint (none; a path: saved after every
--   epoch, and if it exists at start the run goes on from it until `epochs`
--   epochs are done, docs/checkpoints.md; the corpus and the options that
--   shape the tables must be the same), half (0; 1: the remote values of
--   in and out travel as half floats, docs/filters.md; only while a table
--   is plain classic: manage=classic, or auto once it chose classic for
--   every key).
--   Nodes, workers, seed and the metrics file are options of `crescent run`.
-- sample 1e-3, the tool's and gensim's default: on gcide-brown (5M words)
-- one epoch of skip-gram with 1e-3 scores 0.499 on the synonym test and
-- 2.9% on analogies, against 0.455 and 0.9% with 1e-4, which drops more of
-- the frequent words and so trains on fewer tokens (about 1.3x faster);
-- tests/bench/w2v.sh passes sample=1e-4, the setting of its comparison.
-- Words per second: corpus words (every token of the file, also those below
-- min_count) times epochs over the seconds of the training epochs (counting
-- the vocabulary and evaluating are not included), as tests/bench/w2v.sh
-- counts them for gensim and fastText.
local cr = require "crescent"

local opt = { corpus = "data/gcide-brown.txt", sg = 1, dim = 100, window = 5, negative = 5, sample = 1e-3,
              min_count = 5, epochs = 1, batch = 50000, clocks = 0, quiet = 0, synonyms = "data/wordnet-synonyms.tsv",
              analogy = "../shared/data/analogy/questions-words.txt", manage = "auto", localize = 1, half = 0 }
local numeric = { sg = true, dim = true, window = true, negative = true, sample = true, min_count = true,
                  alpha = true, epochs = true, batch = true, pool = true, clocks = true, quiet = true,
                  localize = true, half = true }
local me = "examples/word2vec.lua"

local accept = { save = "string", checkpoint = "string" }
for k in pairs(opt) do accept[k] = "string" end
for k in pairs(numeric) do accept[k] = "number" end
local _, given = cr.script.options(me, arg or {}, opt, accept)
if not math.tointeger(opt.clocks) or opt.clocks < 0 then error(me .. ": option clocks must be an integer >= 0", 0) end
for _, k in ipairs { "dim", "window", "min_count", "epochs", "batch", "pool" } do
  if opt[k] ~= nil and (not math.tointeger(opt[k]) or opt[k] < 1) then
    error(("%s: option %s must be a positive integer, got %s"):format(me, k, tostring(opt[k])), 0)
  end
end
if not math.tointeger(opt.negative) or opt.negative < 0 then error(me .. ": option negative must be an integer >= 0", 0) end
cr.script.check_manage(me, opt.manage)
if opt.sg ~= 0 and opt.sg ~= 1 then error(me .. ": option sg must be 1 (skip-gram) or 0 (CBOW)", 0) end
if opt.sample < 0 then error(me .. ": option sample must be >= 0", 0) end
opt.alpha = opt.alpha or (opt.sg == 1 and 0.025 or 0.05)
if opt.alpha <= 0 then error(me .. ": option alpha must be > 0", 0) end

-- worker processes may start elsewhere: give them absolute paths
local cwd = os.getenv("PWD")
local function abs(p) return (p:sub(1, 1) == "/" or not cwd) and p or (cwd .. "/" .. p) end
opt.corpus = abs(opt.corpus)
local say = opt.quiet == 0 and print or function() end

-- A test file: "none" skips it; a default that is missing is skipped with a
-- note; a file the user named must exist.
local function test_file(k, how)
  if opt[k] == "none" then return nil end
  local f = io.open(opt[k], "r")
  if f then
    f:close()
    return opt[k]
  end
  if given[k] then error(("%s: %s: cannot open %s file"):format(me, opt[k], k), 0) end
  say(("word2vec: no %s test (%s is missing%s)"):format(k, opt[k], how))
  return nil
end
local syn_path = test_file("synonyms", "; make data builds it")
local ana_path = test_file("analogy", "")

local K = cr.core.kernels
local t0 = cr.core.util.now()
local vocab, err = K.w2v_vocab(opt.corpus, { min_count = opt.min_count })
if not vocab then
  error(err .. (not given.corpus and " (make data builds it)" or ""), 0)
end
say(("word2vec: %s: %d words (%d lines), vocabulary %d words with min_count %d (%d tokens), %.2fs"):format(
    opt.corpus, vocab.raw, vocab.lines, vocab.n, opt.min_count, vocab.kept, cr.core.util.now() - t0))

local job = cr.job { nodes = 1, workers = 1, seed = 1 } -- crescent run --nodes/--workers/--seed override
local d = opt.dim
local add = cr.optim.add {} -- workers push the change of each row (see lua/models/word2vec.lua)
local wire = opt.half ~= 0 and { half = true } or nil -- half=1: remote values as half floats (docs/filters.md)
local IN = job:table { name = "in", keys = vocab.n, dim = d, init = cr.init.uniform(-0.5 / d, 0.5 / d), optimizer = add,
                       filters = wire }
local OUT = job:table { name = "out", keys = vocab.n, dim = d, init = cr.init.zeros(), optimizer = add, filters = wire }
job:table { name = "progress", keys = 1, dim = 1, init = cr.init.zeros(), optimizer = add }
-- negatives: from counts^0.75, through the PS sampling API (docs/sampling.md)
local w = {}
for k = 1, vocab.n do w[k] = vocab.counts:get(k) ^ 0.75 end
job:distribution { name = "neg", table = "out", kind = "weights", weights = w }
-- manage=: cr.script.manage. hot, auto and nups start from the expected
-- accesses: in, a word's count; out, its count plus its share of the
-- negative pools (batch / 5 draws per batch of counts^0.75).
local counts
if opt.manage == "hot" or opt.manage == "auto" or opt.manage == "nups" then
  local ci, co, wsum = {}, {}, 0
  for k = 1, vocab.n do wsum = wsum + w[k] end
  local draws = vocab.raw / 5
  for k = 1, vocab.n do
    ci[k] = vocab.counts:get(k)
    co[k] = ci[k] + draws * w[k] / wsum
  end
  counts = { ci, co }
end
local hot = cr.script.manage(opt.manage, { IN, OUT }, counts)
if hot then
  say(("word2vec: manage=hot: %d and %d of %d words replicated in in and out, the rest relocated"):format(
      #hot[1], #hot[2], vocab.n))
end
job:model("word2vec", { corpus = opt.corpus, vocab = vocab.text, words = vocab.kept, epochs = opt.epochs,
                        model = opt.sg == 1 and "sg" or "cbow", window = opt.window, negative = opt.negative,
                        alpha = opt.alpha, sample = opt.sample, batch = opt.batch, pool = opt.pool,
                        raw = vocab.raw, clocks = opt.clocks,
                        localize = opt.manage ~= "classic" and opt.localize ~= 0 })
say(("word2vec: %s, dim %d, window %d, negative %d, sample %g, alpha %g, %d epoch(s), %d worker(s)"):format(
    opt.sg == 1 and "skip-gram" or "CBOW", d, opt.window, opt.negative, opt.sample, opt.alpha, opt.epochs,
    job.nodes * job.workers))

-- The traffic and access counters the "manage result" line reports: cr.script.traffic.
local function traffic() return cr.script.traffic(job) end
cr.script.resume(job, opt.checkpoint, say, "word2vec")
local traffic0, epochs0 = traffic(), job.epochs
local raw, seconds = 0, 0.0
while job.epochs < opt.epochs do
  local epoch = job.epochs + 1
  local r = job:epoch { total = vocab.raw, epoch = epoch }
  local wps = r.sum.raw / math.max(r.seconds, 1e-9)
  raw, seconds = raw + r.sum.raw, seconds + r.seconds
  say(("epoch %d  %d words (%d kept after subsampling)  %.2fs  %.0f words/s"):format(epoch, r.sum.raw,
      r.sum.kept, r.seconds, wps))
  job:log { epoch = epoch, words = r.sum.raw, kept = r.sum.kept, pairs = r.sum.pairs, seconds = r.seconds,
            words_per_s = wps, bytes_remote = r.bytes_remote, messages = r.messages }
  if opt.checkpoint then job:save(opt.checkpoint) end
end
local words_per_s = raw / math.max(seconds, 1e-9)
local traffic1, ne = traffic(), math.max(job.epochs - epochs0, 1)

-- The input vectors, gathered from the nodes in runs of rows.
local vecs = cr.core.util.matrix(vocab.n, d)
IN:each_run(16384, function(node, k, n)
  local v = job:_guard(job.rt.get_rows, IN.id, node, k, n, IN.dim, IN.sdim)
  K.w2v_copy_rows(vecs, k, v)
end)
if opt.save then
  local ok, e = K.w2v_write_vectors(opt.save, vecs, vocab.words)
  if not ok then error(me .. ": save: " .. e, 0) end
  say(("word2vec: wrote %d vectors to %s"):format(vocab.n, opt.save))
end

local syn = syn_path and cr.eval.synonyms(vecs, vocab.words, syn_path)
local ana = ana_path and cr.eval.analogy(vecs, vocab.words, ana_path, { restrict = 30000 })
if syn then
  say(("synonyms: accuracy %.4f on %d of %d questions (coverage %.3f)"):format(syn.accuracy, syn.covered,
      syn.questions, syn.coverage))
end
if ana then
  say(("analogy: accuracy %.4f (semantic %.4f, syntactic %.4f) on %d of %d questions (coverage %.3f)"):format(
      ana.total, ana.semantic, ana.syntactic, ana.seen, ana.questions, ana.coverage))
end
job:log { epoch = job.epochs, synonym_acc = syn and syn.accuracy, synonym_coverage = syn and syn.coverage,
          analogy_acc = ana and ana.total, analogy_coverage = ana and ana.coverage, words_per_s = words_per_s,
          train_seconds = seconds }
-- per training epoch: bytes_remote (data plane, all nodes), reloc_bytes (the
-- relocation protocol), sync_bytes (replica syncs), keys_remote (keys
-- pulled or pushed through another node), and key accesses of tables not
-- plain classic: rows relocated in, served remotely by their home,
-- forwarded, through shared memory, through a replica; local (keys served
-- from the worker's node, any table), skipped (localizes of classic keys
-- of a mixed table); then each table's keys per technique at the end.
local pe = {}
for _, k in ipairs { "bytes_remote", "keys_remote", "reloc_bytes", "sync_bytes", "rows_in", "remote", "forwarded", "shared",
                    "replica", "local", "skipped" } do
  pe[#pe + 1] = ("%s=%.0f"):format(k, (traffic1[k] - traffic0[k]) / ne)
end
print(("manage result: manage=%s per_epoch %s tables %s"):format(opt.manage, table.concat(pe, " "),
      cr.script.census { IN, OUT }))
local function f(x) return x and ("%.4f"):format(x) or "-" end
-- one line for scripts (tests/bench/w2v.sh, tests/integration/w2v_*.sh)
print(("word2vec result: synonym_acc=%s analogy_acc=%s analogy_coverage=%s words_per_s=%.0f train_seconds=%.3f words=%d vocab=%d"):format(
    f(syn and syn.accuracy), f(ana and ana.total), f(ana and ana.coverage), words_per_s, seconds, raw, vocab.n))
