-- crescent.core.kernels.kge_batches: batches of training triples for
-- kge_step (keys to pull, batch-local rows, negatives), their misuse
-- messages, and a few epochs of real kge_step calls on them lowering the loss.
local crescent = require "crescent"
local K, util = crescent.core.kernels, crescent.core.util

local errors = require "spec_errors"
local err_of, has = errors.err_of, errors.has

-- A tiny graph: relation 0 links i -> i+1, relation 1 links i -> i+2 (mod 8).
local NE, NR, D = 8, 2, 6
local function graph()
  local t = { s = {}, r = {}, o = {} }
  for i = 0, NE - 1 do
    for r = 0, NR - 1 do
      t.s[#t.s + 1], t.r[#t.r + 1], t.o[#t.o + 1] = i, r, (i + r + 1) % NE
    end
  end
  return t
end

describe("crescent.core.kernels.kge_batches", function()
  it("hands out each positive once per epoch with rows that map back to its ids", function()
    local t = graph()
    local b <close> = K.kge_batches(t, { batch = 5, neg = 2, entities = NE, relations = NR, seed = 3 })
    assert.equal(16, b:count())
    assert.equal(4, b:batches())
    local seen, batches = {}, 0
    while true do
      local need = b:needs()
      local ek, rk, batch, pos = b:next()
      if not ek then break end
      batches = batches + 1
      assert.equal(need, 4 * pos)
      assert.equal(pos * 5, #batch.s)
      for k = 2, #ek do assert.is_true(ek:get(k) > ek:get(k - 1)) end
      for i = 0, pos - 1 do
        local p = i * 5 + 1
        local s, r, o = ek:get(batch.s:get(p) + 1), rk:get(batch.r:get(p) + 1), ek:get(batch.o:get(p) + 1)
        assert.equal((s + r + 1) % NE, o)
        assert.equal(1, batch.y:get(p, 1))
        local key = s * NR + r
        assert.is_nil(seen[key])
        seen[key] = true
        for j = 1, 4 do
          assert.equal(0, batch.y:get(p + j, 1))
          if j <= 2 then assert.equal(batch.o:get(p), batch.o:get(p + j))
          else assert.equal(batch.s:get(p), batch.s:get(p + j)) end
        end
      end
    end
    assert.equal(4, batches)
    local n = 0
    for _ in pairs(seen) do n = n + 1 end
    assert.equal(16, n)
  end)

  it("takes the negatives it is given, subject side first", function()
    local b <close> = K.kge_batches(graph(), { batch = 1, neg = 1, entities = NE, relations = NR })
    local ek, _, batch = b:next({ 7, 6 })
    assert.equal(7, ek:get(batch.s:get(2) + 1))
    assert.equal(6, ek:get(batch.o:get(3) + 1))
    has("kge batches:next: negatives: got 1 ids, the batch needs 2", err_of(b.next, b, { 1 }))
    has("kge batches:next: negative 2: entity 8 is not in [0, 8)", err_of(b.next, b, { 1, 8 }))
  end)

  it("reads the id ranges from a triples result and rejects bad input", function()
    local t = graph()
    t.n_ent, t.n_rel = NE, NR
    assert.equal(16, K.kge_batches(t):count())
    has("kge_batches: batch must be >= 1 (got 0)", err_of(K.kge_batches, t, { batch = 0 }))
    has("kge_batches: neg must be >= 0 (got -1)", err_of(K.kge_batches, t, { neg = -1 }))
    has("kge_batches: triple 3: subject 1 is not in [0, 1)", err_of(K.kge_batches, t, { entities = 1 }))
    has("kge_batches: entities must be >= 1 (got 0)", err_of(K.kge_batches, graph()))
    has("kge_batches: unknown option 'negs'", err_of(K.kge_batches, t, { negs = 1 }))
    local b = K.kge_batches(t)
    b:close()
    has("kge batches are closed", err_of(b.next, b))
  end)

  it("is deterministic for a seed", function()
    local function first_keys(seed)
      local b <close> = K.kge_batches(graph(), { batch = 4, neg = 3, entities = NE, relations = NR, seed = seed })
      b:shuffle(seed + 1)
      return table.concat(b:next():totable(), ",")
    end
    assert.equal(first_keys(5), first_keys(5))
  end)

  -- ComplEx, not DistMult: DistMult scores (a, r, b) and (b, r, a) alike, so
  -- on this graph of one-way links its loss stalls near 0.5.
  it("lowers the loss of real kge_step calls over a few epochs", function()
    local E, R = util.matrix(NE, D), util.matrix(NR, D)
    local x = 11
    local function rnd() x = (x * 1103515245 + 12345) % 2147483648; return (x / 2147483648 - 0.5) * 0.2 end
    for i = 1, NE do for k = 1, D do E:set(i, k, rnd()) end end
    for i = 1, NR do for k = 1, D do R:set(i, k, rnd()) end end
    local b <close> = K.kge_batches(graph(), { batch = 4, neg = 2, entities = NE, relations = NR, seed = 1 })
    local function pull(M, keys)
      local L = util.matrix(#keys, M:cols())
      for i = 1, #keys do for k = 1, M:cols() do L:set(i, k, M:get(keys:get(i) + 1, k)) end end
      return L
    end
    local function push(M, keys, G, lr)
      for i = 1, #keys do
        local row = keys:get(i) + 1
        for k = 1, M:cols() do M:set(row, k, M:get(row, k) - lr * G:get(i, k)) end
      end
    end
    local losses = {}
    for epoch = 1, 80 do
      b:shuffle(epoch)
      local total, n = 0, 0
      while true do
        local ek, rk, batch = b:next()
        if not ek then break end
        local Em, Rm = pull(E, ek), pull(R, rk)
        local gE, gR = util.matrix(#ek, D), util.matrix(#rk, D)
        local loss, _, m = K.kge_step("complex", Em, Rm, gE, gR, batch, { lambda = 1e-4 })
        total, n = total + loss, n + m
        push(E, ek, gE, 0.2)
        push(R, rk, gR, 0.2)
      end
      losses[epoch] = total / n
    end
    assert.is_true(losses[80] < 0.6 * losses[1], ("loss %g -> %g"):format(losses[1], losses[80]))
  end)

  it("with negrows, gives the negatives rows of their own: kge_step with es/ges equals the merged batch", function()
    local t = graph()
    local merged <close> = K.kge_batches(t, { batch = 5, neg = 2, entities = NE, relations = NR, seed = 4 })
    local split <close> = K.kge_batches(t, { batch = 5, neg = 2, entities = NE, relations = NR, seed = 4,
                                              negrows = true })
    local E, R = util.matrix(NE, D), util.matrix(NR, D)
    for i = 1, NE do for k = 1, D do E:set(i, k, math.sin(i * 7 + k)) end end
    for i = 1, NR do for k = 1, D do R:set(i, k, math.cos(i * 3 + k)) end end
    local function rows(M, keys)
      local L = util.matrix(#keys, M:cols())
      for i = 1, #keys do for k = 1, M:cols() do L:set(i, k, M:get(keys:get(i) + 1, k)) end end
      return L
    end
    local negs = split:draw(split:needs())
    assert.equal(20, #negs)
    for i = 1, #negs do assert.is_true(negs:get(i) >= 0 and negs:get(i) < NE) end
    local ek1, rk1, b1 = merged:next(negs)
    local ek2, rk2, b2 = split:next(negs)
    for i = 1, #ek2 do assert.is_true(ek2:get(i) < NE) end
    assert.is_true(#ek2 <= #ek1)
    local g1, r1 = util.matrix(#ek1, D), util.matrix(#rk1, D)
    local g2, r2, gs = util.matrix(#ek2, D), util.matrix(#rk2, D), util.matrix(#negs, D)
    local l1 = K.kge_step("complex", rows(E, ek1), rows(R, rk1), g1, r1, b1, { lambda = 0.01 })
    local l2 = K.kge_step("complex", rows(E, ek2), rows(R, rk2), g2, r2, b2,
                          { lambda = 0.01, es = rows(E, negs), ges = gs })
    assert.near(l1, l2, 1e-9)
    -- the gradient of entity x: its row in the merged batch = its ekeys row + all its negative rows
    local sum = {}
    for i = 1, #ek2 do for k = 1, D do local x = ek2:get(i); sum[x * D + k] = (sum[x * D + k] or 0) + g2:get(i, k) end end
    for i = 1, #negs do for k = 1, D do local x = negs:get(i); sum[x * D + k] = (sum[x * D + k] or 0) + gs:get(i, k) end end
    for i = 1, #ek1 do for k = 1, D do assert.near(g1:get(i, k), sum[ek1:get(i) * D + k], 1e-5) end end
    assert.truthy(err_of(function() K.kge_step("complex", rows(E, ek2), rows(R, rk2), g2, r2, b2) end))
    has("option es needs ges", err_of(function()
      K.kge_step("complex", rows(E, ek2), rows(R, rk2), g2, r2, b2, { es = rows(E, negs) })
    end))
  end)

  it("splits the triples over parts", function()
    local t, n = graph(), 0
    for p = 0, 2 do
      local b <close> = K.kge_batches(t, { batch = 4, neg = 0, entities = NE, relations = NR, part = p, parts = 3 })
      n = n + b:count()
    end
    assert.equal(16, n)
    has("part 3 is not in [0, 3)", err_of(function()
      K.kge_batches(t, { entities = NE, relations = NR, part = 3, parts = 3 })
    end))
  end)
end)
