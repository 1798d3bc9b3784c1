-- The shipped decision scripts (configs/management/nups.lua, auto.lua), run
-- through crescent.manage as a job runs them: planted hot keys are
-- replicated, a flat distribution replicates nothing, auto re-decides from
-- observed counts with hysteresis and a cap, options are checked.
local manage = require "crescent.manage"

local K = 1000

local function ctx(extra)
  local c = { table = "W", keys = K, nodes = 2 }
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end

-- Expected frequencies: flat 1 per key, planted keys at `hot` each.
local function planted(keys, hot)
  local w = {}
  for i = 1, K do w[i] = 1 end
  for _, k in ipairs(keys) do w[k + 1] = hot end
  return w
end

-- Observed counts as the scheduler passes them: every key's count given,
-- the top list the keys above floor, largest first.
local function observed(counts, floor, bound)
  local top, total = {}, 0
  for k = 0, K - 1 do
    local c = counts[k] or 10
    total = total + c
    if c > (floor or 0) then top[#top + 1] = { key = k, count = c } end
  end
  table.sort(top, function(a, b) return a.count > b.count or (a.count == b.count and a.key < b.key) end)
  return { total = total, top = top, bound = bound or 0, floor = floor or 0, seen = K }
end

local function keys_of(choice)
  return type(choice) == "table" and choice.replicate or {}
end

describe("configs/management/nups.lua", function()
  it("replicates the planted hot keys of an expected frequency vector, relocates the rest", function()
    local hot = { 3, 500, 999, 42 }
    -- 4 keys at 1000: mean about 5, line 500: all four over it.
    local d = manage.new("nups", nil, ctx())
    local c, why = d:decide { expected = planted(hot, 1000) }
    assert.is_nil(why)
    assert.are.same({ replicate = { 3, 42, 500, 999 }, relocate = "rest" }, c)
  end)

  it("replicates nothing for a flat distribution or without frequencies", function()
    local d = manage.new("nups", nil, ctx())
    assert.are.equal("relocate", (d:decide { expected = planted({}, 1) }))
    -- 50x the mean is not over the 100x line
    assert.are.equal("relocate", (d:decide { expected = planted({ 7 }, 50) }))
    assert.are.equal("relocate", (d:decide {}))
    assert.are.equal("classic", (manage.new("nups", nil, ctx { nodes = 1 }):decide { expected = planted({ 7 }, 1e6) }))
  end)

  it("follows a sampling distribution's weights (Zipf): exactly the keys over hot x the mean", function()
    local w, sum = {}, 0
    for i = 1, K do w[i] = 1 / i; sum = sum + w[i] end
    local want = {}
    for i = 1, K do if w[i] > 10 * sum / K then want[#want + 1] = i - 1 end end
    assert.is_true(#want > 5 and #want < 100)
    local c = manage.new("nups:hot=10", nil, ctx()):decide { expected = w }
    assert.are.same(want, c.replicate)
  end)

  it("caps the replicated set at the hottest keys; rest = classic", function()
    local w = planted({ 1, 2, 3, 4, 5 }, 1000)
    w[4] = 5000
    w[6] = 3000
    local c = manage.new("nups", { cap = 2, rest = "classic" }, ctx()):decide { expected = w }
    assert.are.same({ replicate = { 3, 5 }, classic = "rest" }, c)
    local c2 = manage.new("nups", nil, ctx { cap = 1 }):decide { expected = w }
    assert.are.same({ 3 }, c2.replicate)
  end)

  it("refuses unknown and bad options by name; a vector of the wrong length keeps the choice", function()
    assert.has_error(function() manage.new("nups:hott=5", nil, ctx()) end,
      "manage W: nups: unknown option 'hott' (options: hot, cap, rest)")
    assert.has_error(function() manage.new("nups", { hot = -1 }, ctx()) end,
      "manage W: nups: hot must be a positive number (got -1)")
    assert.has_error(function() manage.new("nups", { rest = "replicate" }, ctx()) end,
      "manage W: nups: rest must be relocate or classic (got replicate)")
    local c, why = manage.new("nups", nil, ctx()):decide { expected = { 1, 2, 3 } }
    assert.are.equal("classic", c)
    assert.are.equal("manage W: expected frequencies: 3 entries for 1000 keys; keeping the previous choice (classic)", why)
    local w = planted({}, 1)
    w[10] = -1
    local _, why2 = manage.new("nups", nil, ctx()):decide { expected = w }
    assert.are.equal("manage W: expected frequencies: entry 10 (key 9) is -1; keeping the previous choice (classic)", why2)
  end)
end)

describe("configs/management/auto.lua", function()
  it("starts from the NuPS heuristic, then follows the observed counts", function()
    local d = manage.new("auto", nil, ctx())
    local c = d:decide { epoch = 0, expected = planted({ 10, 20 }, 1000) }
    assert.are.same({ 10, 20 }, keys_of(c))
    -- observed: 20 stays hot, 10 went cold, 30 is hot now (line: 100 x mean ~ 1.2e3)
    c = d:decide { epoch = 1, expected = planted({ 10, 20 }, 1000), observed = observed { [20] = 5000, [30] = 6000 } }
    assert.are.same({ replicate = { 20, 30 }, classic = "rest" }, c)
  end)

  it("replicates the planted hot keys of a stream and nothing of a flat one", function()
    local d = manage.new("auto", nil, ctx())
    assert.are.same({ 1, 77, 500 }, keys_of(d:decide { observed = observed { [1] = 9000, [500] = 8000, [77] = 7000 } }))
    local flat = manage.new("auto", nil, ctx())
    assert.are.equal("classic", (flat:decide { observed = observed {} }))
  end)

  -- Keys 1..5 at 100,000 (hot); keys 100..103 alternating each epoch
  -- between 1.3x and 0.7x the line (100 x the mean, the mean counting them
  -- too: two above, two below, so they add 4 x the line). With hysteresis
  -- (keep = 0.5) a key that got in stays; without it (keep = 1) they
  -- flap at every epoch.
  local function run(keep, epochs)
    local d = manage.new("auto", { keep = keep }, ctx())
    local base = 10 * (K - 9) + 5 * 100000
    local line = 100 * base / (K - 400)
    local sets, moves = {}, 0
    for e = 1, epochs do
      local counts = {}
      for k = 1, 5 do counts[k] = 100000 end
      for k = 100, 103 do counts[k] = line * ((e + k) % 2 == 0 and 1.3 or 0.7) end
      local c = d:decide { epoch = e, observed = observed(counts) }
      sets[e] = table.concat(keys_of(c), ",")
      if e > 1 and sets[e] ~= sets[e - 1] then moves = moves + 1 end
    end
    return sets, moves
  end

  it("has hysteresis: keys near the line do not flap between epochs", function()
    local sets, moves = run(0.5, 6)
    -- once in, a key stays: the set grows once (the other two cross the
    -- line at epoch 2) and then never moves
    assert.are.equal("1,2,3,4,5,101,103", sets[1])
    for e = 2, 6 do assert.are.equal("1,2,3,4,5,100,101,102,103", sets[e]) end
    assert.are.equal(1, moves)
    local flap, flaps = run(1, 6)
    assert.are.equal(5, flaps)
    assert.are.equal("1,2,3,4,5,100,102", flap[2])
    assert.are.equal("1,2,3,4,5,101,103", flap[3])
  end)

  it("drops a replicated key whose count falls under keep x the line", function()
    local d = manage.new("auto", nil, ctx())
    assert.are.same({ 4 }, keys_of(d:decide { observed = observed { [4] = 50000 } }))
    assert.are.same({ 4 }, keys_of(d:decide { observed = observed { [4] = 800 } }))  -- line ~1000, keep 500
    assert.are.equal("classic", (d:decide { observed = observed { [4] = 400 } }))
  end)

  it("promotes only past the counting error bound, and keeps a replicated key cut from the list", function()
    local d = manage.new("auto", nil, ctx())
    assert.are.equal("classic", (d:decide { observed = observed({ [9] = 1500 }, 0, 1000) }))
    assert.are.same({ 9 }, keys_of(d:decide { observed = observed({ [9] = 2500 }, 0, 1000) }))
    -- key 9 not listed (count <= floor 700, above keep x line ~ 500): unknown, stays
    assert.are.same({ 8, 9 }, keys_of(d:decide { observed = observed({ [9] = 600, [8] = 3000 }, 700) }))
  end)

  it("waits for enough accesses; caps the set; one node is classic", function()
    local d = manage.new("auto", { min = 1000000 }, ctx { initial = "relocate" })
    assert.are.equal("relocate", (d:decide { observed = observed { [1] = 50000 } }))
    local capped = manage.new("auto:cap=2", nil, ctx())
    assert.are.same({ 1, 2 }, keys_of(capped:decide { observed = observed { [1] = 9e4, [2] = 8e4, [3] = 7e4 } }))
    assert.are.equal("classic", (manage.new("auto", nil, ctx { nodes = 1 }):decide { observed = observed { [1] = 9e4 } }))
  end)

  it("refuses unknown and bad options by name", function()
    assert.has_error(function() manage.new("auto:hott=1", nil, ctx()) end,
      "manage W: auto: unknown option 'hott' (options: hot, keep, cap, min, share, least, stay, rest, worth)")
    assert.has_error(function() manage.new("auto", { keep = 2 }, ctx()) end,
      "manage W: auto: keep must be a number in [0, 1] (got 2)")
    assert.has_error(function() manage.new("auto", { cap = 1.5 }, ctx()) end,
      "manage W: auto: cap must be an integer in [0, 9223372036854775807] (got 1.5)")
  end)
end)
