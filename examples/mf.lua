-- Matrix factorization with SGD on a parameter server (NuPS section 5.1,
-- scaled down): 20000 x 2000 matrix, 1,000,000 cells, truth rank 16.
--
--   crescent data zipf-mf --rows 20000 --cols 2000 --cells 1000000 --rank 16 --noise 0.1 \
--       --test-fraction 0.1 --seed 1 --out data/mf
--   crescent run examples/mf.lua --nodes 2 [--workers 2] [--metrics mf.jsonl] [-- --epochs 10 ...]
--
-- Script options (after "--", as --name value or name=value):
--   data (data/mf: a directory with train.mmc and test.mmc), train, test (paths),
--   epochs (20), dim (16), lr (0.02), lambda (0.02), init (0.1: std of the normal
--   init), batch (200000 cells per kernel call; on several nodes x 2 / all workers, lua/models/mf.lua),
--   eval (1: test RMSE every epoch; 0: only at the end), quiet (0), prefetch (0;
--   1: pull the next batch's H rows during the kernel, see lua/models/mf.lua),
--   checkpoint (none; a path: saved after every epoch, and if it exists at start
--   the run goes on from it until `epochs` epochs are done, see docs/checkpoints.md),
--   manage (auto: how W and H are managed, docs/management.md: auto, the
--   choice per key from the accesses observed at every epoch, starting from
--   the training cells' row and column counts; nups: the NuPS heuristic
--   decided once from those counts, per table; classic, relocate, replicate;
--   or hot: the NuPS heuristic over both tables together, keys more than
--   100x the mean count replicated and the rest relocated), localize (1: with relocation the model moves the next
--   batch's H rows here and waits for them before the batch; late: waits only
--   after the batch; 0: never moves them).
--   Nodes, workers, seed, policy and the metrics file are options of
--   `crescent run` (before "--").
-- Learning rate: bold driver (after each epoch +5% if the training loss fell,
-- -50% if it rose, kept within [lr / 1e6, 100 lr]), set on both tables with set_lr.
-- Predicting 0 gives a test RMSE of about 0.98 on this data; this reaches ~0.3.
local cr = require "crescent"

local opt = { data = "data/mf", epochs = 20, dim = 16, lr = 0.02, lambda = 0.02, init = 0.1,
              batch = 200000, prefetch = 0, eval = 1, quiet = 0, manage = "auto",
              localize = "1" }
local numeric = { epochs = true, dim = true, lr = true, lambda = true, init = true, batch = true,
                  prefetch = true, eval = true, quiet = true }

-- The script's own options (the runtime keeps its own, like --nodes).
local accept = { train = "string", test = "string", checkpoint = "string" }
for k in pairs(opt) do accept[k] = "string" end
for k in pairs(numeric) do accept[k] = "number" end
cr.script.options("examples/mf.lua", arg or {}, opt, accept)
for _, k in ipairs { "epochs", "dim", "batch" } do
  if not math.tointeger(opt[k]) or opt[k] < 1 then
    error(("examples/mf.lua: option %s must be a positive integer, got %s"):format(k, tostring(opt[k])), 0)
  end
  opt[k] = math.tointeger(opt[k])
end
for _, k in ipairs { "lr", "lambda", "init" } do
  if opt[k] < 0 then error(("examples/mf.lua: option %s must be >= 0, got %s"):format(k, opt[k]), 0) end
end
if opt.localize ~= "0" and opt.localize ~= "1" and opt.localize ~= "late" then
  error(("examples/mf.lua: option localize must be 1, late or 0, got '%s'"):format(opt.localize), 0)
end
cr.script.check_manage("examples/mf.lua", opt.manage)
opt.train = opt.train or (opt.data .. "/train.mmc")
opt.test = opt.test or (opt.data .. "/test.mmc")
-- worker processes may start elsewhere: give them absolute paths
local cwd = os.getenv("PWD")
local function abs(p) return (p:sub(1, 1) == "/" or not cwd) and p or (cwd .. "/" .. p) end
opt.train, opt.test = abs(opt.train), abs(opt.test)

local K = cr.core.kernels
local hdr, err = K.mm_header(opt.train)
if not hdr then
  error(err .. "\n(make the data with: crescent data zipf-mf --rows 20000 --cols 2000 --cells 1000000"
        .. " --rank 16 --noise 0.1 --test-fraction 0.1 --seed 1 --out data/mf)", 0)
end
local say = opt.quiet == 0 and print or function() end

local job = cr.job { nodes = 1, workers = 1, seed = 1 } -- crescent run --nodes/--workers/--seed override
local W = job:table { name = "W", keys = hdr.rows, dim = opt.dim,
                      init = cr.init.normal(0, opt.init), optimizer = cr.optim.sgd { lr = opt.lr } }
local H = job:table { name = "H", keys = hdr.cols, dim = opt.dim,
                      init = cr.init.normal(0, opt.init), optimizer = cr.optim.sgd { lr = opt.lr } }
-- manage=: cr.script.manage. hot, auto and nups start from the expected
-- accesses: the training cells per row and per column.
local counts
if opt.manage == "hot" or opt.manage == "auto" or opt.manage == "nups" then
  local rows, cols, f = {}, {}, assert(io.open(opt.train, "r"))
  for k = 1, hdr.rows do rows[k] = 0 end
  for k = 1, hdr.cols do cols[k] = 0 end
  local size = false -- the first line that is not a comment gives the sizes
  for line in f:lines() do
    local r, c = line:match("^%s*(%d+)%s+(%d+)")
    if r and size then
      r, c = tonumber(r), tonumber(c) -- Matrix Market: 1-based, as the Lua arrays
      -- (a cell past the sizes is the loader's error, with its line)
      if rows[r] and cols[c] then rows[r], cols[c] = rows[r] + 1, cols[c] + 1 end
    elseif r then
      size = true
    end
  end
  f:close()
  counts = { rows, cols }
end
local hot = cr.script.manage(opt.manage, { W, H }, counts)
if hot then
  say(("mf: manage=hot: %d of %d rows and %d of %d columns replicated, the rest relocated"):format(
      #hot[1], hdr.rows, #hot[2], hdr.cols))
end
job:model("mf", { train = opt.train, test = opt.test, lambda = opt.lambda, batch = opt.batch,
                  prefetch = opt.prefetch ~= 0, localize = opt.manage ~= "classic" and opt.localize ~= "0"
                  and (opt.localize == "late" and "late" or true) })

local function test_rmse()
  local r = job:call("evaluate", { set = "test" })
  return math.sqrt(r.sum.sse / math.max(r.sum.n, 1))
end

-- The bold driver's state lives in job.state, so a checkpoint carries it.
cr.script.resume(job, opt.checkpoint, say, "mf")
-- The traffic and access counters the "manage result" line reports: cr.script.traffic.
local function traffic() return cr.script.traffic(job) end
local traffic0, epochs0 = traffic(), job.epochs
local st = job.state -- after job:load, which replaces it
st.lr, st.prev = st.lr or opt.lr, st.prev or math.huge
local cells, seconds, cpu, rmse = 0, 0.0, 0.0, nil
say(("mf: %d x %d, %d train cells, dim %d, lr %g, lambda %g"):format(hdr.rows, hdr.cols, hdr.nnz,
    opt.dim, opt.lr, opt.lambda))
while job.epochs < opt.epochs do
  local epoch, lr = job.epochs + 1, st.lr
  W:set_lr(lr)
  H:set_lr(lr)
  local c0 = os.clock()
  local r = job:epoch { total = hdr.nnz, lr = lr, epoch = epoch }
  cpu = cpu + (os.clock() - c0)
  local loss, n = r.sum.loss, r.sum.cells
  cells, seconds = cells + n, seconds + r.seconds
  rmse = (opt.eval ~= 0 or epoch == opt.epochs) and test_rmse() or nil
  local cps = n / math.max(r.seconds, 1e-9)
  say(("epoch %2d  loss %.6g  train_rmse %.4f  test_rmse %s  lr %.4g  %.2fs  %.3gM cells/s"):format(
      epoch, loss, math.sqrt(r.sum.sse / math.max(n, 1)), rmse and ("%.4f"):format(rmse) or "-", lr,
      r.seconds, cps / 1e6))
  job:log { epoch = epoch, loss = loss, test_rmse = rmse, seconds = r.seconds, cells_per_s = cps,
            bytes_remote = r.bytes_remote, messages = r.messages, lr = lr }
  -- bounded to [lr / 1e6, 100 lr]: on a converged model the loss wobbles, and
  -- halving on every rise would drive the rate towards 0 (1e-39 after 1000 epochs)
  st.lr = math.min(math.max(loss < st.prev and lr * 1.05 or lr * 0.5, opt.lr * 1e-6), opt.lr * 100)
  st.prev = loss
  if opt.checkpoint then job:save(opt.checkpoint) end
end
local traffic1, ne = traffic(), math.max(job.epochs - epochs0, 1)
rmse = rmse or test_rmse() -- nothing left to train after a resume: report the loaded model
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
      cr.script.census { W, H }))
-- one line for scripts (tests/bench/mf.sh, tests/integration/mf_*.sh).
-- train_cpu_seconds: CPU time of this process during the epochs, which with
-- --nodes 1 includes the node and its workers (threads of this process).
print(("mf result: test_rmse=%.4f train_cells_per_s=%.0f train_seconds=%.3f cells=%d train_cpu_seconds=%.3f"):format(
      rmse, cells / math.max(seconds, 1e-9), seconds, cells, cpu))
-- No job:close() here: the job closes when the script ends, except under
-- --repl, where it stays open (with its nodes) for the prompt.
