-- crescent.script: the example scripts' option parser and the NuPS hot-key rule.
local script = require "crescent.script"

describe("crescent.script.options", function()
  local accept = { lr = "number", data = "string" }
  it("reads name=value, --name=value and --name value, converting numbers", function()
    local opt, given = script.options("x.lua", { "lr=0.5", "--data=d1" }, { lr = 1 }, accept)
    assert.are.equal(0.5, opt.lr)
    assert.are.equal("d1", opt.data)
    assert.is_true(given.lr and given.data)
    opt = script.options("x.lua", { "--lr", "2" }, {}, accept)
    assert.are.equal(2, opt.lr)
  end)
  it("refuses unknown options, bad numbers, missing values and stray words by name", function()
    local function err(argv)
      local ok, e = pcall(script.options, "x.lua", argv, {}, accept)
      assert.is_false(ok)
      return e
    end
    assert.are.equal("x.lua: unknown option 'lrr'", err { "lrr=1" })
    assert.are.equal("x.lua: option lr needs a number, got 'fast'", err { "lr=fast" })
    assert.are.equal("x.lua: option --data needs a value", err { "--data" })
    assert.are.equal("x.lua: unexpected argument 'oops'", err { "oops" })
  end)
end)

describe("crescent.script.hot_keys", function()
  it("replicates keys above 100x the mean over all tables, 0-based", function()
    local a, b = {}, {}
    for k = 1, 300 do a[k] = 1 end
    for k = 1, 10 do b[k] = 1 end
    a[7], b[3] = 10000, 5 -- mean = (309 + 9999 + 4) / 310 ~ 33.3: only a's key 6 is over 3326
    local hot = script.hot_keys { a, b }
    assert.are.same({ 6 }, hot[1])
    assert.are.same({}, hot[2])
  end)
end)
