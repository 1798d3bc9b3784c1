-- crescent.core.kernels w2v_*: the word2vec kernels from Lua (the math is
-- checked in tests/c/test_w2v.c; here the binding: arguments, options,
-- returned counts, the pool cursor, grad_lr and the errors a script sees).
local crescent = require "crescent"
local K, util = crescent.core.kernels, crescent.core.util

-- Two topics of five words; sentence s draws from topic s % 2.
local function corpus(nsent, len)
  local rng = 7
  local function rand(n) rng = (rng * 1103515245 + 12345) % 2147483648; return rng % n end
  local toks, offs = {}, { 0 }
  for s = 1, nsent do
    for _ = 1, len do toks[#toks + 1] = (s % 2) * 5 + rand(5) end
    offs[#offs + 1] = #toks
  end
  local pool = {}
  for i = 1, 997 do pool[i] = rand(10) end
  return util.ints(toks), util.ints(offs), util.ints(pool)
end

local function cosine(m, a, b)
  local ab, aa, bb = 0, 0, 0
  for k = 1, m:cols() do
    local x, y = m:get(a, k), m:get(b, k)
    ab, aa, bb = ab + x * y, aa + x * x, bb + y * y
  end
  return ab / math.sqrt(aa * bb)
end

local function gap(m)
  local inside, across, ni, na = 0, 0, 0, 0
  for i = 1, 10 do
    for j = i + 1, 10 do
      if (i <= 5) == (j <= 5) then inside, ni = inside + cosine(m, i, j), ni + 1
      else across, na = across + cosine(m, i, j), na + 1 end
    end
  end
  return inside / ni - across / na
end

local function train(fn, epochs)
  local toks, offs, pool = corpus(300, 8)
  local syn0, syn1 = util.matrix(10, 12), util.matrix(10, 12)
  K.w2v_init(syn0, syn1, 3)
  local first, last, pos = nil, nil, 0
  for ep = 1, epochs do
    local loss, pairs, npos = fn(toks, toks, syn0, syn1, pool, {
      window = 2, negative = 3, alpha = 0.025 * (1 - (ep - 1) / epochs), seed = ep, sentences = offs,
      neg_pos = pos })
    assert(pairs > 0 and npos ~= pos)
    pos = npos
    first = first or loss / pairs
    last = loss / pairs
  end
  return syn0, first, last
end

describe("w2v kernels", function()
  it("skip-gram pulls a topic's words together and lowers the loss", function()
    local syn0, first, last = train(K.w2v_sgns, 15)
    assert.is_true(last < first)
    assert.is_true(gap(syn0) > 0.5)
  end)

  it("CBOW pulls a topic's words together and lowers the loss", function()
    local syn0, first, last = train(K.w2v_cbow, 15)
    assert.is_true(last < first)
    assert.is_true(gap(syn0) > 0.5)
  end)

  it("initializes as the tool does", function()
    local a, b = util.matrix(20, 4), util.matrix(20, 4)
    b:set(1, 1, 3)
    K.w2v_init(a, b, 1)
    for i = 1, 20 do
      for k = 1, 4 do
        assert.is_true(math.abs(a:get(i, k)) <= 0.125 and b:get(i, k) == 0)
      end
    end
  end)

  it("advances the pool by k per update and counts pairs", function()
    local toks, pool = util.ints { 0, 1, 2 }, util.ints { 3, 4 }
    local s0, s1 = util.matrix(5, 3), util.matrix(5, 3)
    -- window 1 over three tokens: 4 skip-gram pairs, 3 negatives each, pool of 2
    local _, pairs, pos = K.w2v_sgns(toks, toks, s0, s1, pool, { window = 1, negative = 3 })
    assert.are.equal(4, pairs)
    assert.are.equal((4 * 3) % 2, pos)
    _, pairs, pos = K.w2v_cbow(toks, toks, s0, s1, pool, { window = 1, negative = 3, neg_pos = 1 })
    assert.are.equal(3, pairs)
    assert.are.equal((1 + 3 * 3) % 2, pos)
  end)

  it("grad_lr turns the change into gradient sums for an sgd push", function()
    local toks, offs, pool = corpus(4, 6)
    local a0, a1, b0, b1 = util.matrix(10, 4), util.matrix(10, 4), util.matrix(10, 4), util.matrix(10, 4)
    K.w2v_init(a0, a1, 9)
    K.w2v_init(b0, b1, 9)
    for i = 1, 10 do for k = 1, 4 do a1:set(i, k, 0.1 * k - 0.01 * i); b1:set(i, k, 0.1 * k - 0.01 * i) end end
    local before = a0:totable()
    local o = { alpha = 0.05, seed = 4, sentences = offs }
    K.w2v_sgns(toks, toks, a0, a1, pool, o)
    o.grad_lr = 0.05
    K.w2v_sgns(toks, toks, b0, b1, pool, o)
    local moved = 0
    for i = 1, 10 do
      for k = 1, 4 do
        local want = (before[i][k] - a0:get(i, k)) / 0.05
        assert.is_true(math.abs(b0:get(i, k) - want) < 1e-4)
        moved = moved + math.abs(want)
      end
    end
    assert.is_true(moved > 0)
  end)

  it("subsamples frequent words with the tool's rule, seeded", function()
    local words = {}
    for i = 1, 10000 do words[i] = (i % 100 == 0) and 1 or 0 end
    local w, counts = util.ints(words), util.ints { 9900, 100 }
    local kept = K.w2v_subsample(w, counts, { sample = 1e-2, seed = 5 })
    local n = { [0] = 0, [1] = 0 }
    for i = 1, #kept do n[kept:get(i)] = n[kept:get(i)] + 1 end
    local p0 = (math.sqrt(9900 / 100) + 1) * 100 / 9900
    assert.is_true(math.abs(n[0] - 9900 * p0) < 5 * math.sqrt(9900 * p0))
    assert.are.equal(100, n[1])
    local again = K.w2v_subsample(w, counts, { sample = 1e-2, seed = 5 })
    assert.are.same(kept:totable(), again:totable())
    assert.are.equal(10000, #K.w2v_subsample(w, counts, { sample = 0 }))
  end)

  it("refuses bad arguments with clear messages", function()
    local t, s0, s1 = util.ints { 0, 1 }, util.matrix(2, 3), util.matrix(2, 3)
    assert.has_error(function() K.w2v_sgns(t, util.ints { 0, 2 }, s0, s1, util.ints { 0 }) end,
      "out 2 is 2, not a row of its matrix (0..1)")
    assert.has_error(function() K.w2v_cbow(t, t, s0, s1, util.ints { 0 }, { windw = 2 }) end,
      "w2v_cbow: unknown option 'windw'")
    assert.has_error(function() K.w2v_sgns(t, t, s0, util.matrix(2, 4), util.ints { 0 }) end,
      "w2v_sgns: syn0 and syn1 must have the same number of columns, 1..16384 (got 3 and 4)")
    assert.has_error(function() K.w2v_sgns(t, t, s0, s1, util.ints {}, { negative = 2 }) end,
      "w2v_sgns: an empty negative pool")
    assert.has_error(function()
      K.w2v_sgns(t, t, s0, s1, util.ints { 0, 1 }, { negative = 2, neg_mode = "position" })
    end, "w2v_sgns: fewer negatives than tokens * k")
    assert.has_error(function() K.w2v_sgns(t, t, s0, s1, util.ints { 0 }, { sentences = util.ints { 0, 1 } }) end,
      "option 'sentences' must run from 0 to the number of tokens (2)")
    assert.has_error(function() K.w2v_subsample(t, util.ints { 4 }) end,
      "w2v_subsample: word 2 is 1, not an index of counts (0..0)")
  end)
end)
