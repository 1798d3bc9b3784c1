-- crescent.core.kernels w2v_vocab, w2v_reader (next, pool, train, rewind),
-- w2v_copy_rows, w2v_write_vectors, w2v_read_vectors: the binding that
-- lua/models/word2vec.lua and examples/word2vec.lua use (the reader's C side
-- is checked in tests/c/test_w2v_corpus.c, the kernels in tests/c/test_w2v.c).
local crescent = require "crescent"
local K, util = crescent.core.kernels, crescent.core.util

local function tmpfile(text)
  local p = os.tmpname()
  local f = assert(io.open(p, "w"))
  f:write(text)
  f:close()
  return p
end

describe("w2v_vocab and w2v_reader", function()
  local path
  before_each(function() path = tmpfile("a b c a\nb a d\n\ne a b c d\na f\n") end)
  after_each(function() os.remove(path) end)

  it("counts the vocabulary by descending count, with min_count", function()
    local v = assert(K.w2v_vocab(path, { min_count = 2 }))
    assert.are.same({ "a", "b", "c", "d" }, v.words)
    assert.are.equal(4, v.n)
    assert.are.equal(14, v.raw)
    assert.are.equal(12, v.kept)
    assert.are.equal(5, v.lines)
    assert.are.equal(5, v.counts:get(1))
    assert.are.equal("a 5\nb 3\nc 2\nd 2\n", v.text)
  end)

  it("returns nil and a message for an empty or missing corpus", function()
    local e = tmpfile("\n \n")
    local v, msg = K.w2v_vocab(e)
    os.remove(e)
    assert.is_nil(v)
    assert.truthy(msg:find("empty corpus (no words)", 1, true))
    v, msg = K.w2v_vocab(path .. ".none")
    assert.is_nil(v)
    assert.truthy(msg:find("cannot open", 1, true))
  end)

  it("trains a batch: keys, pool rows, changes to push", function()
    local v = assert(K.w2v_vocab(path, { min_count = 1 }))
    local R = assert(K.w2v_reader(path, v.text, { batch = 100, sample = 0, seed = 3 }))
    local keys, raw, words, kept = R:next()
    assert.are.equal(14, raw)
    assert.are.equal(14, words)
    assert.are.equal(14, kept)
    assert.are.equal(6, #keys)
    local okeys = R:pool(util.ints { 5, 0, 5, 1 })
    assert.are.equal(6, #okeys) -- every pool word is a word of the batch
    local d = 4
    local s0, s1, prow = util.matrix(6, d), util.matrix(6, d), util.matrix(4, d)
    for i = 1, 6 do for k = 1, d do s0:set(i, k, 0.1 * ((i + k) % 3 - 1)) end end
    local d1, loss, pairs = R:train(s0, s1, prow, { window = 2, negative = 2, alpha = 0.1, loss = true })
    assert.are.equal(6, d1:rows())
    assert.is_true(pairs > 0 and loss > 0)
    local moved = 0
    for i = 1, 6 do for k = 1, d do moved = moved + math.abs(d1:get(i, k)) end end
    assert.is_true(moved > 0) -- the output rows changed (they start at zero)
    local same = true
    for i = 1, 6 do for k = 1, d do same = same and s0:get(i, k) == 0 end end
    assert.is_false(same) -- s0 now holds the change of the input rows
    assert.is_nil(R:next())
    R:rewind(2)
    assert.is_not_nil(R:next())
  end)

  it("adds pool words that are not in the batch after its words", function()
    local v = assert(K.w2v_vocab(path, { min_count = 1 }))
    local R = assert(K.w2v_reader(path, v.text, { batch = 1, sample = 0, parts = 2, part = 1 }))
    local keys = R:next() -- line 2: b a d
    assert.are.same({ 1, 0, 3 }, { keys:get(1), keys:get(2), keys:get(3) })
    local okeys = R:pool(util.ints { 5, 1, 4 })
    assert.are.equal(5, #okeys)
    assert.are.same({ 5, 4 }, { okeys:get(4), okeys:get(5) })
    local prow = util.matrix(3, 2)
    prow:set(1, 1, 7) -- pool position 1 holds word 5's row
    local d1 = R:train(util.matrix(3, 2), util.matrix(3, 2), prow, { negative = 0 })
    assert.are.equal(5, d1:rows())
  end)

  it("gives empty keys for a batch with no vocabulary word (next, peek, pool)", function()
    -- the reader's key array is still unallocated then: a null source with
    -- size 0, which UBSan (make asan) aborts on if it reaches memcpy
    local p = tmpfile("q\nr\na b a b\n")
    local v = assert(K.w2v_vocab(p, { min_count = 2 }))
    local R = assert(K.w2v_reader(p, v.text, { batch = 1, sample = 0 }))
    local keys, raw, words = R:next()
    assert.are.same({ 0, 1, 0 }, { #keys, raw, words })
    assert.are.equal(0, #R:peek())
    assert.are.equal(0, #R:pool(util.ints {}))
    local d1, _, pairs = R:train(util.matrix(0, 2), util.matrix(0, 2), util.matrix(0, 2), { negative = 0 })
    assert.are.same({ 0, 0 }, { d1:rows(), pairs })
    assert.are.equal(0, #R:next())
    assert.are.equal(2, #R:next())
    assert.is_nil(R:next())
    os.remove(p)
  end)

  it("raises on misuse, naming the call", function()
    local v = assert(K.w2v_vocab(path, { min_count = 1 }))
    local R = assert(K.w2v_reader(path, v.text, { sample = 0 }))
    assert.has_error(function() R:train(util.matrix(1, 2), util.matrix(1, 2)) end,
                     "train: no batch (call next first)")
    R:next()
    assert.has_error(function() R:train(util.matrix(6, 2), util.matrix(6, 2), nil, {}) end,
                     "train: negative > 0 needs a pool (call pool first)")
    assert.has_error(function() R:pool(util.ints { 6 }) end, "pool: pool entry 1 is 6, not a word id")
    R:pool(util.ints { 0, 1 })
    assert.has_error(function() R:train(util.matrix(5, 2), util.matrix(6, 2), util.matrix(2, 2)) end)
    assert.has_error(function() R:train(util.matrix(6, 2), util.matrix(6, 2), util.matrix(3, 2)) end,
                     "train: pool rows must be 2 x 2, got 3 x 2")
    assert.has_error(function() R:train(util.matrix(6, 2), util.matrix(6, 2), util.matrix(2, 2), { model = "x" }) end)
    assert.has_error(function() K.w2v_reader(path, "a 1\na 2\n") end, "w2v_reader: vocab:2: word 'a' given twice")
    assert.has_error(function() K.w2v_reader(path, v.text, { part = 2, parts = 2 }) end)
    local r2, msg = K.w2v_reader(path .. ".none", v.text)
    assert.is_nil(r2)
    assert.truthy(msg:find("cannot open", 1, true))
    R:close()
    assert.has_error(function() R:next() end, "word2vec reader is closed")
  end)
end)

describe("word vectors in the word2vec text format", function()
  it("round-trips through w2v_write_vectors and w2v_read_vectors", function()
    local p = os.tmpname()
    local m = util.matrix { { 0.5, -1 }, { 2, 0.25 }, { 0, 3 } }
    assert.is_true(K.w2v_write_vectors(p, m, { "x", "y", "z" }))
    local back, words = K.w2v_read_vectors(p)
    assert.are.same({ "x", "y", "z" }, words)
    assert.are.same(m:totable(), back:totable())
    local f = assert(io.open(p, "w"))
    f:write("2 2\nx 1 2\ny 1\n")
    f:close()
    local none, msg = K.w2v_read_vectors(p)
    assert.is_nil(none)
    assert.are.equal(p .. ":3: value 2: missing (too few values)", msg)
    os.remove(p)
    assert.has_error(function() K.w2v_write_vectors(p, m, { "x", "y" }) end, "2 words for 3 rows")
  end)

  it("copies row blocks into a matrix", function()
    local dst = util.matrix(4, 2)
    K.w2v_copy_rows(dst, 2, util.matrix { { 1, 2 }, { 3, 4 } })
    assert.are.same({ { 0, 0 }, { 0, 0 }, { 1, 2 }, { 3, 4 } }, dst:totable())
    assert.has_error(function() K.w2v_copy_rows(dst, 3, util.matrix { { 1, 2 }, { 3, 4 } }) end)
  end)
end)
