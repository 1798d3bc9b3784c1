-- Placement options of job:table{} (crescent.table), the core Placement
-- (owners, ids, the gather/scatter a checkpoint uses) and the sparse
-- helpers of core.table (docs/placement.md).
local cr = require "crescent"
local tables = require "crescent.table"
local core = cr.core.table
local util = cr.core.util

local function tmpfile(lines)
  local p = os.tmpname()
  local f = assert(io.open(p, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
  return p
end

describe("job:table{} placement option", function()
  it("is nil for range (the default) and a Placement otherwise", function()
    assert.is_nil(tables.placement({ name = "W", keys = 10 }, 2))
    assert.is_nil(tables.placement({ name = "W", keys = 10, placement = "range" }, 2))
    local p = tables.placement({ name = "W", keys = 10, placement = "hash" }, 2)
    assert.are.equal("hash", p:kind())
    local n = p:count(0) + p:count(1)
    assert.are.equal(10, n)
  end)
  it("refuses a value that is no placement, naming the table", function()
    assert.has_error(function() tables.placement({ name = "W", keys = 10, placement = 5 }, 2) end,
      'job:table{}: table \'W\': placement must be "range", "hash" or a placement file\'s path, got 5')
    assert.has_error(function() tables.placement({ name = "W", keys = 10, placement = "" }, 2) end)
  end)
  it("reads a placement file and refuses one of another table, node count, or cut short", function()
    local ok = tmpfile { "# crescent placement 1", "k 2", "examples 1", "keys 3", "u 0 1", "v 0 1", "v 1 0", "v 2 1" }
    local p = tables.placement({ name = "W", keys = 3, placement = ok }, 2)
    assert.are.equal("file", p:kind())
    assert.are.same({ 1, 0, 1 }, { p:owner(0), p:owner(1), p:owner(2) })
    assert.are.same({ 2, 3, 0 }, { p:id(0), p:id(2), p:id(1) }) -- node 1's ids start at block = 2
    local ok2, err = pcall(tables.placement, { name = "W", keys = 4, placement = ok }, 2)
    assert.is_false(ok2)
    assert.are.equal(("job:table{}: table 'W': placement file %s places 3 keys, the table has 4 "
      .. "(a placement of another table?)"):format(ok), err)
    ok2, err = pcall(tables.placement, { name = "W", keys = 3, placement = ok }, 3)
    assert.matches("is for k = 2 machines, the job has 3 nodes", err, 1, true)
    local cut = tmpfile { "# crescent placement 1", "k 2", "examples 0", "keys 3", "v 0 1", "v 1" }
    ok2, err = pcall(tables.placement, { name = "W", keys = 3, placement = cut }, 2)
    assert.are.equal(("job:table{}: table 'W': placement %s:6: expected 'u EXAMPLE WORKER' or 'v KEY SERVER'")
      :format(cut), err)
    os.remove(ok)
    os.remove(cut)
  end)
  it("takes hash or range for a sparse table, nothing else", function()
    assert.is_nil(tables.placement({ name = "S", keys = "sparse" }, 2))
    assert.is_nil(tables.placement({ name = "S", keys = "sparse", placement = "range" }, 2))
    assert.has_error(function() tables.placement({ name = "S", keys = "sparse", placement = "p.txt" }, 2) end,
      'job:table{}: table \'S\' is sparse: placement must be "hash" (the default) or "range", got p.txt')
  end)
end)

describe("core Placement", function()
  it("gathers rows in key order from per-node parts and scatters them back", function()
    local p = core.placement(50, 3, "hash", "W")
    local m = util.matrix(20, 2)
    for i = 1, 20 do m:set(i, 1, 10 + i - 1) m:set(i, 2, -i) end
    local parts = p:scatter(10, 20, m)
    local total = 0
    for node = 0, 2 do
      local first, c = p:span(10, 20, node)
      if c > 0 then
        assert.are.equal(c, parts[node + 1]:rows())
        total = total + c
        -- ids are consecutive: the part's rows are the node's keys in key order
        local prev = -1
        for j = 1, c do
          local k = parts[node + 1]:get(j, 1)
          assert.are.equal(node, p:owner(k))
          assert.are.equal(first + j - 1, p:id(k))
          assert.is_true(k > prev)
          prev = k
        end
      else
        assert.is_nil(parts[node + 1])
      end
    end
    assert.are.equal(20, total)
    local back = p:gather(10, 20, parts)
    for i = 1, 20 do assert.are.same(m:row(i), back:row(i)) end
  end)
end)

describe("sparse helpers", function()
  it("owners: range splits the uint64 space in order, hash spreads", function()
    assert.are.equal(0, core.sparse_owner("range", 4, 0))
    assert.are.equal(3, core.sparse_owner("range", 4, -1))
    assert.are.equal(1, core.sparse_owner("range", 2, math.mininteger))
    local seen = {}
    for k = 1, 100 do seen[core.sparse_owner("hash", 3, k)] = true end
    assert.is_true(seen[0] and seen[1] and seen[2])
  end)
  it("keys ride in a checkpoint's state and come back split by node", function()
    local keys = util.ints { -1, -2, math.mininteger, math.maxinteger, 0, 12345 }
    local v, st = util.matrix(6, 2), util.matrix(6, 1)
    for i = 1, 6 do v:set(i, 1, i) v:set(i, 2, 10 * i) st:set(i, 1, -i) end
    local ks = core.keyed_state(keys, st)
    assert.are.equal(3, ks:cols())
    local got = {}
    for node, part in pairs(core.sparse_parts("hash", 2, v, ks)) do
      local k, pv, ps = part[1], part[2], part[3]
      for j = 1, #k do
        assert.are.equal(node - 1, core.sparse_owner("hash", 2, k:get(j)))
        got[k:get(j)] = { pv:get(j, 1), pv:get(j, 2), ps:get(j, 1) }
      end
    end
    for i = 1, 6 do assert.are.same({ i, 10 * i, -i }, got[keys:get(i)]) end
  end)
  it("stats name tables of any name in a literal the scheduler reads back", function()
    local t = cr.core.ps.deserialize('{sparse={["a\\032b\\034"]={rows=1,bytes=2}}}')
    assert.are.equal(1, t.sparse['a b"'].rows)
  end)
end)
