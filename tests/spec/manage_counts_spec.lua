-- From counted accesses to a decision, as the scheduler runs it: each
-- "node" counts its workers' keys in core.sketch sketches, answers with
-- them serialised; crescent.manage.window merges the answers, takes the
-- window since the last decision and auto.lua decides from it.
local cr = require "crescent"
local manage = require "crescent.manage"
local sketch = cr.core.sketch

local K = 200000 -- a count-min sketch, not exact mode

-- One node's answer: 2 workers' sketches merged, written. hot: key ->
-- accesses per worker; plus `flat` uniform accesses per worker.
local function node_answer(seed, hot, flat)
  local merged = sketch.new(K, 4096, 4, 1024, 7)
  for w = 1, 2 do
    local sk = sketch.new(K, 4096, 4, 1024, 7)
    local keys = {}
    for k, n in pairs(hot) do for _ = 1, n do keys[#keys + 1] = k end end
    local x = seed * 7 + w
    for _ = 1, flat do
      x = (x * 1103515245 + 12345) % 2147483648
      keys[#keys + 1] = x % K
    end
    -- interleave hot and flat accesses as a worker would
    for i = #keys, 2, -1 do
      x = (x * 1103515245 + 12345) % 2147483648
      local j = x % i + 1
      keys[i], keys[j] = keys[j], keys[i]
    end
    sk:add(keys)
    merged:merge(sk)
  end
  return merged:write()
end

describe("counts to decisions", function()
  it("core.sketch: exact below width x depth keys, counts, merges, windows, round-trips", function()
    local s = sketch.new(1000)
    assert.is_true(s:exact())
    s:add { 1, 1, 2, 999 }
    assert.are.equal(2, s:estimate(1))
    assert.are.equal(4, s:total())
    assert.are.equal(3, s:distinct())
    local t = sketch.read(s:write())
    t:merge(s)
    assert.are.equal(4, t:estimate(1))
    assert.are.same({ { key = 1, count = 4 } }, t:heavy(2))
    assert.are.same({ nil, "sketch: 3 bytes, shorter than a header" }, { sketch.read("abc") })
    assert.has_error(function() t:merge(sketch.new(1001)) end)
    assert.has_error(function() s:add { 1, "x" } end, "sketch:add: keys[2] is not an integer")
  end)

  it("replicates the keys hot on the nodes, then follows them when they change", function()
    local d = manage.new("auto", nil, { table = "W", keys = K, nodes = 2 })
    -- epoch 1: keys 11, 222, 3333 hot (400 x 4 workers each; 4 x 3000 flat:
    -- line = 100 x 16,800 / 200,000 = 8.4 plus the bound 2e/4096 x 16,800 = 22)
    local hot1 = { [11] = 400, [222] = 400, [3333] = 400 }
    local parts = { node_answer(1, hot1, 3000), node_answer(2, hot1, 3000) }
    local obs, sum = manage.window(parts, nil)
    assert.are.equal(4 * (1200 + 3000), obs.total)
    local c, why = d:decide { epoch = 1, observed = obs }
    assert.is_nil(why)
    assert.are.same({ replicate = { 11, 222, 3333 }, classic = "rest" }, c)
    -- epoch 2: 222 and 3333 stay hot, 11 is cold, 77 is hot; the sums keep
    -- growing, the window is epoch 2 only
    local hot2 = { [77] = 400, [222] = 400, [3333] = 400 }
    local parts2 = {}
    for i, p in ipairs(parts) do
      local s = sketch.read(p)
      s:merge(sketch.read(node_answer(i + 2, hot2, 3000)))
      parts2[i] = s:write()
    end
    local obs2, sum2 = manage.window(parts2, sum)
    assert.are.equal(4 * (1200 + 3000), obs2.total)
    assert.is_true(sum2[1]:total() + sum2[2]:total() == 2 * obs2.total)
    c = d:decide { epoch = 2, observed = obs2 }
    assert.are.same({ replicate = { 77, 222, 3333 }, classic = "rest" }, c)
  end)

  it("a flat stream replicates nothing; a bad answer is named", function()
    local d = manage.new("auto", nil, { table = "W", keys = K, nodes = 2 })
    local obs = manage.window({ node_answer(5, {}, 5000), node_answer(6, {}, 5000) }, nil)
    assert.are.equal("classic", (d:decide { observed = obs }))
    local bad, err = manage.window({ node_answer(5, {}, 10), "garbage!" }, nil)
    assert.is_nil(bad)
    assert.are.equal("counts of node 1: sketch: 8 bytes, shorter than a header", err)
  end)
end)
