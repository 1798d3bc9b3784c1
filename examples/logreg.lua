-- Sparse logistic regression with L1 (and L2) regularization on a parameter
-- server (thesis ch. 6; lua/models/logreg.lua): DBPG, FTRL-proximal or
-- AdaGrad, on gcide-docs (label: the entry's headword is a noun).
--
--   make data          (builds data/gcide.svm)
--   crescent run examples/logreg.lua [--nodes 2] [--workers 1] [--metrics logreg.jsonl] [-- optimizer=dbpg l1=1 ...]
--
-- Script options (after "--", as name=value or --name value):
--   data (data/gcide.svm: LIBSVM, label > 0 positive), heldout (0.2: the
--   fraction of examples held out for the test metrics, drawn by a hash of
--   split_seed (1) and the example's number; 0: every example trains and
--   there are no test metrics, as a partition's metrics assume), optimizer (dbpg | ftrl |
--   adagrad), l1 (1), l2 (0), epochs (20), placement (range | hash | a
--   placement file of `crescent partition --out` for the same data file and
--   as many nodes as the job: its v lines place the weights, its u lines the
--   examples), tau (0: the bounded delay of dbpg, in blocks: the job's
--   consistency policy becomes ssp with staleness tau, unless --policy is
--   given; AdaDelay's tau is the policy's staleness), blocks (64, dbpg), split (balanced: dbpg's blocks are key ranges
--   holding equal shares of the file's entries, so frequent features get
--   small blocks; equal: equal key ranges), rho (0.1: dbpg's curvature, from
--   each key's own (0) to a bound of its whole block (1),
--   src/kernels/cr_logreg.h), lr (dbpg's step gamma (1); ftrl's alpha (0.1);
--   adagrad's (0.1)), beta (ftrl, 1), delta (dbpg's KKT filter: skip a key with
--   w = 0 and |g| <= l1 - delta; default l1 / 2; -1: off), ada_c (dbpg's
--   AdaDelay c, 0: off), batch (1000, ftrl and adagrad), eval (1: test metrics
--   every epoch; 0: only at the end), tol (0: run every epoch; > 0: stop
--   once an epoch lowers the objective by at most tol x the objective, or raises it (said on stderr); the
--   test gathers the weights after each epoch and its time counts as
--   training), filters (none; key_cache,zeros,sigmod=X: the weight table's
--   traffic filters, docs/filters.md), quiet (0).
-- Every epoch prints and logs (JSONL) objective (training sum of losses +
-- l1 |w|_1 + l2/2 |w|^2), test_logloss, test_accuracy, test_auc,
-- bytes_remote (the epoch's remote bytes, job:stats()), nnz (non-zero
-- weights), skipped (dbpg: the (worker, key) pairs its KKT filter dropped so
-- far: neither pushed nor pulled any more), seconds (the epoch's time; train_seconds sums them: training
-- only, evaluation excluded).
local cr = require "crescent"

local me = "examples/logreg.lua"
local opt = { data = "data/gcide.svm", heldout = 0.2, split_seed = 1, optimizer = "dbpg", l1 = 1, l2 = 0, epochs = 20,
              placement = "range", tau = 0, blocks = 64, split = "balanced", rho = 0.1, beta = 1, ada_c = 0, batch = 1000, eval = 1, tol = 0, filters = "", quiet = 0 }
local numeric = { heldout = true, split_seed = true, l1 = true, l2 = true, epochs = true, tau = true, blocks = true, rho = true,
                  lr = true, beta = true, delta = true, ada_c = true, batch = true, eval = true, tol = true, quiet = true }
local accept = { lr = "number", delta = "number" }
for k in pairs(opt) do accept[k] = "string" end
for k in pairs(numeric) do accept[k] = "number" end
cr.script.options(me, arg or {}, opt, accept)
local function int_opt(k, min)
  if not math.tointeger(opt[k]) or opt[k] < min then
    error(("%s: option %s must be an integer >= %d, got %s"):format(me, k, min, tostring(opt[k])), 0)
  end
  opt[k] = math.tointeger(opt[k])
end
int_opt("epochs", 1); int_opt("tau", 0); int_opt("blocks", 1); int_opt("batch", 1); int_opt("split_seed", 0)
for _, k in ipairs { "l1", "l2", "beta", "ada_c", "tol" } do
  if not (opt[k] >= 0) then error(("%s: option %s must be >= 0, got %s"):format(me, k, tostring(opt[k])), 0) end
end
if not (opt.heldout >= 0 and opt.heldout < 1) then error(me .. ": option heldout must be in [0, 1)", 0) end
if opt.optimizer ~= "dbpg" and opt.optimizer ~= "ftrl" and opt.optimizer ~= "adagrad" then
  error(("%s: unknown optimizer '%s' (dbpg, ftrl or adagrad)"):format(me, opt.optimizer), 0)
end
if opt.optimizer == "adagrad" and opt.l1 > 0 then
  error(me .. ": optimizer adagrad has no L1 term: give l1=0 (or use dbpg or ftrl)", 0)
end
if opt.lr ~= nil and not (opt.lr > 0) then error(me .. ": option lr must be > 0", 0) end

local cwd = os.getenv("PWD")
local function abs(p) return (p:sub(1, 1) == "/" or not cwd) and p or (cwd .. "/" .. p) end
local say = opt.quiet == 0 and print or function() end
local Kr = cr.core.kernels
do
  local f = io.open(opt.data, "r")
  if not f then error(("%s: %s: cannot open the data%s"):format(me, opt.data, opt.data == "data/gcide.svm"
    and " (make data builds it)" or ""), 0) end
  f:close()
end
opt.data = abs(opt.data)
local pfile = opt.placement ~= "range" and opt.placement ~= "hash" and abs(opt.placement) or nil

local job = cr.job { nodes = 1, workers = 1, seed = 1, policy = "ssp:staleness=" .. opt.tau }
-- the delay the job runs with (--policy may differ from tau=): AdaDelay's tau
if job.policy_name == "bsp" then
  opt.tau = 0
elseif job.policy_name == "ssp" and job.policy_opts and math.tointeger(job.policy_opts.staleness) then
  opt.tau = job.policy_opts.staleness
end

-- The test split, read here; its scan also gives the table's keys: the
-- largest feature id over every line of the file (`crescent partition`'s
-- keys), and checks a placement file against the data and the nodes before
-- anything is made (the workers read its u lines, the table its v lines).
local test, err = Kr.logreg_load(opt.data, { heldout = opt.heldout, seed = opt.split_seed, split = "test",
                                             placement = pfile, nodes = job.nodes })
if not test then error(err, 0) end
local F = test:features()
if opt.heldout > 0 and test:examples() == 0 then error(("%s: %s: no held-out examples"):format(me, opt.data), 0) end
local scan = test -- the whole file's feature counts, for the blocks
if opt.heldout == 0 then test = nil end -- every example trains; no test metrics

local o
if opt.optimizer == "dbpg" then
  if not (opt.rho >= 0 and opt.rho <= 1) then error(me .. ": option rho must be in [0, 1]", 0) end
  o = cr.optim.dbpg { lr = opt.lr or 1, l1 = opt.l1, l2 = opt.l2, delta = opt.delta or opt.l1 / 2,
                      ada_c = opt.ada_c, tau = opt.tau }
elseif opt.optimizer == "ftrl" then
  o = cr.optim.ftrl { alpha = opt.lr or 0.1, beta = opt.beta, l1 = opt.l1, l2 = opt.l2 }
else
  o = cr.optim.adagrad { lr = opt.lr or 0.1 }
end
local tdef = { name = "w", keys = F, dim = opt.optimizer == "dbpg" and 2 or 1, init = cr.init.zeros(), optimizer = o }
if opt.placement ~= "range" then tdef.placement = pfile or opt.placement end
-- filters=key_cache,zeros,sigmod=X: the table's traffic filters (docs/filters.md)
if opt.filters ~= "" then
  tdef.filters = {}
  for item in opt.filters:gmatch("[^,]+") do
    local k, v = item:match("^(%w[%w_]*)=(.*)$")
    if k then tdef.filters[k] = tonumber(v) or v else tdef.filters[item] = true end
  end
end
local W = job:table(tdef)
-- dbpg's blocks: key ranges holding equal shares of the file's entries
-- (blocks=equal: equal key ranges); the same bounds go to every worker.
local bounds
if opt.optimizer == "dbpg" and opt.split ~= "equal" then
  bounds = scan:balanced(opt.blocks):totable()
  opt.blocks = #bounds - 1
end
job:model("logreg", { data = opt.data, features = F, heldout = opt.heldout, split_seed = opt.split_seed,
                      placement = pfile, optimizer = opt.optimizer, blocks = opt.blocks, bounds = bounds, rho = opt.rho, batch = opt.batch,
                      l2 = opt.l2 })
local info = job:call("start", {})
local N = info.sum.examples
if N == 0 then error(("%s: %s: no training examples"):format(me, opt.data), 0) end
say(("logreg: %s: %d training examples (%d nnz), %d test, %d features, optimizer %s, l1 %g, l2 %g, %d worker(s), policy %s")
    :format(opt.data, N, info.sum.nnz, test and test:examples() or 0, F, opt.optimizer, opt.l1, opt.l2, job.nodes * job.workers,
            job.policy_name or "?"))

-- The weights gathered from the nodes (F x dim).
local function gather()
  local all = cr.core.util.matrix(F, W.dim)
  if W.pl then -- hash or file placement: rows in key order (lua/crescent/table.lua)
    W:each_chunk(16384, function(k, n) Kr.w2v_copy_rows(all, k, (W:_chunk_rows(k, n))) end)
  else
    W:each_run(16384, function(node, k, n) Kr.w2v_copy_rows(all, k, (W:_rows(node, k, n))) end)
  end
  return all
end

local train_s, rec = 0.0, nil
-- The training objective at the table's weights w (gathered) and the
-- epoch's result r; also the weights' L1 norm and non-zeros.
local function objective(r, w)
  local loss = opt.optimizer == "dbpg" and r.sum.loss or job:call("objective", {}).sum.loss
  local l1n, l2n, nnz = w:norms(1)
  return loss + opt.l1 * l1n + opt.l2 / 2 * l2n, loss, nnz
end

local prev, ran, rose = nil, 0, false
for ep = 1, opt.epochs do
  local r = job:epoch { total = N, epoch = ep }
  train_s, ran = train_s + r.seconds, ep
  -- tol > 0: the stopping test is part of training (its time counts)
  local stop, w, obj, loss, nnz = false, nil, nil, nil, nil
  if opt.tol > 0 then
    local t0 = cr.core.util.now()
    w = gather()
    obj, loss, nnz = objective(r, w)
    stop = prev ~= nil and (prev - obj) <= opt.tol * math.abs(obj)
    rose = stop and obj > prev and prev
    prev = obj
    train_s = train_s + (cr.core.util.now() - t0)
  end
  rec = { epoch = ep, seconds = r.seconds, train_seconds = train_s, bytes_remote = r.bytes_remote, messages = r.messages,
          optimizer = opt.optimizer, placement = opt.placement, tau = opt.tau }
  if opt.eval ~= 0 or ep == opt.epochs or stop then
    if not w then
      w = gather()
      obj, loss, nnz = objective(r, w)
    end
    local ev = test and test:evaluate(w) or {}
    rec.objective, rec.train_loss, rec.nnz, rec.skipped = obj, loss, nnz, r.sum.skipped
    rec.test_logloss, rec.test_accuracy, rec.test_auc = ev.logloss, ev.accuracy, ev.auc
    say(("epoch %2d  objective %.6g  test logloss %.5f  accuracy %.4f  AUC %.4f  nnz %d%s  %.3fs  %.0f remote bytes")
        :format(ep, rec.objective, ev.logloss or 0 / 0, ev.accuracy or 0 / 0, ev.auc or 0 / 0, nnz,
                r.sum.skipped and ("  skipped %d"):format(r.sum.skipped) or "", r.seconds, r.bytes_remote))
  else
    say(("epoch %2d  %.3fs  %.0f remote bytes"):format(ep, r.seconds, r.bytes_remote))
  end
  job:log(rec)
  if stop then
    if rose then -- not a convergence: said even when quiet
      io.stderr:write(("logreg: the objective rose from %.6g to %.6g in epoch %d: stopped (a smaller lr= may converge)\n")
        :format(rose, obj, ep))
    else
      say(("logreg: the objective fell by at most tol = %g of itself: stopped after %d epochs"):format(opt.tol, ep))
    end
    break
  end
end
print(("logreg result: objective=%.6f test_logloss=%.6f test_accuracy=%.5f test_auc=%.6f train_seconds=%.4f epochs=%d optimizer=%s nnz=%d examples=%d")
  :format(rec.objective, rec.test_logloss or 0 / 0, rec.test_accuracy or 0 / 0, rec.test_auc or 0 / 0, train_s, ran, opt.optimizer,
          rec.nnz, N))
