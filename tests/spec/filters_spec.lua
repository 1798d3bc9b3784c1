-- job:table{filters = {...}} parsing (crescent.table.parse_filters,
-- docs/filters.md): defaults off, the definition's fields, bad options
-- refused with a message naming the table and the option.
local tables = require "crescent.table"

local sgd, assign = { name = "sgd" }, { name = "assign" }

local function parse(filters, extra)
  local o = { name = "w", filters = filters }
  for k, v in pairs(extra or {}) do o[k] = v end
  return tables.parse_filters(o, (extra and extra.opt) or sgd)
end

local function refused(pattern, filters, extra)
  local ok, err = pcall(parse, filters, extra)
  assert.is_false(ok)
  assert.matches(pattern, err)
end

describe("job:table{} filters", function()
  it("are all off without the option", function()
    assert.same({ filter_key_cache = 0, filter_zeros = 0, filter_sigmod = 0, filter_key_cache_bytes = 0,
                  filter_half = 0 }, parse(nil))
    assert.same(parse(nil), parse({}))
  end)

  it("map to the definition's fields", function()
    local d = parse({ key_cache = true, zeros = true, sigmod = 0.25, key_cache_bytes = 1 << 20 })
    assert.same({ filter_key_cache = 1, filter_zeros = 1, filter_sigmod = 0.25, filter_key_cache_bytes = 1 << 20,
                  filter_half = 0 }, d)
    assert.equal(1, parse({ half = true, key_cache = true }).filter_half)
    assert.equal(0, parse({ half = false, zeros = true }).filter_half)
    assert.equal(0, parse({ key_cache = false, sigmod = false }).filter_key_cache)
    assert.equal(0, parse({ sigmod = 0 }).filter_sigmod)
  end)

  it("refuse bad options, naming the table", function()
    refused("table 'w': filters: unknown filter 'zero'", { zero = true })
    refused("table 'w': filters must be a table", "key_cache")
    refused("filters.key_cache must be true or false", { key_cache = 1 })
    refused("filters.sigmod must be a finite threshold", { sigmod = -1 })
    refused("filters.sigmod must be a finite threshold", { sigmod = 0 / 0 })
    refused("filters.sigmod must be a finite threshold", { sigmod = math.huge })
    refused("filters.sigmod must be a finite threshold", { sigmod = "0.1" })
    refused("filters.key_cache_bytes must be an integer >= 4096", { key_cache = true, key_cache_bytes = 100 })
  end)

  it("refuse sigmod on an i32 table or with the rule assign", function()
    refused("sigmod needs a float table", { sigmod = 0.1 }, { dtype = "i32" })
    refused("sigmod needs a float table", { sigmod = 0.1 }, { opt = assign })
    assert.equal(1, parse({ zeros = true }, { dtype = "i32" }).filter_zeros)
  end)

  it("refuse half on an i32 table and with zeros or sigmod", function()
    refused("filters.half needs a float table", { half = true }, { dtype = "i32" })
    refused("filters.half goes without the zeros and sigmod filters", { half = true, zeros = true })
    refused("filters.half goes without the zeros and sigmod filters", { half = true, sigmod = 0.1 })
    refused("filters.half must be true or false", { half = 1 })
  end)
end)
