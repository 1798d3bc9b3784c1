-- MBP and DPPA through cr.partition{...}: balance, memory bound, hashing.
local cr = require "crescent"
local P = cr.partition

-- 4 planted clusters of 50 examples, each mostly on its own 25 keys
local function planted()
  local u, v, x = {}, {}, 7
  local function rnd(n) x = (x * 1103515245 + 12345) % 2147483648; return x % n end
  for i = 0, 199 do
    local c = i % 4
    for _ = 1, 6 do
      u[#u + 1] = i
      v[#v + 1] = rnd(10) < 8 and c * 25 + rnd(25) or rnd(100)
    end
  end
  return P.graph{ u = u, v = v, keys = 101 } -- key 100 untouched
end

local function counts(ints, k)
  local c = {}
  for j = 0, k - 1 do c[j] = 0 end
  for _, w in ipairs(ints:totable()) do c[w] = c[w] + 1 end
  return c
end

describe("mbp and dppa", function()
  it("mbp keeps |U_i| within (1 + epsilon) n / k and beats random on T_sum", function()
    local g = planted()
    local place, m = assert(P{ graph = g, k = 4, method = "mbp", seed = 1 })
    for _, n in pairs(counts(place.u, 4)) do assert.is_true(n <= 51) end
    local _, r = assert(P{ graph = g, k = 4, method = "random", seed = 1 })
    assert.is_true(m.t_sum * 3 < r.t_sum * 2, ("mbp %d vs random %d"):format(m.t_sum, r.t_sum))
  end)

  it("mbp meets a memory bound or says it cannot", function()
    local g = planted()
    local _, free = assert(P{ graph = g, k = 4, method = "mbp" })
    local place, m = P{ graph = g, k = 4, method = "mbp", mem_bound = free.m_max }
    assert.is_truthy(place)
    assert.is_true(m.m_max <= free.m_max)
    local none, msg = P{ graph = g, k = 4, method = "mbp", mem_bound = 2 }
    assert.is_nil(none)
    assert.matches("memory bound 2 cannot be met", msg, 1, true)
  end)

  it("dppa with one hash bin puts every key on one server", function()
    local g = planted()
    local place = assert(P{ graph = g, k = 4, method = "dppa", hash_bins = 1 })
    local c = counts(place.v, 4)
    local full = 0
    for _, n in pairs(c) do if n == 101 then full = full + 1 end end
    assert.are.equal(1, full)
    local plain = assert(P{ graph = g, k = 4, method = "dppa", alpha = 2 })
    assert.are.equal(200, #plain.u:totable())
  end)
end)
