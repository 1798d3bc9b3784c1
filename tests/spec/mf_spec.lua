-- lua/models/mf.lua and crescent.core.kernels (mf_*), driven through a fake
-- worker context: tables are whole matrices in this Lua state with the
-- parameter-server semantics (pull copies rows, push applies w -= lr g,
-- range placement), workers run one after the other.
local crescent = require "crescent"
local K, util = crescent.core.kernels, crescent.core.util

-- A rank-3 matrix with noise, `cells` unique cells, train/test split.
local function write_data(dir, rows, cols, cells)
  local rng = 12345
  local function rand() rng = (rng * 1103515245 + 12345) % 2147483648; return rng / 2147483648 end
  local function normal() return math.sqrt(-2 * math.log(rand() + 1e-12)) * math.cos(2 * math.pi * rand()) end
  local r = 3
  local U, V = {}, {}
  for i = 1, rows do U[i] = {} for k = 1, r do U[i][k] = normal() / r ^ 0.25 end end
  for j = 1, cols do V[j] = {} for k = 1, r do V[j][k] = normal() / r ^ 0.25 end end
  local seen, train, test = {}, {}, {}
  while #train + #test < cells do
    local i, j = 1 + math.floor(rand() * rows), 1 + math.floor(rand() * cols)
    if not seen[i * 100000 + j] then
      seen[i * 100000 + j] = true
      local x = 0.05 * normal()
      for k = 1, r do x = x + U[i][k] * V[j][k] end
      local line = string.format("%d %d %.6f", i, j, x)
      if rand() < 0.1 then test[#test + 1] = line else train[#train + 1] = line end
    end
  end
  local function put(name, lines)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write("%%MatrixMarket matrix coordinate real general\n", rows, " ", cols, " ", #lines, "\n")
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
  end
  put("train.mmc", train)
  put("test.mmc", test)
  return #train, #test
end

local function fake_table(keys, dim, nodes, seed)
  local T = { keys = keys, dim = dim, lr = 0.0, pulls = 0 }
  local rng = seed
  local data = {}
  for k = 0, keys * dim - 1 do rng = (rng * 6364136223846793005 + 1442695040888963407); data[k] = ((rng >> 33) % 2000 - 1000) / 10000 end
  local place = require("crescent.core").table -- the C placement, as the real tables use
  function T:owner(k) return place.owner(keys, nodes, k) end
  function T:handle(node)
    local h = setmetatable({}, { __index = T })
    function h:local_range() return place.range(keys, nodes, node) end
    return h
  end
  function T:pull(ks)
    T.pulls = T.pulls + 1
    local m = util.matrix(#ks, dim)
    for r = 1, #ks do
      local base = ks:get(r) * dim
      for c = 1, dim do m:set(r, c, data[base + c - 1]) end
    end
    return m
  end
  local pending, next_id = {}, 0
  function T:pull_async(ks)
    next_id = next_id + 1
    pending[next_id] = T:pull(ks)
    return next_id
  end
  function T:wait(id)
    local m = assert(pending[id], "wait: unknown request")
    pending[id] = nil
    return m
  end
  function T:push(ks, g)
    for r = 1, #ks do
      local base = ks:get(r) * dim
      for c = 1, dim do data[base + c - 1] = data[base + c - 1] - T.lr * g:get(r, c) end
    end
  end
  return T
end

local function new_job(dir, nodes, wpn, opts)
  local hdr = assert(K.mm_header(dir .. "/train.mmc"))
  local W, H = fake_table(hdr.rows, 8, nodes, 1), fake_table(hdr.cols, 8, nodes, 2)
  local workers, progress = {}, { n = 0 }
  for node = 0, nodes - 1 do
    for lw = 0, wpn - 1 do
      local ctx = { node = node, nodes = nodes, worker = node * wpn + lw, workers = nodes * wpn,
                    local_worker = lw, workers_per_node = wpn, seed = 7,
                    tables = { W = W:handle(node), H = H:handle(node) } }
      function ctx.progress(_, n) progress.n = progress.n + n end
      ctx.clocks = 0
      function ctx.clock(self) self.clocks = self.clocks + 1 end
      local model = dofile("lua/models/mf.lua")
      local info = model.init(ctx, opts)
      workers[#workers + 1] = { ctx = ctx, model = model, info = info }
    end
  end
  local job = { W = W, H = H, workers = workers, progress = progress }
  function job.run(name, args)
    local sum = {}
    for _, w in ipairs(workers) do
      for k, v in pairs(w.model[name](w.ctx, args)) do sum[k] = (sum[k] or 0) + v end
    end
    return sum
  end
  return job
end

describe("mf model", function()
  local dir, ntrain, ntest
  setup(function()
    _G.cr = { core = crescent.core }
    dir = os.tmpname(); os.remove(dir); os.execute("mkdir -p " .. dir)
    ntrain, ntest = write_data(dir, 120, 40, 2400)
  end)
  teardown(function() os.execute("rm -rf " .. dir); _G.cr = nil end)

  it("splits the cells over nodes by row and over workers by column, each exactly once", function()
    local job = new_job(dir, 2, 2, { train = dir .. "/train.mmc", test = dir .. "/test.mmc", batch = 50 })
    local cells, tcells = 0, 0
    for _, w in ipairs(job.workers) do cells = cells + w.info.cells; tcells = tcells + w.info.test_cells end
    assert.are.equal(ntrain, cells)
    assert.are.equal(ntest, tcells)
    job.W.lr, job.H.lr = 0.02, 0.02
    local s = job.run("epoch", { lr = 0.02, epoch = 1 })
    assert.are.equal(ntrain, s.cells)
    assert.are.equal(ntrain, job.progress.n)
    assert.is_true(job.W.pulls > 4)  -- batched, not one pull per epoch
    -- every worker ticks the same number of clocks per epoch (default 4),
    -- whatever its number of batches, so BSP cannot strand one at the end
    for _, w in ipairs(job.workers) do assert.are.equal(4, w.ctx.clocks) end
    local cjob = new_job(dir, 1, 2, { train = dir .. "/train.mmc", batch = 50, clocks = 7 })
    cjob.W.lr, cjob.H.lr = 0.02, 0.02
    cjob.run("epoch", { lr = 0.02, epoch = 1 })
    for _, w in ipairs(cjob.workers) do assert.are.equal(7, w.ctx.clocks) end
    -- with prefetch: the same cells, H rows pulled ahead through pull_async/wait
    local pjob = new_job(dir, 2, 2, { train = dir .. "/train.mmc", batch = 50, prefetch = true })
    pjob.W.lr, pjob.H.lr = 0.02, 0.02
    local ps = pjob.run("epoch", { lr = 0.02, epoch = 1 })
    assert.are.equal(ntrain, ps.cells)
    assert.is_true(math.abs(ps.sse - s.sse) < 0.05 * s.sse)
  end)

  it("trains: test RMSE falls far below predicting zero, loss falls", function()
    local job = new_job(dir, 2, 2, { train = dir .. "/train.mmc", test = dir .. "/test.mmc",
                                     lambda = 0.01, batch = 200 })
    local e0 = job.run("evaluate", { set = "test" })
    local zero = 0
    for line in io.lines(dir .. "/test.mmc") do
      local x = line:match("^%d+ %d+ (%-?%d+%.%d+)$")  -- not the size line
      if x then zero = zero + tonumber(x) ^ 2 end
    end
    local rmse0 = math.sqrt(e0.sse / e0.n)
    assert.is_true(math.abs(rmse0 - math.sqrt(zero / ntest)) < 0.1,  -- small init ~ predicting 0
                   ("rmse at init %g, predicting 0 %g"):format(rmse0, math.sqrt(zero / ntest)))
    local lr, first, last = 0.03, nil, nil
    for epoch = 1, 40 do
      job.W.lr, job.H.lr = lr, lr
      local s = job.run("epoch", { lr = lr, epoch = epoch })
      first = first or s.loss
      if last then lr = s.loss < last and lr * 1.05 or lr * 0.5 end
      last = s.loss
    end
    local e = job.run("evaluate", { set = "test" })
    assert.are.equal(ntest, e.n)
    local rmse = math.sqrt(e.sse / e.n)
    assert.is_true(last < first / 2, ("loss %g -> %g"):format(first, last))
    assert.is_true(rmse < 0.6 * rmse0, ("test rmse %g -> %g"):format(rmse0, rmse))
  end)

  it("reports bad options and bad data with the file and line", function()
    assert.has_error(function() new_job(dir, 1, 1, { train = dir .. "/train.mmc", lamda = 1 }) end,
                     "mf: unknown option 'lamda'")
    assert.has_error(function() new_job(dir, 1, 1, { test = dir .. "/test.mmc" }) end,
                     "mf: option 'train' (path of train.mmc) is required")
    local bad = dir .. "/bad.mmc"
    local f = assert(io.open(bad, "w"))
    f:write("%%MatrixMarket matrix coordinate real general\n120 40 2\n1 1 0.5\n1 x 0.5\n")
    f:close()
    -- (pcall: busted's has_error would strip the "file:line:" we want to see)
    local ok, err = pcall(new_job, dir, 1, 1, { train = dir .. "/train.mmc", test = bad })
    assert.is_false(ok)
    assert.are.equal(bad .. ":4: ", err:sub(1, #bad + 4))  -- file and line of the bad entry
  end)
end)

describe("crescent.core.kernels mf", function()
  it("returns nil and a message for a missing file", function()
    local c, err = K.mf_load("/nonexistent/train.mmc")
    assert.is_nil(c)
    assert.matches("^/nonexistent/train.mmc: cannot open: No such file", err)
    local h, err2 = K.mm_header("/nonexistent/train.mmc")
    assert.is_nil(h)
    assert.is_string(err2)
  end)

  it("raises on misuse: unknown option, no batch, wrong shapes", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("%%MatrixMarket matrix coordinate real general\n3 2 3\n1 1 1\n2 1 2\n3 2 3\n")
    f:close()
    assert.has_error(function() K.mf_load(path, { nrows = 1 }) end, "mf_load: unknown option 'nrows'")
    local none, err = K.mf_load(path, { rows = 2 }) -- a cell past the table's 2 keys: its line
    assert.is_nil(none)
    assert.truthy(err:find(path .. ":5: row 3 out of range 1..2", 1, true), err)
    local c = assert(K.mf_load(path))
    assert.are.equal(3, c:count()); assert.are.equal(2, c:columns())
    assert.has_error(function() K.mf_sgd(c, util.matrix(2, 4), util.matrix(1, 4), 0.1, 0) end,
                     "no current batch (call cells:next first)")
    local pw, ph, pn = c:peek()
    local wk, hk, n = c:next()
    assert.are.equal(3, n); assert.are.equal(3, #wk); assert.are.equal(2, #hk)
    assert.are.equal(pw, wk); assert.are.equal(ph, hk); assert.are.equal(pn, n)  -- same cached keys
    assert.is_nil(c:peek())
    assert.has_error(function() K.mf_sgd(c, util.matrix(2, 4), util.matrix(2, 4), 0.1, 0) end,
                     "matrices have 2 and 2 rows, the batch has 3 W keys and 2 H keys")
    -- one SGD step from zero-ish rows: pushed gradients reproduce the local change
    local Wm, Hm = util.matrix(3, 2), util.matrix(2, 2)
    for r = 1, 3 do Wm:set(r, 1, 0.5) end
    for r = 1, 2 do Hm:set(r, 1, 0.5) end
    local sse, reg, cnt = K.mf_sgd(c, Wm, Hm, 0.1, 0)
    assert.are.equal(3, cnt)
    -- column 1's two cells run in a random order, the second seeing h_1 after
    -- the first's update: h_1 = 0.5 + 0.1 * 2 * e * 0.5 with e the first's error
    local a = 0.75 ^ 2 + (2 - 0.5 * 0.575) ^ 2 + 2.75 ^ 2    -- (1,1) then (2,1)
    local b = 1.75 ^ 2 + (1 - 0.5 * 0.675) ^ 2 + 2.75 ^ 2    -- (2,1) then (1,1)
    assert.is_true(math.abs(sse - a) < 1e-5 or math.abs(sse - b) < 1e-5, "sse " .. sse)
    assert.are.equal(0, reg)
    assert.is_true(Wm:get(1, 1) < 0)  -- gradient of an under-predicted cell is negative
    assert.is_nil(c:next())
    c:close()
    assert.has_error(function() c:count() end, "mf cells are closed")
    os.remove(path)
  end)
end)
