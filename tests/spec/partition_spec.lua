-- crescent.partition from Lua: graphs from files and edge arrays, every
-- method through cr.partition{...}, metrics, placement files, error paths.
local cr = require "crescent"
local P = cr.partition

-- the worked example of paper 000: d1..d4 x p1..p6 (0-based)
local paper = { u = {0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, v = {0, 1, 0, 1, 2, 2, 3, 4, 5, 2, 3, 4, 5} }

local function tmpfile(text)
  local path = os.tmpname()
  local f = assert(io.open(path, "w")); f:write(text); f:close()
  return path
end

describe("crescent.partition", function()
  it("builds graphs from edge arrays and files", function()
    local g = P.graph(paper)
    assert.are.equal(4, g.examples); assert.are.equal(6, g.keys); assert.are.equal(13, g.edges)
    local path = tmpfile("1 1:1 3:1\n-1 2:0.5\n")
    local h = assert(P.graph(path, "libsvm"))
    os.remove(path)
    assert.are.equal(2, h.examples); assert.are.equal(3, h.keys); assert.are.equal(3, h.edges) -- ids 1-based
  end)

  it("reproduces the TSH-2 example of paper 000", function()
    local place, m = P{ graph = P.graph(paper), k = 2, method = "tsh2" }
    assert.are.same({0, 0, 1, 1}, place.u:totable())
    assert.are.equal(4, m.m_max); assert.are.equal(1, m.t_max); assert.are.equal(2, m.t_sum)
    assert.is_number(m.seconds)
  end)

  it("passes pair_cap to TSH-2: 1 partner per step changes the result, 0 (all) equals 64 here", function()
    local u, v, x = {}, {}, 12345
    for i = 0, 299 do
      for _ = 0, 5 do
        x = (x * 1103515245 + 12345) % 2147483648
        u[#u + 1] = i; v[#v + 1] = (x >> 8) % (40 + (i % 7) * 30)
      end
    end
    local g = P.graph{ u = u, v = v }
    local one, m1 = P{ graph = g, k = 4, method = "tsh2", pair_cap = 1 }
    local def, md = P{ graph = g, k = 4, method = "tsh2" }
    local all, ma = P{ graph = g, k = 4, method = "tsh2", pair_cap = 0 }
    assert.are_not.same(one.u:totable(), def.u:totable())
    assert.is_true(m1.t_sum > md.t_sum)
    assert.are.same(def.u:totable(), all.u:totable()); assert.are.equal(md.t_sum, ma.t_sum)
    assert.has_error(function() P{ graph = g, k = 4, method = "tsh2", pair_cap = -1 } end)
  end)

  it("returns a complete placement for every available method, deterministic per seed", function()
    local u, v = {}, {}
    for i = 0, 199 do for j = 0, 4 do u[#u + 1] = i; v[#v + 1] = (i * 7 + j * 13) % 97 end end
    local g = P.graph{ u = u, v = v }
    for _, meth in ipairs(P.methods()) do
      if meth.available then
        local a, ma = P{ graph = g, k = 4, method = meth.name, seed = 3 }
        if a then -- methods still being built report nil, msg
          local b = P{ graph = g, k = 4, method = meth.name, seed = 3 }
          assert.are.same(a.u:totable(), b.u:totable(), meth.name)
          assert.are.same(a.v:totable(), b.v:totable(), meth.name)
          for _, w in ipairs(a.u:totable()) do assert.is_true(w >= 0 and w < 4) end
          assert.are.same(ma.t, P.metrics(g, a).t)
        end
      end
    end
  end)

  it("saves and loads placements", function()
    local place = P{ graph = P.graph(paper), k = 2, method = "parsa", v_sweeps = -1 }
    local path = os.tmpname()
    assert.is_true(P.save(place, path, "spec"))
    local back = assert(P.load(path))
    os.remove(path)
    assert.are.equal(2, back.k)
    assert.are.same(place.u:totable(), back.u:totable())
    assert.are.same(place.v:totable(), back.v:totable())
  end)

  it("reports bad input as nil, file:line: reason", function()
    local path = tmpfile("1 1:1\n1 2:x\n")
    local g, msg = P.graph(path)
    os.remove(path)
    assert.is_nil(g)
    assert.are.equal(path .. ":2: value of feature 2 is not a number", msg)
    path = tmpfile("# crescent placement 1\nk 2\nexamples 1\nkeys 0\nu 0 7\n")
    local p, err = P.load(path)
    os.remove(path)
    assert.is_nil(p)
    assert.are.equal(path .. ":5: machine 7 out of range (k = 2)", err)
  end)

  it("raises on programming errors at the caller's line", function()
    local g = P.graph(paper)
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() local _ = P{ graph = g, k = 2, method = "parsa", blockz = 2 } end)
    assert.is_false(ok)
    assert.are.equal("tests/spec/partition_spec.lua:" .. line .. ": unknown partition option 'blockz'", err)
    assert.has_error(function() local _ = P{ graph = g, k = 2, method = "nope" } end)
    assert.has_error(function() local _ = P{ graph = g, k = 0 } end)
  end)
end)
