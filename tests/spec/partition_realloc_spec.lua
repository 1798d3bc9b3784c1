-- Dynamic reallocation (cr.partition.lru, cr.partition.reallocate) and
-- DPPA's hashing statistics (m.hashing) from Lua.
local cr = require "crescent"
local P = cr.partition
local ints, matrix = cr.core.util.ints, cr.core.util.matrix

-- The C unit test's case (test_estimate_weights): cached a = (1, 0) accessed
-- keys {0, 1}, b = (0, 1) accessed {1, 2}; the batch sample d = (1, 0.5) is
-- at distance 0.5 from a and sqrt(1.25) from b, so with s = 1 / dist
-- f(d, 0) = sa / (sa + sb), f(d, 1) = 1, f(d, 2) = sb / (sa + sb).
local sa, sb = 1 / 0.5, 1 / math.sqrt(1.25)
local function two_samples()
  local cache = P.lru(4)
  cache:put(1, { idx = { 0 }, val = { 1 } }, { 0, 1 })
  cache:put(2, { idx = ints{ 1 } }, ints{ 1, 2 }) -- val absent: all 1
  return cache
end
local d = { { idx = { 0, 1 }, val = { 1, 0.5 } } }

local function near(want, got) assert.is_true(math.abs(want - got) < 1e-6, ("want %.9g, got %.9g"):format(want, got)) end

describe("reallocate", function()
  it("moves the key that balances the two servers best, by hand", function()
    local place = { k = 2, v = ints{ 0, 0, 0, 1 } } -- keys 0-2 on server 0, key 3 on 1
    local r = P.reallocate{ placement = place, cache = two_samples(), batch = d, r = 2, c = 0, sizes = 0.1 }
    assert.are.equal(3, r.edges)
    near(2, r.max_before) -- f sums to 1 + 1 on server 0
    near(0, r.min_before)
    -- half the gap is 1: key 1 (f = 1) is the best fit; its move halves the bottleneck
    assert.are.equal(1, r.moves)
    assert.are.same({ 1 }, r.key:totable())
    assert.are.same({ 0 }, r.from:totable())
    assert.are.same({ 1 }, r.to:totable())
    near(1, r.max_after)
    near(1, r.min_after)
    near(0.1, r.migration_volume)
    assert.are.same({ 0, 1, 0, 1 }, place.v:totable()) -- updated in place
  end)

  it("keeps only edges with f > c and uses the r nearest samples", function()
    local place = { k = 2, v = ints{ 0, 0, 0, 1 } }
    local r = P.reallocate{ placement = place, cache = two_samples(), batch = d, r = 2, c = 0.4, max_moves = 0 }
    assert.are.equal(2, r.edges) -- f(d, 2) = 0.31 dropped
    near(sa / (sa + sb) + 1, r.max_before)
    -- r = 1: only a counts, f(d, 0) = f(d, 1) = 1; equal fits go to the lowest key
    place = { k = 2, v = ints{ 0, 0, 0, 1 } }
    r = P.reallocate{ placement = place, cache = two_samples(), batch = d, r = 1, sizes = { 0.5, 0.5, 0.5, 0.5 } }
    near(2, r.max_before)
    assert.are.same({ 0 }, r.key:totable())
    near(0.5, r.migration_volume)
    assert.are.same({ 1, 0, 0, 1 }, place.v:totable())
  end)

  it("moves only while the saving over the horizon exceeds the migration cost", function()
    local place = { k = 2, v = ints{ 0, 0, 0, 1 } }
    local r = P.reallocate{ placement = place, cache = two_samples(), batch = d, r = 2 } -- size 1 = saving 1
    assert.are.equal(0, r.moves)
    assert.are.equal(0, #r.key)
    near(2, r.max_after)
    assert.are.same({ 0, 0, 0, 1 }, place.v:totable())
    r = P.reallocate{ placement = place, cache = two_samples(), batch = d, r = 2, horizon = 2 }
    assert.are.equal(1, r.moves)
    r = P.reallocate{ placement = { k = 2, v = ints{ 0, 0, 0, 1 } }, cache = two_samples(), batch = d,
                      r = 2, c = 0, sizes = 0, threshold = 2 } -- spread 2 is not above 2
    assert.are.equal(0, r.moves)
  end)

  -- As test_pipeline_shifted_access: samples of topic t (feature t) access
  -- keys 10t .. 10t+9, all 40 hot keys sit on server 0 of 4; a CSR batch of
  -- 40 samples gives each hot key weight 10, and 30 moves spread them.
  it("spreads a hot server's keys, batch given as CSR Ints", function()
    local cache = P.lru(64)
    for id = 0, 199 do
      local t, keys = id % 4, {}
      for j = 0, 9 do keys[#keys + 1] = 10 * t + j end
      cache:put(id, { idx = ints{ t }, val = matrix{ { 1 + (id % 3) * 0.01 } } }, ints(keys))
    end
    local v, ptr, idx = ints(80), ints(41), ints(40)
    for p = 0, 79 do v:set(p + 1, p < 40 and 0 or 1 + p % 3) end
    for i = 0, 39 do ptr:set(i + 2, i + 1); idx:set(i + 1, i % 4) end
    local place = { k = 4, v = v }
    local r = P.reallocate{ placement = place, cache = cache, batch = { ptr = ptr, idx = idx } }
    assert.are.equal(400, r.edges)
    near(400, r.max_before - r.min_before)
    assert.are.equal(30, r.moves)
    assert.are.equal(30, r.migration_volume)
    assert.is_true(r.max_after - r.min_after <= 10 + 1e-9)
    local load = { [0] = 0, 0, 0, 0 }
    for p = 0, 39 do local s = place.v:get(p + 1); load[s] = load[s] + 10 end
    for i = 1, r.moves do
      assert.are.equal(0, r.from:get(i))
      assert.are.equal(place.v:get(r.key:get(i) + 1), r.to:get(i))
    end
    assert.is_true(math.max(load[0], load[1], load[2], load[3]) - math.min(load[0], load[1], load[2], load[3]) <= 10)
  end)

  it("takes a whole batch into the cache with put_rows, the same as put one by one", function()
    -- 200 samples as CSR rows (one feature each) and their keys as CSR rows of 10
    local ptr, idx, val, kptr, keys = ints(201), ints(200), matrix(200, 1), ints(201), ints(2000)
    for id = 0, 199 do
      local t = id % 4
      ptr:set(id + 2, id + 1); idx:set(id + 1, t); val:set(id + 1, 1, 1 + (id % 3) * 0.01)
      kptr:set(id + 2, 10 * (id + 1))
      for j = 0, 9 do keys:set(10 * id + j + 1, 10 * t + j) end
    end
    local cache = P.lru(64)
    cache:put_rows(0, { ptr = ptr, idx = idx, val = val }, { ptr = kptr, idx = keys })
    assert.are.equal(64, #cache)
    assert.is_true(cache:contains(199) and cache:contains(136) and not cache:contains(135))
    local v = ints(80)
    for p = 0, 79 do v:set(p + 1, p < 40 and 0 or 1 + p % 3) end
    local batch = {}
    for i = 1, 40 do batch[i] = { idx = { (i - 1) % 4 } } end
    local r = P.reallocate{ placement = { k = 4, v = v }, cache = cache, batch = batch }
    assert.are.equal(400, r.edges)
    assert.are.equal(30, r.moves)
  end)

  it("put_rows without keys takes each row's feature ids as the keys it accessed", function()
    local cache = P.lru(4)
    cache:put_rows(7, { { idx = { 0, 1 } } })
    assert.is_true(cache:contains(7))
    local place = { k = 2, v = ints{ 0, 0, 1 } }
    local r = P.reallocate{ placement = place, cache = cache, batch = { { idx = { 0, 1 } } }, sizes = 0.5 }
    assert.are.equal(2, r.edges) -- keys 0 and 1, f = 1 each
    near(2, r.max_before)
    assert.are.same({ 1, 0, 1 }, place.v:totable())
  end)

  it("reads batches straight from cr.data.libsvm", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    -- libsvm features are 1-based in the file, 0-based in idx
    f:write("1 1:1 2:1\n", "0 1:1 2:1\n", "1 3:1\n")
    f:close()
    local data = cr.data.libsvm(path)
    os.remove(path)
    local cache = P.lru(8)
    cache:put_rows(0, data)
    local place = { k = 2, v = ints{ 0, 0, 0 } }
    local r = P.reallocate{ placement = place, cache = cache, batch = data, r = 1, sizes = 0 }
    assert.are.equal(5, r.edges)
    near(5, r.max_before) -- keys 0, 1 twice each, key 2 once
    assert.are.equal(1, r.moves)
    assert.are.same({ 0 }, r.key:totable())
    near(3, r.max_after)
  end)
end)

describe("lru", function()
  it("evicts the least recently put sample", function()
    local c = P.lru(3)
    assert.are.equal(3, c:capacity())
    for id = 1, 5 do c:put(id, { idx = { id } }, { id }) end
    assert.are.equal(3, #c)
    assert.are.equal(3, c:size())
    assert.is_false(c:contains(1) or c:contains(2))
    assert.is_true(c:contains(3) and c:contains(4) and c:contains(5))
    c:put(3, { idx = { 3 } }, { 3 }) -- refresh 3: 4 is now the oldest
    c:put(6, { idx = { 6 } }, { 6 })
    assert.is_false(c:contains(4))
    assert.is_true(c:contains(3) and c:contains(5) and c:contains(6))
  end)

  it("forgets what an evicted sample accessed", function()
    local c = P.lru(1)
    c:put(1, { idx = { 0 } }, { 0 })
    c:put(2, { idx = { 5 } }, { 1 }) -- evicts 1
    local r = P.reallocate{ placement = { k = 2, v = ints{ 0, 0 } }, cache = c, batch = { { idx = { 0 } } }, r = 5 }
    assert.are.equal(1, r.edges) -- key 1 only, from the one sample left
    near(1, r.max_before)
  end)

  it("keeps its memory bounded over a long stream", function()
    local c = P.lru(16)
    local idx, keys = ints(50), ints(20)
    for j = 1, 50 do idx:set(j, 3 * j) end
    for j = 1, 20 do keys:set(j, j) end
    local sample = { idx = idx }
    for id = 1, 16 do c:put(id, sample, keys) end
    local full = c:bytes()
    collectgarbage()
    local lua_kb = collectgarbage("count")
    for id = 17, 20000 do c:put(id, sample, keys) end
    assert.are.equal(16, #c)
    assert.are.equal(full, c:bytes())
    collectgarbage()
    assert.is_true(collectgarbage("count") < lua_kb + 64)
    c:put(1, { idx = { 1 } }, { 1 }) -- a small row replaces a big one
    assert.is_true(c:bytes() < full)
  end)
end)

describe("reallocate and lru errors", function()
  local function err(f)
    local ok, msg = pcall(f)
    assert.is_false(ok)
    return msg
  end
  local function place() return { k = 2, v = ints{ 0, 0, 0, 1 } } end
  local here = ".-partition_realloc_spec%.lua:%d+: "

  it("raise at the caller's line with what is wrong", function()
    local c = two_samples()
    local cases = {
      { function() P.reallocate{ placement = place(), cache = c, batch = d, rr = 2 } end,
        "reallocate: unknown option 'rr'" },
      { function() P.reallocate{ placement = place(), cache = c, batch = d, r = -1 } end,
        "reallocate: 'r' must be an integer >= 1 (got -1)" },
      { function() P.reallocate{ placement = place(), cache = c, batch = d, r = 1.5 } end,
        "reallocate: 'r' must be an integer >= 1 (got 1.5)" },
      { function() P.reallocate{ placement = place(), cache = c, batch = d, c = "x" } end,
        "reallocate: 'c' must be a number in [0, 1] (got x)" },
      { function() P.reallocate{ placement = place(), cache = c, batch = d, horizon = -1 } end,
        "reallocate: 'horizon' must be a number >= 0 (got -1)" },
      { function() P.reallocate{ placement = place(), cache = c, batch = { { idx = { 2, 1 } } } } end,
        "reallocate: batch sample 1: feature ids not strictly increasing at position 2" },
      { function() P.reallocate{ placement = place(), cache = c, batch = { d[1], { idx = { -1 } } } } end,
        "reallocate: batch sample 2: feature id -1 at position 1 out of range [0, 2^32)" },
      { function() P.reallocate{ placement = place(), cache = c, batch = { { idx = { 1 }, val = { 1, 2 } } } } end,
        "reallocate: batch sample 1: val has 2 values for 1 ids" },
      { function() P.reallocate{ placement = place(), cache = c, batch = { ptr = ints{ 0, 3 }, idx = ints{ 1, 2 } } } end,
        "reallocate: batch: ptr must run from 0 to #idx (2), val must have #idx values" },
      { function() P.reallocate{ placement = place(), cache = c, batch = { ptr = ints{ 0, 2 }, idx = ints{ 2, 2 } } } end,
        "reallocate: batch row 1: feature ids not strictly increasing at position 2" },
      { function() P.reallocate{ placement = place(), cache = c, batch = 5 } end,
        "reallocate: batch must be a list of samples or {ptr, idx, val}" },
      { function() P.reallocate{ placement = { k = 2, v = ints{ 0, 0 } }, cache = c, batch = d } end,
        "realloc: cached sample 2 accessed key 2 >= 2 keys" },
      { function() P.reallocate{ placement = { k = 2, v = ints{ 0, 5, 0 } }, cache = c, batch = d } end,
        "reallocate: placement: key 1 on server 5, not in [0, 2)" },
      { function() P.reallocate{ placement = { k = 2, v = { 0, 0, 0 } }, cache = c, batch = d } end,
        "reallocate: 'placement' must be {k = K, v = Ints} (from cr.partition or cr.partition.load)" },
      { function() P.reallocate{ placement = place(), cache = {}, batch = d } end,
        "reallocate: 'cache' must be an open cache from cr.partition.lru" },
      { function() P.reallocate{ placement = place(), cache = c, batch = d, sizes = { 1 } } end,
        "reallocate: 'sizes' must have one entry per key (4)" },
      { function() P.reallocate{ placement = place(), cache = c, batch = d, sizes = -1 } end,
        "realloc: key 0 has size -1 < 0" },
      { function() c:put(3, { idx = { 1, 1 } }, { 0 }) end,
        "put: sample: feature ids not strictly increasing at position 2" },
      { function() c:put(-3, { idx = { 1 } }, { 0 }) end, "put: id must be non-negative (got -3)" },
      { function() c:put(3, { idx = { 1 } }, { -1 }) end, "put: key -1 at position 1 out of range" },
      { function() c:put(3, { idx = { 1 } }) end, "put: keys (the keys the sample accessed) expected" },
      { function() c:put(3, { idx = "x" }, { 1 }) end,
        "put: sample: idx must be an Ints or a table of integers (got string)" },
      { function() c:put(3, { idx = { 1 }, val = "x" }, { 1 }) end,
        "put: sample: val must be a Matrix, a table of numbers or nil (got string)" },
      { function() P.lru(0) end, "lru: capacity must be in [1, 16777216] (got 0)" },
      { function() c:put_rows(0, { { idx = { 1 } } }, { ptr = ints{ 0, 1, 2 }, idx = ints{ 0, 1 } }) end,
        "put_rows: 2 rows of keys for 1 rows" },
      { function() c:put_rows(0, { ptr = ints{ 0, 2 }, idx = ints{ 3, 1 } }) end,
        "put_rows: batch row 1: feature ids not strictly increasing at position 2" },
      { function() c:put_rows(-1, { { idx = { 1 } } }) end, "put_rows: first id must be non-negative (got -1)" },
      { function()
          local n = 0 -- a sample whose idx grows on every read
          local grows = setmetatable({}, { __index = function(_, key)
            if key ~= "idx" then return nil end
            n = n + 1
            local t = {}
            for i = 1, n do t[i] = i end
            return t
          end })
          P.reallocate{ placement = place(), cache = c, batch = { grows } }
        end, "reallocate: batch sample 1: the batch changed while it was read" },
      { function()
          local closed
          do
            local cc <close> = P.lru(2)
            closed = cc
          end
          closed:put(1, { idx = { 1 } }, { 1 })
        end, "cache is closed" },
    }
    for i, case in ipairs(cases) do
      local msg = err(case[1])
      assert.is_truthy(msg:match("^" .. here), ("case %d: %s"):format(i, msg))
      assert.are.equal(case[2], msg:gsub("^" .. here, ""), "case " .. i)
    end
    assert.matches("bad argument #1 to 'reallocate' (table expected, got number)", err(function() P.reallocate(5) end),
                   1, true)
    -- nothing half-done: the failed calls left the cache and a placement as they were
    assert.are.equal(2, #c)
    local p = place()
    err(function() P.reallocate{ placement = p, cache = c, batch = { d[1], { idx = { 3, 1 } } } } end)
    assert.are.same({ 0, 0, 0, 1 }, p.v:totable())
  end)

  it("survive many failed calls without growing", function()
    local c = two_samples()
    collectgarbage()
    local kb = collectgarbage("count")
    for _ = 1, 2000 do
      pcall(P.reallocate, { placement = place(), cache = c, batch = { d[1], { idx = { 3, 1 } } } })
      pcall(c.put, c, 9, { idx = { 2, 1 } }, { 0 })
    end
    collectgarbage()
    assert.is_true(collectgarbage("count") < kb + 64)
    assert.are.equal(2, #c)
  end)
end)

describe("dppa hashing statistics", function()
  -- 20 examples with 3 distinct keys each among 30
  local function graph()
    local u, v = {}, {}
    for i = 0, 19 do
      for j = 0, 2 do u[#u + 1] = i; v[#v + 1] = (i + 7 * j) % 30 end
    end
    return P.graph{ u = u, v = v }
  end

  it("come with dppa's metrics when hash_bins > 0", function()
    local g = graph()
    local _, m = assert(P{ graph = g, k = 2, method = "dppa", hash_bins = 1 })
    -- one bin: every example keeps exactly one edge
    assert.are.same({ bins = 1, bins_used = 1, edges = 20, edge_ratio = 20 / 60, density = 1, mean_v_degree = 20 },
                    m.hashing)
    local _, m8 = assert(P{ graph = g, k = 2, method = "dppa", hash_bins = 8, seed = 3 })
    local h = m8.hashing
    assert.are.equal(8, h.bins)
    assert.is_true(h.bins_used >= 3 and h.bins_used <= 8)
    assert.is_true(h.edges >= 20 and h.edges <= 60)
    near(h.edges / 60, h.edge_ratio)
    near(h.edges / (20 * 8), h.density)
    near(h.edges / h.bins_used, h.mean_v_degree)
  end)

  it("are absent without hashing or for other methods", function()
    local g = graph()
    local _, m = assert(P{ graph = g, k = 2, method = "dppa" })
    assert.is_nil(m.hashing)
    local _, mp = assert(P{ graph = g, k = 2, method = "parsa", hash_bins = 4 })
    assert.is_nil(mp.hashing)
  end)
end)
