-- cr.optim is built from the C rules (core.optim.rules, src/optim/cr_optim.c):
-- every rule, its options and defaults come from there, and a table made
-- with each rule carries them to the nodes.
local cr = require "crescent"
local rules = require("crescent.core").optim.rules

describe("cr.optim from the C rules", function()
  it("has one constructor per rule, filling in the rule's defaults", function()
    local names = {}
    for _, r in ipairs(rules) do
      names[#names + 1] = r.name
      local d = cr.optim[r.name]()
      assert.are.equal(r.name, d.name)
      for _, p in ipairs(r.params) do assert.are.equal(p.default, d[p.name]) end
    end
    assert.are.same({ "sgd", "adagrad", "add", "assign", "ftrl", "dbpg" }, names)
    local n = 0
    for _ in pairs(cr.optim) do n = n + 1 end
    assert.are.equal(#rules, n)
  end)

  it("gives each rule one default per option", function()
    assert.are.same({ name = "sgd", lr = 0.01 }, cr.optim.sgd())
    assert.are.same({ name = "ftrl", alpha = 0.1, beta = 1, l1 = 0, l2 = 0 }, cr.optim.ftrl())
    assert.are.same({ name = "dbpg", lr = 1, l1 = 0, l2 = 0, delta = -1, ada_c = 0, tau = 0 }, cr.optim.dbpg())
    assert.are.same({ name = "adagrad", lr = 0.5, eps = 1e-8, init = 0 }, cr.optim.adagrad { lr = 0.5 })
  end)

  it("checks the ranges of the C rows", function()
    assert.has_error(function() cr.optim.dbpg { lr = 0 } end, "dbpg{}: option 'lr' must be > 0, got 0")
    assert.has_error(function() cr.optim.ftrl { beta = -0.5 } end, "ftrl{}: option 'beta' must be >= 0, got -0.5")
    assert.has_error(function() cr.optim.sgd { lr = 0 / 0 } end, "sgd{}: option 'lr' must be a number")
    assert.are.equal(-3, cr.optim.dbpg { delta = -3 }.delta) -- delta has no range
  end)

  it("makes a table with every rule, its learning rate as W.lr", function()
    local job = cr.job { nodes = 1, workers = 0, seed = 1 }
    for _, r in ipairs(rules) do
      local t = job:table { name = "t_" .. r.name, keys = 3, dim = r.name == "dbpg" and 2 or 4,
                            optimizer = cr.optim[r.name]() }
      assert.are.equal(r.name, t.optimizer)
      local rate
      for _, p in ipairs(r.params) do if p.name == r.rate then rate = p.default end end
      assert.are.equal(rate, t.lr)
    end
    job:close()
  end)

  it("reads a table's optimizer in C with the option reader", function()
    local job = cr.job { nodes = 1, workers = 0, seed = 1 }
    assert.has_error(function()
      job.rt:table(0, { name = "x", keys = 1, dim = 1, optimizer = { name = "ftrl", lr = 1 } })
    end, "table 'x': optimizer ftrl: unknown option 'lr'")
    job:close()
  end)
end)
