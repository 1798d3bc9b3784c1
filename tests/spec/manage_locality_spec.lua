-- auto's three-way rule from per-node counts (configs/management/auto.lua,
-- crescent.manage_counts.dominant): keys one node uses are relocated, keys
-- every node hammers replicated, keys used from several nodes stay
-- classic; the noise of a count-min sketch never looks local; a decision
-- on a 116,650-key table (KGE's entities) takes well under a second.
local cr = require "crescent"
local manage = require "crescent.manage"
local sketch = cr.core.sketch

local function rng(seed)
  local x = seed
  return function(n)
    x = (x * 1103515245 + 12345) % 2147483648
    return (x // 7) % n
  end
end

-- One node's answer (cumulative sketch, written): `own` keys accessed
-- `reps` times each, `hot` keys `hotreps` times each, `flat` uniform
-- accesses. Same shape and seed on every node, as the nodes make them.
local function answer(K, seed, own, reps, hot, hotreps, flat)
  local sk = sketch.new(K, 4096, 4, 1024, 7)
  local keys, r = {}, rng(seed)
  for _, k in ipairs(own) do for _ = 1, reps do keys[#keys + 1] = k end end
  for _, k in ipairs(hot) do for _ = 1, hotreps do keys[#keys + 1] = k end end
  for _ = 1, flat do keys[#keys + 1] = r(K) end
  for i = 1, #keys, 50000 do
    local part = {}
    for j = i, math.min(i + 49999, #keys) do part[#part + 1] = keys[j] end
    sk:add(part)
  end
  return sk:write()
end

local function range(lo, hi)
  local t = {}
  for k = lo, hi do t[#t + 1] = k end
  return t
end

local function set(list)
  local s = {}
  for _, k in ipairs(list or {}) do s[k] = true end
  return s
end

describe("auto: per-key choice from per-node counts", function()
  it("exact counts: relocates the keys one node uses, replicates the hammered ones, the rest classic", function()
    local K = 2000
    -- node 0 uses 1000..1099 (homed on node 1), node 1 uses 0..99; both
    -- hammer 1500 and 1501; both spread 20,000 accesses uniformly
    local parts = { answer(K, 1, range(1000, 1099), 200, { 1500, 1501 }, 3000, 20000),
                    answer(K, 2, range(0, 99), 200, { 1500, 1501 }, 3000, 20000) }
    local obs = manage.window(parts, nil, nil, K)
    assert.is_true(obs.nodes[1].total == 20000 + 6000 + 20000 and obs.nodes[2].bound == 0)
    local d = manage.new("auto", nil, { table = "E", keys = K, nodes = 2 })
    local c, why = d:decide { epoch = 1, observed = obs }
    assert.is_nil(why)
    assert.are.same({ 1500, 1501 }, c.replicate)
    assert.are.equal("rest", c.classic)
    local want = range(0, 99)
    for k = 1000, 1099 do want[#want + 1] = k end
    -- uniform keys get ~10 accesses from each node: never 90% from one;
    -- the local ones 200 + ~10 against ~10
    assert.are.same(want, c.relocate)
    local who = {}
    for _, x in ipairs(obs.dominant) do who[x.key] = x.node end
    assert.are.equal(1, who[5])
    assert.are.equal(0, who[1005])
    -- next epoch: node 1 stopped using 0..49; its other keys stay local
    local parts2 = {}
    for i, p in ipairs(parts) do
      local s = sketch.read(p)
      local own = i == 1 and range(1000, 1099) or range(50, 99)
      s:merge(sketch.read(answer(K, 10 + i, own, 200, { 1500, 1501 }, 3000, 20000)))
      parts2[i] = s:write()
    end
    local obs2 = manage.window(parts2, select(2, manage.window(parts, nil, nil, K)), nil, K)
    local c2 = d:decide { epoch = 2, observed = obs2 }
    local rel = set(c2.relocate)
    assert.is_nil(rel[10])
    assert.is_true(rel[60] and rel[1099])
    assert.are.same({ 1500, 1501 }, c2.replicate)
  end)

  it("count-min counts: local keys found, the tail's noise never relocated", function()
    local K = 116650
    -- 2 x 600,000 uniform accesses (5 per key per node: the tail), node 0
    -- uses 200 keys of node 1's half 40 times each, node 1 200 of node 0's
    local own0, own1 = {}, {}
    for i = 1, 200 do own0[i] = 60000 + i * 97; own1[i] = 1000 + i * 101 end
    local parts = { answer(K, 3, own0, 40, {}, 0, 600000), answer(K, 4, own1, 40, {}, 0, 600000) }
    local t0 = os.clock()
    local obs = manage.window(parts, nil, nil, K)
    local d = manage.new("auto", nil, { table = "E", keys = K, nodes = 2 })
    local c, why = d:decide { epoch = 1, observed = obs }
    local secs = os.clock() - t0
    assert.is_nil(why)
    assert.is_true(obs.nodes[1].bound > 0)
    local want = set(own0)
    for _, k in ipairs(own1) do want[k] = true end
    local found, wrong = 0, 0
    for _, k in ipairs(type(c) == "table" and c.relocate or {}) do
      if want[k] then found = found + 1 else wrong = wrong + 1 end
    end
    -- the bound (2e/4096 x 608,000 = 807) hides keys with 40 accesses: a
    -- sketch this loaded finds nothing, and relocates nothing wrong
    assert.are.equal(0, wrong)
    print(("\n  decision on %d keys (count-min, 2 nodes): %.3f s CPU; %d of 400 local keys found"):format(
      K, secs, found))
    assert.is_true(secs < 1.0)
    -- the same keys used 5,000 times each stand out of the noise (bound 2,800)
    local parts2 = { answer(K, 5, own0, 5000, {}, 0, 600000), answer(K, 6, own1, 5000, {}, 0, 600000) }
    local c2 = manage.new("auto", nil, { table = "E", keys = K, nodes = 2 }):decide {
      epoch = 1, observed = manage.window(parts2, nil, nil, K) }
    found, wrong = 0, 0
    for _, k in ipairs(c2.relocate) do
      if want[k] then found = found + 1 else wrong = wrong + 1 end
    end
    assert.are.equal(400, found)
    assert.are.equal(0, wrong)
  end)

  it("options: share, least, rest = relocate; a key used evenly stays classic", function()
    local K = 1000
    -- key 707: node 0 80 times, node 1 20 (+ ~5 each, uniform); key 708:
    -- node 0 20 times (both homed on node 1); key 7: node 0 only, its home
    local p0 = answer(K, 1, { 707, 707, 707, 707, 708, 7, 7 }, 20, {}, 0, 5000)
    local p1 = answer(K, 2, { 707 }, 20, {}, 0, 5000)
    local obs = manage.window({ p0, p1 }, nil, nil, K)
    local function rel(opts) -- worth = 0: the per-key rule alone (the planted keys are 1-2% of the accesses)
      opts = opts or {}
      if opts.worth == nil then opts.worth = 0 end
      local c = manage.new("auto", opts, { table = "E", keys = K, nodes = 2 }):decide { observed = obs }
      return set(type(c) == "table" and c.relocate or nil), c
    end
    assert.is_nil(rel(nil)[707])                 -- 80% < share 0.9
    assert.is_true(rel({ share = 0.75 })[707])
    assert.is_true(rel({ share = 0.75 })[708])   -- 40 accesses >= least 16
    assert.is_nil(rel({ share = 0.75, least = 50 })[708])
    assert.is_nil(rel({ share = 0.75 })[7])      -- used at its home only: classic there
    local _, c = rel({ rest = "relocate" })
    assert.are.equal("relocate", c)
    assert.has_error(function() manage.new("auto", { share = 0.3 }, { table = "E", keys = K, nodes = 2 }) end,
      "manage E: auto: share must be a number in [0.5, 1] (got 0.3)")
  end)

  it("keeps relocated keys until the window shows them shared", function()
    local K = 1000
    local d = manage.new("auto", { worth = 0 }, { table = "E", keys = K, nodes = 2,
      initial = { replicate = {}, relocate = { 600, 601, 602 }, classic = "rest" } })
    -- 600: not used in the window (stays); 601: still node 0's (stays);
    -- 602: used by both nodes 30 times each (goes back to classic)
    local p0 = answer(K, 1, { 601, 602 }, 30, {}, 0, 2000)
    local p1 = answer(K, 2, { 602 }, 30, {}, 0, 2000)
    local now = { sketch.read(p0), sketch.read(p1) }
    local obs = manage.window({ p0, p1 }, nil, nil, K, { 600, 601, 602 })
    assert.are.equal(3, #obs.watched)
    local c = d:decide { observed = obs }
    assert.are.same({ 600, 601 }, c.relocate)
    assert.is_true(now[1]:estimate(602) >= 30)
  end)

  it("leaves plain classic only for keys that make `worth` of the accesses, and stays out above half of it", function()
    local K = 1000
    -- node 0 uses `own` (homed on node 1) 30 times each; both nodes spread
    -- 1000 uniform accesses (about 1 per key and node)
    local function decide(own, opts, initial)
      local p0 = answer(K, 1, own, 30, {}, 0, 1000)
      local p1 = answer(K, 2, {}, 0, {}, 0, 1000)
      return manage.new("auto", opts, { table = "E", keys = K, nodes = 2, initial = initial })
        :decide { observed = manage.window({ p0, p1 }, nil, nil, K) }
    end
    local w = { worth = 0.05 }
    -- one key: 30 of 2030 accesses (1.5%): not worth leaving classic
    assert.are.equal("classic", decide({ 900 }, w))
    assert.are.same({ 900 }, decide({ 900 }, { worth = 0.01 }).relocate)
    assert.are.same({ 900 }, decide({ 900 }).relocate) -- the default, 0: any key is enough
    -- ten keys: 300 of 2300 (13%): out of classic
    assert.are.same(range(900, 909), decide(range(900, 909), w).relocate)
    -- two keys: 60 of 2060 (2.9%): under worth, above half of it: a table
    -- already out stays out, a classic one stays classic
    assert.are.equal("classic", decide({ 900, 901 }, w))
    local c = decide({ 900, 901 }, w, { replicate = {}, relocate = { 900, 901 }, classic = "rest" })
    assert.are.same({ 900, 901 }, c.relocate)
    assert.has_error(function() manage.new("auto", { worth = 2 }, { table = "E", keys = K, nodes = 2 }) end,
      "manage E: auto: worth must be a number in [0, 1] (got 2)")
  end)
end)
