-- Integration job for ps_checkpoint_resume.sh: MF with a bold-driver
-- learning rate kept in job.state, so that a run can stop and resume.
--   arg: first DATA CKPT N M   train N epochs, save CKPT, train M more
--        second DATA CKPT N M  load CKPT (a fresh process), train M more
-- Prints "epoch E lr LR test_rmse X clocks C" per epoch and "policy NAME
-- staleness S epochs E curve K" after the load / at the end.
local cr = require "crescent"
local mode, dir, ckpt = arg[1], arg[2], arg[3]
local N, M = math.tointeger(tonumber(arg[4])), math.tointeger(tonumber(arg[5]))
local job = cr.job { nodes = 1, workers = 1, seed = 3 }
local W = job:table { name = "W", keys = 600, dim = 6, init = cr.init.normal(0, 0.1),
                      optimizer = cr.optim.sgd { lr = 0.02 } }
local H = job:table { name = "H", keys = 150, dim = 6, init = cr.init.normal(0, 0.1),
                      optimizer = cr.optim.sgd { lr = 0.02 } }
job:model("mf", { train = dir .. "/train.mmc", test = dir .. "/test.mmc", lambda = 0.02, batch = 3000,
                  clocks = 3 })

local function rmse()
  local r = job:call("evaluate", { set = "test" })
  return math.sqrt(r.sum.sse / r.sum.n)
end

local function clocks()
  local c = {}
  for _, w in ipairs(job:stats().workers) do c[#c + 1] = w.clock end
  return table.concat(c, ",")
end

-- one epoch with the bold driver (+5% if the loss fell, -50% if it rose)
local function epoch()
  local st = job.state
  st.lr, st.prev = st.lr or 0.03, st.prev or math.huge
  W:set_lr(st.lr)
  H:set_lr(st.lr)
  local r = job:epoch { lr = st.lr, epoch = job.epochs + 1 }
  local x = rmse()
  job:log { epoch = job.epochs, loss = r.sum.loss, test_rmse = x, lr = st.lr, seconds = r.seconds }
  print(("epoch %d lr %.17g test_rmse %.17g clocks %s"):format(job.epochs, st.lr, x, clocks()))
  st.lr = r.sum.loss < st.prev and st.lr * 1.05 or st.lr * 0.5
  st.prev = r.sum.loss
end

local function summary()
  print(("policy %s staleness %s epochs %d curve %d"):format(job.policy_name,
      tostring(job.policy_opts.staleness), job.epochs, #job.curve))
end

if mode == "first" then
  for _ = 1, N do epoch() end
  job:save(ckpt)
  for _ = 1, M do epoch() end
else
  assert(mode == "second", "mode must be first or second")
  job:load(ckpt)
  summary()
  for _ = 1, M do epoch() end
end
summary()
