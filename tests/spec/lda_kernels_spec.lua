-- crescent.core.kernels lda_*: the LDA corpus and samplers from Lua (the
-- samplers' statistics are checked in tests/c/test_lda_mh.c and
-- test_lda_planted.c; here the binding: loading, splits, chunks, counts,
-- the deltas of a sweep, determinism and the errors a script sees).
local crescent = require "crescent"
local files = require "spec_files"
local K, util = crescent.core.kernels, crescent.core.util

-- Global counts (V x NK i32) and totals (1 x NK) of a corpus's assignment.
local function global(c, V, NK)
  local nwk = c:word_topic_counts(0, V)
  local nk = util.matrix(1, NK, "i32")
  for w = 1, V do
    for k = 1, NK do nk:set(1, k, nk:get(1, k) + nwk:get(w, k)) end
  end
  return nwk, nk
end

-- The rows of keys (Ints, 0-based) of m.
local function rows(m, keys, NK)
  local out = util.matrix(#keys, NK, "i32")
  for r = 1, #keys do
    for k = 1, NK do out:set(r, k, m:get(keys:get(r) + 1, k)) end
  end
  return out
end

describe("kernels.lda", function()
  local dir, path

  setup(function() dir, path = files.tmpdir() end)
  teardown(function() files.remove_dir(dir) end)

  local function svm(name, text)
    local p = path(name)
    files.write(p, text)
    return p
  end

  -- 8 documents over 6 words; document 3 is empty.
  local TEXT = table.concat({
    "1 1:2 2:1",
    "0 3:1 4:2 5:1",
    "",
    "1 1:1 6:3",
    "0 2:2 3:1",
    "1 4:1 5:1 6:1",
    "0 1:1",
    "1 2:1 3:1 4:1 5:1",
  }, "\n") .. "\n"

  local function sweep_all(c, nwk, nk, NK, opts)
    local changed = 0
    for ch = 1, c:chunks(opts.tpc or 5) do
      local keys = c:chunk_keys(ch)
      local snap = rows(nwk, keys, NK)
      local dwk, dk = util.matrix(#keys, NK, "i32"), util.matrix(1, NK, "i32")
      local n, ch2 = c:sample(ch, snap, nk, dwk, dk, opts)
      changed = changed + ch2
      local sum = 0
      for k = 1, NK do
        sum = sum + dk:get(1, k)
        nk:set(1, k, nk:get(1, k) + dk:get(1, k))
      end
      assert.are.equal(0, sum) -- every move is -1 and +1
      for r = 1, #keys do
        local rs = 0
        for k = 1, NK do
          rs = rs + dwk:get(r, k)
          nwk:set(keys:get(r) + 1, k, nwk:get(keys:get(r) + 1, k) + dwk:get(r, k))
        end
        assert.are.equal(0, rs) -- a token keeps its word
      end
      assert.is_true(n >= 0)
    end
    return changed
  end

  it("loads LIBSVM bags of words: counts become tokens, a blank line an empty document", function()
    local c = assert(K.lda_load(svm("a.svm", TEXT), { V = 6 }))
    assert.are.equal(8, c:docs())
    assert.are.equal(3 + 4 + 0 + 4 + 3 + 3 + 1 + 4, c:tokens())
    assert.are.equal(6, c:V())
    assert.are.equal(0, c:K())
    local t, o = c:tokens_offsets()
    assert.are.same({ 0, 0, 1, 2, 3, 3, 4 }, { t:get(1), t:get(2), t:get(3), t:get(4), t:get(5), t:get(6), t:get(7) })
    assert.are.same({ 0, 3, 7, 7, 11, 14, 17, 18, 22 }, o:totable())
    local c2 = assert(K.lda_load(path("a.svm")))
    assert.are.equal(6, c2:V()) -- from the largest id
  end)

  it("reports bad input as path:line", function()
    local p = svm("bad.svm", "1 1:1\n0 9:1\n")
    local c, msg = K.lda_load(p, { V = 6 })
    assert.is_nil(c)
    assert.are.equal(p .. ":2: feature id 9 out of range [1, 6] (a vocabulary of 6 words)", msg)
    c, msg = K.lda_load(svm("b.svm", "1 1:1 2:x\n"), { V = 6 })
    assert.is_nil(c)
    assert.matches("b.svm:1: bad feature '2:x' %(expected id:count%)", msg)
    c, msg = K.lda_load(svm("c.svm", "1 1:1\n1 1:1\n1 2:0\n"))
    assert.matches("c.svm:3: count 0 of feature 2 must be >= 1", msg)
    c, msg = K.lda_load(svm("d.svm", "1 0:3\n"))
    assert.matches("d.svm:1: feature id 0 must be >= 1", msg)
    c, msg = K.lda_load(path("missing.svm"))
    assert.is_nil(c)
    assert.matches("missing.svm", msg)
    assert.has_error(function() K.lda_load(p, { part = 2, parts = 2 }) end, "lda_load: part 2 must be < parts 2")
    assert.has_error(function() K.lda_load(p, { colour = 1 }) end)
  end)

  it("reads text through a vocabulary and builds one", function()
    local p = path("a.txt")
    files.write(p, "b a b c\n\nc b x\nb\n")
    local vocab = K.lda_vocab(p, 2)
    assert.are.same({ "b", "c" }, vocab) -- b 4, c 2; a and x once
    local c = assert(K.lda_load(p, { format = "text", vocab = vocab }))
    assert.are.equal(4, c:docs())
    assert.are.equal(2, c:V())
    local t, o = c:tokens_offsets()
    assert.are.same({ 0, 0, 1, 1, 0, 0 }, t:totable())
    assert.are.same({ 0, 3, 3, 5, 6 }, o:totable())
    assert.has_error(function() K.lda_load(p, { format = "text" }) end,
      "lda_load: format 'text' needs option 'vocab' (an array of words)")
    assert.has_error(function() K.lda_load(p, { format = "text", vocab = { "b", "c", "b" } }) end,
      "lda_load: vocab entry 3 repeats 'b'")
    local c3, msg = K.lda_load(p, { format = "text", vocab = vocab, V = 1 })
    assert.is_nil(c3)
    assert.are.equal(p .. ":1: word id 1 out of range [0, 1)", msg) -- "c"
  end)

  it("splits documents into disjoint parts and a held-out set that together cover the file", function()
    local p = svm("s.svm", TEXT)
    local function docs_of(c, into) -- each document's words as "w1,w2,..."
      local t, o = c:tokens_offsets()
      for d = 1, #o - 1 do
        local words = {}
        for i = o:get(d) + 1, o:get(d + 1) do words[#words + 1] = t:get(i) end
        into[#into + 1] = table.concat(words, ",")
      end
      return into
    end
    local seen = {}
    local function add(c)
      docs_of(c, seen)
      return c:docs()
    end
    local n = 0
    for part = 0, 2 do n = n + add(assert(K.lda_load(p, { part = part, parts = 3, heldout_every = 4 }))) end
    local test = assert(K.lda_load(p, { split = "test", heldout_every = 4 }))
    assert.are.equal(2, test:docs()) -- documents 4 and 8
    n = n + add(test)
    assert.are.equal(8, n)
    table.sort(seen)
    local all = assert(K.lda_load(p))
    local want = docs_of(all, {})
    table.sort(want)
    assert.are.same(want, seen)
    local t4 = test:tokens_offsets()
    assert.are.same({ 0, 5, 5, 5, 1, 2, 3, 4 }, t4:totable())
  end)

  it("chunks whole documents with sorted distinct keys", function()
    local c = assert(K.lda_load(svm("k.svm", TEXT), { V = 6 }))
    c:init(3, 1)
    local n = c:chunks(6)
    assert.is_true(n >= 2)
    local _, o = c:tokens_offsets()
    local total = 0
    for ch = 1, n do
      local keys = c:chunk_keys(ch)
      assert.are.equal(keys, c:chunk_keys(ch)) -- the same object
      for i = 2, #keys do assert.is_true(keys:get(i) > keys:get(i - 1)) end
      local dwk, dk = util.matrix(#keys, 3, "i32"), util.matrix(1, 3, "i32")
      c:counts(ch, dwk, dk)
      local s = 0
      for k = 1, 3 do s = s + dk:get(1, k) end
      total = total + s
    end
    assert.are.equal(c:tokens(), total)
    assert.are.equal(1, c:chunks(1000))
    assert.has_error(function() c:chunk_keys(2) end, "chunk_keys: chunk 2 out of range [1, 1]")
    assert.has_error(function() c:chunk_keys(2^32 + 1) end, "chunk_keys: chunk 4294967297 out of range [1, 1]")
    local e = assert(K.lda_load(svm("e.svm", "\n\n"), { V = 3 }))
    e:init(2, 1)
    assert.are.equal(1, e:chunks(10)) -- no tokens: one empty chunk
    assert.are.equal(0, #e:chunk_keys(1))
  end)

  for _, sampler in ipairs { "plain", "mh" } do
    it("sweeps with the " .. sampler .. " sampler: deltas keep the counts equal to the assignment", function()
      local c = assert(K.lda_load(svm("w.svm", TEXT), { V = 6 }))
      c:init(4, 7)
      local nwk, nk = global(c, 6, 4)
      local changed = 0
      for it = 1, 5 do
        changed = changed + sweep_all(c, nwk, nk, 4, { sampler = sampler, alpha = 0.5, beta = 0.1, seed = it })
      end
      assert.is_true(changed > 0)
      local want, wantk = global(c, 6, 4)
      assert.are.same(want:totable(), nwk:totable())
      assert.are.same(wantk:totable(), nk:totable())
    end)
  end

  it("is deterministic for a seed", function()
    local function run(seed)
      local c = assert(K.lda_load(svm("d2.svm", TEXT), { V = 6 }))
      c:init(4, 3)
      local nwk, nk = global(c, 6, 4)
      sweep_all(c, nwk, nk, 4, { seed = seed })
      return c:word_topic_counts(0, 6):totable(), c:doc_loglik(0.5)
    end
    local a, la = run(1)
    local b, lb = run(1)
    assert.are.same(a, b)
    assert.are.equal(la, lb)
    local differ = false
    for s = 2, 6 do
      local x = run(s)
      differ = differ or table.concat(x[1], ",") .. table.concat(x[2], ",") ~= table.concat(a[1], ",") .. table.concat(a[2], ",")
    end
    assert.is_true(differ)
  end)

  it("gives the log-likelihood parts cr.eval.lda_loglik adds up", function()
    local c = assert(K.lda_load(svm("l.svm", TEXT), { V = 6 }))
    c:init(3, 5)
    local nwk, nk = global(c, 6, 3)
    sweep_all(c, nwk, nk, 3, { seed = 9 })
    local ndk = c:doc_topic_counts()
    assert.are.equal(8, ndk:rows())
    local alpha, beta = 0.3, 0.05
    local r = crescent.eval.lda_loglik { n_wk = nwk, n_dk = ndk, n_k = nk, alpha = alpha, beta = beta }
    assert.is_true(math.abs(r.doc - c:doc_loglik(alpha)) < 1e-9 * math.abs(r.doc))
    -- the word part minus lda_word_loglik depends on n_k only: compare with
    -- all of each topic's counts on word 1 (same n_k)
    local moved = util.matrix(6, 3, "i32")
    for k = 1, 3 do moved:set(1, k, nk:get(1, k)) end
    local r2 = crescent.eval.lda_loglik { n_wk = moved, n_k = nk, alpha = alpha, beta = beta }
    local a = r.word - K.lda_word_loglik(nwk, beta)
    local b = r2.word - K.lda_word_loglik(moved, beta)
    assert.is_true(math.abs(a - b) < 1e-6 * math.abs(a))
    assert.is_true(math.abs(K.lda_word_loglik(moved, beta) - K.lda_word_loglik(nwk, beta)) > 1)
    -- the same through float copies of the counts
    local f = util.matrix(6, 3)
    for w = 1, 6 do for k = 1, 3 do f:set(w, k, nwk:get(w, k)) end end
    local r3 = crescent.eval.lda_loglik { n_wk = f, n_dk = ndk, n_k = nk, alpha = alpha, beta = beta }
    assert.are.equal(r.total, r3.total)
    -- held-out perplexity takes the corpus's tokens and offsets and i32 counts
    local t, o = c:tokens_offsets()
    local pp = crescent.eval.lda_perplexity { n_wk = nwk, n_k = nk, alpha = alpha, beta = beta, tokens = t, offsets = o }
    assert.is_true(pp.perplexity > 1 and pp.perplexity < 6)
  end)

  it("hands out and takes back every token's topic (a checkpoint of the assignment)", function()
    local c = assert(K.lda_load(svm("t.svm", TEXT), { V = 6 }))
    local n = c:tokens()
    assert.has_error(function() c:topics() end, "topics: corpus has no topics (call init first)")
    c:init(4, 9)
    local z = c:topics()
    assert.equal(n, z:rows())
    assert.equal(1, z:cols())
    local before = c:word_topic_counts(0, 6)
    -- set every token to topic 3, then back: the counts follow the topics
    local three = util.matrix(n, 1, "i32")
    for i = 1, n do three:set(i, 1, 3) end
    c:set_topics(three)
    local all3 = c:word_topic_counts(0, 6)
    for w = 1, 6 do
      for k = 1, 3 do assert.equal(0, all3:get(w, k)) end
    end
    c:set_topics(z)
    assert.same(before:row(1), c:word_topic_counts(0, 6):row(1))
    -- a slice: tokens [2, 5)
    local part = c:topics(2, 3)
    assert.equal(3, part:rows())
    for i = 1, 3 do assert.equal(z:get(i + 2, 1), part:get(i, 1)) end
    local one = util.matrix(3, 1, "i32")
    c:set_topics(one, 2)
    for i = 1, n do assert.equal((i > 2 and i <= 5) and 0 or z:get(i, 1), c:topics():get(i, 1)) end
    -- refused, nothing changed: a topic out of [0, K), the wrong size, floats, a slice past the end
    local bad = c:topics()
    bad:set(n, 1, 4)
    local keep = c:topics()
    assert.has_error(function() c:set_topics(bad) end, "set_topics: token " .. (n - 1) .. " has topic 4, outside [0, 4)")
    assert.has_error(function() c:set_topics(util.matrix(n - 1, 1, "i32")) end)
    assert.has_error(function() c:set_topics(util.matrix(n, 1)) end)
    assert.has_error(function() c:set_topics(util.matrix(2, 1, "i32"), n - 1) end)
    assert.has_error(function() c:topics(n, 1) end, "topics: tokens [" .. n .. ", " .. n .. " + 1) out of range [0, " .. n .. ")")
    for i = 1, n do assert.equal(keep:get(i, 1), c:topics():get(i, 1)) end
  end)

  it("refuses misuse with clear errors", function()
    local c = assert(K.lda_load(svm("m.svm", TEXT), { V = 6 }))
    assert.has_error(function() c:init(1, 1) end, "init: K must be >= 2")
    assert.has_error(function() c:chunks(5) ; c:counts(1, util.matrix(1, 1, "i32"), util.matrix(1, 1, "i32")) end,
      "counts: corpus has no topics (call init first)")
    c:init(3, 1)
    c:chunks(100)
    local keys = c:chunk_keys(1)
    local nwk, nk = util.matrix(#keys, 3, "i32"), util.matrix(1, 3, "i32")
    local dwk, dk = util.matrix(#keys, 3, "i32"), util.matrix(1, 3, "i32")
    assert.has_error(function() c:sample(1, util.matrix(#keys, 3), nk, dwk, dk) end)
    local ok, msg = pcall(c.sample, c, 1, util.matrix(#keys, 3), nk, dwk, dk)
    assert.is_false(ok)
    assert.matches("int32 matrix expected", msg)
    assert.has_error(function() c:sample(1, util.matrix(2, 3, "i32"), nk, dwk, dk) end,
      "sample: nwk must be " .. #keys .. " x 3, got 2 x 3")
    assert.has_error(function() c:sample(1, nwk, nk, dwk, util.matrix(1, 4, "i32")) end,
      "sample: dk must be 1 x 3, got 1 x 4")
    assert.has_error(function() c:sample(1, nwk, nk, dwk, dk, { alpha = 0 }) end, "sample: alpha must be > 0")
    assert.has_error(function() c:sample(1, nwk, nk, dwk, dk, { beta = -1 }) end, "sample: beta must be > 0")
    assert.has_error(function() c:sample(1, nwk, nk, dwk, dk, { sampler = "fast" }) end)
    assert.has_error(function() c:sample(2, nwk, nk, dwk, dk) end, "sample: chunk 2 out of range [1, 1]")
    assert.has_error(function() c:word_topic_counts(0, 7) end, "word_topic_counts: bad word range [0, 7) for V = 6")
    assert.has_error(function() K.lda_word_loglik(util.matrix(2, 2), 0.1) end)
    c:close()
    assert.has_error(function() c:docs() end, "lda corpus is closed")
  end)
end)
