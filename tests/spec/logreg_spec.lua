-- Sparse logistic regression's table options and loader (the model runs in
-- tests/integration/logreg_small.sh; the kernels in tests/c/test_logreg.c).
local cr = require "crescent"
local K = require("crescent.core").kernels

describe("job:table with the ftrl and dbpg rules", function()
  local job
  setup(function() job = cr.job { nodes = 1, workers = 0, seed = 1 } end)
  teardown(function() job:close() end)

  it("takes the rule's options as fields of the declaration or through cr.optim", function()
    local a = job:table { name = "a", keys = 4, dim = 1, optimizer = "ftrl", alpha = 0.5, beta = 1, l1 = 0.2, l2 = 0.1 }
    assert.are.equal("ftrl", a.optimizer)
    assert.are.equal(0.5, a.lr)
    assert.are.equal(2, a.sdim)
    local b = job:table { name = "b", keys = 4, dim = 2, optimizer = cr.optim.dbpg { lr = 1, l1 = 1, delta = 0.1 } }
    assert.are.equal("dbpg", b.optimizer)
    assert.are.equal(5, b.sdim)
    -- a table's init is its initializer, whatever the rule
    local c = job:table { name = "c0", keys = 4, dim = 1, optimizer = "adagrad", lr = 0.2, init = cr.init.zeros() }
    assert.are.equal(0.2, c.lr)
  end)

  it("refuses a bad rule, option or value in one line", function()
    assert.has_error(function() job:table { name = "c", keys = 4, dim = 2, optimizer = "dbpg", alpha = 1 } end,
      "job:table{}: table 'c': option 'alpha' is not an option of optimizer dbpg")
    assert.has_error(function() job:table { name = "c", keys = 4, dim = 2, optimizer = "dbpg", l1 = -1 } end,
      "dbpg{}: option 'l1' must be >= 0, got -1")
    assert.has_error(function() job:table { name = "c", keys = 4, dim = 1, optimizer = "sgdx" } end,
      "job:table{}: table 'c': unknown optimizer 'sgdx' (expected sgd, adagrad, add, assign, ftrl or dbpg)")
    assert.has_error(function() job:table { name = "c", keys = 4, dim = 1, l1 = 1 } end,
      "job:table{}: unknown option 'l1'")
    assert.has_error(function() cr.optim.ftrl { alpha = 0 } end, "ftrl{}: option 'alpha' must be > 0, got 0")
    local ok, err = pcall(job.table, job, { name = "c", keys = 4, dim = 3, optimizer = "dbpg" })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("dim must be 2", 1, true))
  end)
end)

describe("kernels.logreg_load", function()
  local path = os.tmpname()
  setup(function()
    local f = io.open(path, "w")
    for i = 1, 50 do f:write(("%s 1:1 %d:2\n"):format(i % 2 == 0 and "+1" or "-1", 2 + i % 7)) end
    f:close()
  end)
  teardown(function() os.remove(path) end)

  it("splits the file into train and test the same way every time", function()
    local tr = assert(K.logreg_load(path, { heldout = 0.3, seed = 4, split = "train" }))
    local te = assert(K.logreg_load(path, { heldout = 0.3, seed = 4, split = "test" }))
    assert.are.equal(50, tr:examples() + te:examples())
    assert.are.equal(8, te:features())
    assert.are.equal(2, te:batches(10))
    assert.has_error(function() te:batch_keys(2^40) end, "batch_keys: batch 1099511627776 out of range [1, 2]")
    local again = assert(K.logreg_load(path, { heldout = 0.3, seed = 4, split = "test" }))
    assert.are.equal(te:examples(), again:examples())
    local w = cr.core.util.matrix(8, 2)
    local ev = te:evaluate(w) -- w = 0: every probability 1/2
    assert.is_near(math.log(2), ev.logloss, 1e-6)
  end)

  it("refuses a repeated feature id as cr.data.libsvm does", function()
    local bad = os.tmpname()
    local f = io.open(bad, "w")
    f:write("-1 2:1\n1 5:1 3:1 5:2\n")
    f:close()
    local d, err = K.logreg_load(bad, {})
    assert.is_nil(d)
    assert.are.equal(bad .. ":2: feature id 5 repeated", err)
    local ok, lerr = pcall(cr.data.libsvm, bad)
    assert.is_false(ok)
    assert.truthy(tostring(lerr):find(bad .. ":2: feature ids must increase", 1, true))
    os.remove(bad)
  end)

  it("returns nil and file:line for a bad line", function()
    local bad = os.tmpname()
    local f = io.open(bad, "w")
    f:write("+1 1:1\n-1 2:oops\n")
    f:close()
    local d, err = K.logreg_load(bad, {})
    os.remove(bad)
    assert.is_nil(d)
    assert.truthy(err:find(bad .. ":2:", 1, true))
  end)
end)
