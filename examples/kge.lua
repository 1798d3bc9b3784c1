-- Knowledge-graph embeddings on a parameter server (NuPS section 5.1):
-- ComplEx, DistMult, TransE (L1, L2) or RESCAL with logistic loss, L2
-- regularization and AdaGrad, negatives drawn through the sampling API.
--
--   make data      (builds data/wordnet-rr: WordNet synsets, 18 relations)
--   crescent run examples/kge.lua [--nodes 2] [--workers 2] [--metrics kge.jsonl] [-- model=distmult ...]
--
-- Script options (after "--", as name=value or --name value):
--   data (data/wordnet-rr): a directory in one of three layouts:
--     ours:    entities.tsv, relations.tsv (ID<TAB>NAME) and train/valid/test.del
--              (integer ids) or .tsv (names);
--     LibKGE:  entity_ids.del, relation_ids.del, train.del, valid.del, test.del;
--     plain:   train.txt, valid.txt, test.txt (or .tsv): subject<TAB>relation<TAB>object
--              names, numbered in order of appearance in train (valid and test may
--              not name anything train lacks).
--   model (complex | distmult | transe_l1 | transe_l2 | rescal), dim (100), neg (negatives
--   per side and positive), lr (AdaGrad), lambda (L2 per triple and row), init (std of the
--   normal init), batch (positives per kernel call), epochs, eval (filtered MRR on valid every
--   N epochs; 0: only test at the end), sampling (scheme of the negatives' sampling API, as
--   job:sampling takes it; default: the run's), quiet (0), test (1; 0: no valid/test
--   evaluation at the end, for benchmarks: the result line then shows nan), checkpoint (a path: saved after
--   every epoch; if it exists at start the run resumes from it), manage (auto: how E and R are managed,
--   docs/management.md: auto, the choice per key from the accesses observed at every epoch, starting from
--   the expected accesses (positives, and the uniform negatives); nups: the NuPS heuristic decided once from
--   them, per table; classic, relocate, replicate; or hot: the NuPS heuristic over E and R together, keys
--   whose expected accesses exceed 100x the mean replicated, the rest relocated), localize (1; 0: the model never moves keys, for comparisons), half (0; 1: E's and R's
--   remote values travel as half floats, docs/filters.md).
-- Defaults per model are below (tuned on wordnet-rr, see docs/models.md).
-- Output: one line per epoch, filtered MRR and Hits@1/3/10 on valid every `eval`
-- epochs and on test at the end, JSONL records (--metrics; the last one holds
-- test_mrr, test_hits1, test_hits3, test_hits10, triples_per_s) and a final
-- "kge result: ..." line for scripts. triples_per_s counts positive training
-- triples per second of training (each with 2 neg negatives).
local cr = require "crescent"

local me = "examples/kge.lua"
local models = { complex = true, distmult = true, transe_l1 = true, transe_l2 = true, rescal = true }
-- per-model defaults (any option given overrides them)
local defaults = {
  complex = { dim = 100, neg = 10, lr = 0.2, lambda = 1e-6, init = 0.1, batch = 500, epochs = 30 },
  distmult = { dim = 100, neg = 10, lr = 0.2, lambda = 1e-6, init = 0.1, batch = 500, epochs = 30 },
  transe_l1 = { dim = 100, neg = 10, lr = 0.1, lambda = 0, init = 0.1, batch = 500, epochs = 30 },
  transe_l2 = { dim = 100, neg = 10, lr = 0.1, lambda = 0, init = 0.1, batch = 500, epochs = 30 },
  -- RESCAL: d x d products per run of corruptions (src/kernels/cr_kge.c), so fewer epochs
  rescal = { dim = 100, neg = 10, lr = 0.1, lambda = 1e-6, init = 0.1, batch = 500, epochs = 20 },
}
local numeric = { dim = true, neg = true, lr = true, lambda = true, init = true, batch = true, epochs = true,
                  eval = true, quiet = true, test = true, localize = true, half = true }
local opt = { data = "data/wordnet-rr", model = "complex", eval = 5, quiet = 0, test = 1, manage = "auto",
              localize = 1, half = 0 }

local accept = { data = "string", model = "string", checkpoint = "string", sampling = "string",
                 manage = "string" }
for k in pairs(numeric) do accept[k] = "number" end
local _, given = cr.script.options(me, arg or {}, opt, accept)
cr.script.check_manage(me, opt.manage)
if not models[opt.model] then
  error(("%s: unknown model '%s' (complex, distmult, transe_l1, transe_l2, rescal)"):format(me, opt.model), 0)
end
for k, v in pairs(defaults[opt.model]) do
  if not given[k] then opt[k] = v end
end
for _, k in ipairs { "epochs", "dim", "batch" } do
  if not math.tointeger(opt[k]) or opt[k] < 1 then
    error(("%s: option %s must be a positive integer, got %s"):format(me, k, tostring(opt[k])), 0)
  end
  opt[k] = math.tointeger(opt[k])
end
for _, k in ipairs { "neg", "eval" } do
  if not math.tointeger(opt[k]) or opt[k] < 0 then
    error(("%s: option %s must be an integer >= 0, got %s"):format(me, k, tostring(opt[k])), 0)
  end
  opt[k] = math.tointeger(opt[k])
end
for _, k in ipairs { "lr", "lambda", "init" } do
  if opt[k] < 0 then error(("%s: option %s must be >= 0, got %s"):format(me, k, opt[k]), 0) end
end
if opt.model == "complex" and opt.dim % 2 ~= 0 then
  error(("%s: complex needs an even dim (real and imaginary halves), got %d"):format(me, opt.dim), 0)
end

-- The data layout. Worker processes may start elsewhere: absolute paths.
local cwd = os.getenv("PWD")
local function abs(p) return (p:sub(1, 1) == "/" or not cwd) and p or (cwd .. "/" .. p) end
local function exists(p)
  local f = io.open(p, "rb")
  if f then f:close() end
  return f ~= nil
end
local dir = abs(opt.data)
if not exists(dir) then
  error(("%s: data directory '%s' not found (make data builds data/wordnet-rr)"):format(me, opt.data), 0)
end
local function first(...)
  for _, name in ipairs { ... } do
    if exists(dir .. "/" .. name) then return dir .. "/" .. name end
  end
end
local files = {}
files.entities = first("entities.tsv", "entity_ids.del")
files.relations = first("relations.tsv", "relation_ids.del")
local ext = files.entities and files.relations and { ".del", ".tsv", ".txt" } or { ".txt", ".tsv" }
for _, set in ipairs { "train", "valid", "test" } do
  local names = {}
  for j, e in ipairs(ext) do names[j] = set .. e end
  files[set] = first(table.unpack(names))
end
if not files.train then
  error(("%s: no training triples in '%s' (expected train.del with entities.tsv/entity_ids.del and "
         .. "relations.tsv/relation_ids.del, or train.txt / train.tsv)"):format(me, opt.data), 0)
end
if (files.entities == nil) ~= (files.relations == nil) then
  error(("%s: '%s' has %s but not %s"):format(me, opt.data, files.entities and "an entity dictionary" or
        "a relation dictionary", files.entities and "a relation dictionary" or "an entity dictionary"), 0)
end

-- Read every set here too: sizes for the tables, and bad input (an unknown
-- entity, a malformed line) stops the run with "file:line: ..." before any
-- training. Without dictionary files the names of train are numbered, and
-- valid/test must use that numbering (as the workers do).
local dicts = files.entities and { entities = files.entities, relations = files.relations } or nil
local train = cr.data.triples(files.train, dicts)
local known = dicts or { entities = train.entities, relations = train.relations }
local valid = files.valid and cr.data.triples(files.valid, known)
local test = files.test and cr.data.triples(files.test, known)
local n_ent, n_rel = train.n_ent, train.n_rel
local say = opt.quiet == 0 and print or function() end

local job = cr.job { nodes = 1, workers = 1, seed = 1 } -- crescent run --nodes/--workers/--seed override
local rdim = opt.model == "rescal" and opt.dim * opt.dim or opt.dim
local adagrad = cr.optim.adagrad { lr = opt.lr }
local wire = opt.half ~= 0 and { half = true } or nil
local E = job:table { name = "E", keys = n_ent, dim = opt.dim, init = cr.init.normal(0, opt.init), optimizer = adagrad,
                      filters = wire }
local R = job:table { name = "R", keys = n_rel, dim = rdim, init = cr.init.normal(0, opt.init), optimizer = adagrad,
                      filters = wire }
-- manage=: cr.script.manage. hot, auto and nups start from the expected
-- accesses: per positive its subject and object, 2 neg uniform negatives,
-- its relation.
local counts
if opt.manage == "hot" or opt.manage == "auto" or opt.manage == "nups" then
  local ce, cr_ = {}, {}
  local uni = 2 * opt.neg * train.n / n_ent
  for k = 1, n_ent do ce[k] = uni end
  for k = 1, n_rel do cr_[k] = 0 end
  for j = 1, train.n do
    local s_, r_, o_ = train.s:get(j) + 1, train.r:get(j) + 1, train.o:get(j) + 1
    ce[s_], ce[o_], cr_[r_] = ce[s_] + 1, ce[o_] + 1, cr_[r_] + 1
  end
  counts = { ce, cr_ }
end
local hot = cr.script.manage(opt.manage, { E, R }, counts)
if hot then
  say(("kge: manage=hot: %d of %d entities and %d of %d relations replicated, the rest relocated"):format(
      #hot[1], n_ent, #hot[2], n_rel))
end
-- negatives: uniform over E's keys, drawn through the PS sampling API
job:distribution { name = "neg", table = "E", kind = "uniform" }
if opt.sampling then
  if not job.sampling then error(me .. ": option sampling: this build has no sampling schemes (job:sampling)", 0) end
  job:sampling(opt.sampling)
end
job:model("kge", { model = opt.model, train = files.train, valid = files.valid, test = files.test,
                   entities = files.entities, relations = files.relations, neg = opt.neg, batch = opt.batch,
                   lambda = opt.lambda, dist = "neg",
                   localize = opt.manage ~= "classic" and opt.localize ~= 0 })

local function evaluate(set)
  local r = job:call("evaluate", { set = set }).sum
  local q = math.max(r.queries or 0, 1)
  return { mrr = r.rr / q, hits1 = r.hits1 / q, hits3 = r.hits3 / q, hits10 = r.hits10 / q, mr = r.rank / q }
end

if opt.checkpoint then opt.checkpoint = abs(opt.checkpoint) end
cr.script.resume(job, opt.checkpoint, say, "kge")
say(("kge: %s, %d entities, %d relations, %d train / %d valid / %d test triples, dim %d, neg %d, lr %g, "
     .. "lambda %g, batch %d"):format(opt.model, n_ent, n_rel, train.n, valid and valid.n or 0, test and test.n or 0,
    opt.dim, opt.neg, opt.lr, opt.lambda, opt.batch))
-- The traffic and access counters the "manage result" line reports: cr.script.traffic.
local function traffic() return cr.script.traffic(job) end
local traffic0, epochs0 = traffic(), job.epochs
local positives, seconds, cpu = 0, 0.0, 0.0
while job.epochs < opt.epochs do
  local epoch = job.epochs + 1
  local c0 = os.clock()
  -- the model's relocation loop only while some key relocates (under auto
  -- every key may be classic or replicated: the plain loop is cheaper)
  local _, re = E:census()
  local _, rr = R:census()
  local r = job:epoch { total = train.n, epoch = epoch, localize = re + rr > 0 }
  cpu = cpu + (os.clock() - c0)
  local n = r.sum.positives
  positives, seconds = positives + n, seconds + r.seconds
  local tps = n / math.max(r.seconds, 1e-9)
  local v = (valid and opt.eval > 0 and epoch % opt.eval == 0 and epoch < opt.epochs) and evaluate("valid") or nil
  say(("epoch %2d  loss %.6g  (logloss %.6g reg %.4g)  %.2fs  %.0f triples/s%s"):format(epoch, r.sum.loss,
      r.sum.logloss, r.sum.reg, r.seconds, tps,
      v and ("  valid mrr %.4f hits@1 %.4f hits@3 %.4f hits@10 %.4f"):format(v.mrr, v.hits1, v.hits3, v.hits10)
      or ""))
  job:log { epoch = epoch, loss = r.sum.loss, logloss = r.sum.logloss, reg = r.sum.reg, seconds = r.seconds,
            triples_per_s = tps, bytes_remote = r.bytes_remote, messages = r.messages,
            valid_mrr = v and v.mrr, valid_hits1 = v and v.hits1, valid_hits3 = v and v.hits3,
            valid_hits10 = v and v.hits10 }
  if opt.checkpoint then job:save(opt.checkpoint) end
end
local traffic1, ne = traffic(), math.max(job.epochs - epochs0, 1)
local tps = positives / math.max(seconds, 1e-9)
local rec = { epoch = job.epochs, triples_per_s = tps, train_seconds = seconds }
local t = { mrr = 0 / 0, hits1 = 0 / 0, hits3 = 0 / 0, hits10 = 0 / 0 }
if valid and opt.test ~= 0 then
  local v = evaluate("valid")
  rec.valid_mrr, rec.valid_hits1, rec.valid_hits3, rec.valid_hits10 = v.mrr, v.hits1, v.hits3, v.hits10
  say(("valid: mrr %.4f  hits@1 %.4f  hits@3 %.4f  hits@10 %.4f"):format(v.mrr, v.hits1, v.hits3, v.hits10))
end
if test and opt.test ~= 0 then
  t = evaluate("test")
  rec.test_mrr, rec.test_hits1, rec.test_hits3, rec.test_hits10 = t.mrr, t.hits1, t.hits3, t.hits10
  say(("test:  mrr %.4f  hits@1 %.4f  hits@3 %.4f  hits@10 %.4f"):format(t.mrr, t.hits1, t.hits3, t.hits10))
end
job:log(rec)
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
      cr.script.census { E, R }))
-- one line for scripts (tests/bench/kge.sh, tests/integration/kge_*.sh).
-- train_cpu_seconds: CPU time of this process during the epochs (with
-- --nodes 1 it includes the node and its workers, threads of this process).
print(("kge result: model=%s test_mrr=%.4f test_hits1=%.4f test_hits3=%.4f test_hits10=%.4f triples_per_s=%.0f "
       .. "train_seconds=%.3f positives=%d train_cpu_seconds=%.3f"):format(opt.model, t.mrr, t.hits1, t.hits3,
      t.hits10, tps, seconds, positives, cpu))
