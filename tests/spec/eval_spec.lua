-- crescent.eval bindings: known answers, input forms, and errors that name
-- the caller's line (and the question file's line).
local cr = require "crescent"
local util = cr.core.util
local ROOT = os.getenv("CRESCENT_ROOT") or "."
local QUESTIONS = ROOT .. "/../shared/data/analogy/questions-words.txt"

local function tmpfile(text)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

describe("cr.eval.link_prediction", function()
  -- DistMult, d = 1, e_x = x + 1: the tail query of (0, 0, 2) ranks 4th, the
  -- head query 6th; filtering (0, 0, 4) and (3, 0, 2) moves each up by one.
  local E = util.matrix{{1}, {2}, {3}, {4}, {5}, {6}}
  local R = util.matrix{{1}}

  it("ranks a hand-built case in every triple form", function()
    local forms = {
      {test = {0, 0, 2}, filter = {{0, 0, 4}, {3, 0, 2}}},
      {test = util.ints{0, 0, 2}, filter = {util.ints{0, 0, 4}, {s = {3}, r = {0}, o = {2}}}},
      {test = {{0, 0, 2}}, filter = util.ints{0, 0, 4, 3, 0, 2}},
    }
    for _, f in ipairs(forms) do
      local r = cr.eval.link_prediction{model = "distmult", entities = E, relations = R,
                                        test = f.test, filter = f.filter, ranks = true}
      assert.are.equal(3, r.ranks:get(1, 1))
      assert.are.equal(5, r.ranks:get(2, 1))
      assert.near((1 / 3 + 1 / 5) / 2, r.mrr, 1e-12)
      assert.are.equal(0.5, r.hits3)
      assert.are.equal(2, r.queries)
    end
    local unf = cr.eval.link_prediction{model = "distmult", entities = E, relations = R, test = {0, 0, 2}}
    assert.near((1 / 4 + 1 / 6) / 2, unf.mrr, 1e-12)
  end)

  it("agrees with the naive loop on random ComplEx embeddings", function()
    math.randomseed(3)
    local E2, R2 = util.matrix(40, 8), util.matrix(3, 8)
    for i = 1, 40 do for j = 1, 8 do E2:set(i, j, math.random() - 0.5) end end
    for i = 1, 3 do for j = 1, 8 do R2:set(i, j, math.random() - 0.5) end end
    local test, train = {}, {}
    for i = 1, 20 do test[i] = {math.random(0, 39), math.random(0, 2), math.random(0, 39)} end
    for i = 1, 200 do train[i] = {math.random(0, 39), math.random(0, 2), math.random(0, 39)} end
    local a = cr.eval.link_prediction{model = "complex", entities = E2, relations = R2, test = test, filter = {train}}
    local b = cr.eval.link_prediction{model = "complex", entities = E2, relations = R2, test = test, filter = {train},
                                      naive = true}
    assert.near(b.mrr, a.mrr, 1e-12)
    assert.near(b.hits10, a.hits10, 1e-12)
  end)

  it("raises at the caller's line on bad ids, dimensions and options", function()
    local function err(opts)
      local ok, msg = pcall(function() cr.eval.link_prediction(opts) end)
      assert.is_false(ok)
      return msg
    end
    assert.matches("eval_spec.lua:%d+: test triple 1: entity id 9 out of range %[0, 6%)",
                   err{model = "distmult", entities = E, relations = R, test = {0, 0, 9}})
    assert.matches("eval_spec.lua:%d+: relation matrix has 2 columns, expected 4 %(d%*d for rescal%)",
                   err{model = "rescal", entities = util.matrix(6, 2), relations = util.matrix(1, 2), test = {0, 0, 1}})
    assert.matches("eval_spec.lua:%d+: unknown model 'hole'",
                   err{model = "hole", entities = E, relations = R, test = {0, 0, 1}})
    assert.matches("eval_spec.lua:%d+: link_prediction: unknown option 'filters'",
                   err{model = "distmult", entities = E, relations = R, test = {0, 0, 1}, filters = {}})
    assert.matches("eval_spec.lua:%d+: test: 4 ids is not a whole number of %(s, r, o%) triples",
                   err{model = "distmult", entities = E, relations = R, test = {0, 0, 1, 2}})
  end)
end)

describe("cr.eval.analogy", function()
  -- a, b, c unit axes and d = 2 (b - a + c): "a b c d" is answered exactly.
  local words = {"a", "b", "c", "d", "x"}
  local V = util.matrix{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {-2, 2, 2, 0}, {0, 0, 0, 1}}

  it("answers a hand-built question file and reports sections and coverage", function()
    local path = tmpfile(": family\nA B C D\na b c x\na b c unknown\n: gram2-opposite\na b c d\n")
    local r = cr.eval.analogy(V, words, path)
    os.remove(path)
    assert.are.equal(4, r.questions)
    assert.are.equal(3, r.seen)
    assert.are.equal(0.75, r.coverage)
    assert.are.equal(0.5, r.semantic)
    assert.are.equal(1, r.syntactic)
    assert.near(2 / 3, r.total, 1e-12)
  end)

  it("reads the real questions file: 19,544 questions, 8,869 semantic", function()
    local f = io.open(QUESTIONS)
    if not f then pending("no " .. QUESTIONS) return end
    local seen, vocab = {}, {}
    for line in f:lines() do
      if line:sub(1, 1) ~= ":" then
        for w in line:gmatch("%S+") do
          w = w:lower()
          if not seen[w] then seen[w] = true; vocab[#vocab + 1] = w end
        end
      end
    end
    f:close()
    local M = util.matrix(#vocab, 8)
    math.randomseed(1)
    for i = 1, #vocab do for j = 1, 8 do M:set(i, j, math.random() - 0.5) end end
    local r = cr.eval.analogy(M, vocab, QUESTIONS)
    assert.are.equal(19544, r.questions)
    assert.are.equal(8869, r.semantic_questions)
    assert.are.equal(10675, r.syntactic_questions)
    assert.are.equal(1, r.coverage)
    local small = cr.eval.analogy(M, {words = vocab}, QUESTIONS, {restrict = 100})
    assert.is_true(small.coverage < 0.2)
    local naive = cr.eval.analogy(M, vocab, QUESTIONS, {restrict = 100, naive = true})
    assert.are.equal(small.correct, naive.correct)
  end)

  it("names the question file and line of a malformed question", function()
    local path = tmpfile(": family\na b c d\na b c\n")
    local ok, msg = pcall(function() cr.eval.analogy(V, words, path) end)
    os.remove(path)
    assert.is_false(ok)
    assert.matches("eval_spec.lua:%d+: " .. path:gsub("%p", "%%%0") .. ":3: expected 4 words, got 3", msg)
    local r, m = cr.core.eval.analogy(V, words, "/nonexistent/q.txt")
    assert.is_nil(r)
    assert.are.equal("/nonexistent/q.txt: cannot open: No such file or directory", m)
    ok, msg = pcall(function() cr.eval.analogy(V, {"a"}, path) end)
    assert.matches("eval_spec.lua:%d+: analogy: vectors have 5 rows but there are 1 words", msg)
  end)
end)

describe("cr.eval.synonyms", function()
  it("scores multiple-choice questions by cosine", function()
    local V = util.matrix{{1, 0.1}, {2, 0.3}, {-1, 0}, {0, 1}, {0.1, 1}}
    local words = {"big", "large", "small", "red", "blue"}
    local path = tmpfile("big\tsmall\tlarge\tred\tblue\t2\nred\tbig\tsmall\tblue\tlarge\t1\nbig\tcat\tsmall\tred\tblue\t1\n")
    local r = cr.eval.synonyms(V, words, path)
    assert.are.equal(3, r.questions)
    assert.are.equal(2, r.covered)
    assert.are.equal(1, r.correct)
    assert.are.equal(0.5, r.accuracy)
    os.remove(path)
    path = tmpfile("big\tsmall\tlarge\tred\tblue\n")
    local ok, msg = pcall(function() cr.eval.synonyms(V, words, path) end)
    os.remove(path)
    assert.matches(":1: expected 6 TAB%-separated fields %(target, 4 choices, answer%), got 5", msg)
  end)
end)

describe("point metrics", function()
  it("computes rmse, logloss, accuracy and auc", function()
    assert.near(math.sqrt(13 / 3), cr.eval.rmse({1, 2, 3}, {1, 4, 0}), 1e-6)
    assert.near(math.sqrt(13 / 3), cr.eval.rmse(util.matrix{{1, 2, 3}}, util.matrix{{1}, {4}, {0}}), 1e-6)
    assert.near(-(math.log(0.8) + math.log(0.6)) / 2, cr.eval.logloss({0.8, 0.4}, {1, -1}), 1e-6)
    assert.are.equal(0.5, cr.eval.accuracy({0.8, 0.6}, {1, 0}))
    assert.are.equal(1, cr.eval.accuracy({2, -1}, {1, -1}, 0))
    assert.are.equal(1, cr.eval.auc({0.1, 0.2, 0.8, 0.9}, {0, 0, 1, 1}))
    assert.are.equal(0.875, cr.eval.auc({0.1, 0.5, 0.5, 0.9}, {0, 1, 0, 1})) -- the 0.5/0.5 tie counts half
    local ok, msg = pcall(function() cr.eval.auc({1, 2}, {1, 1}) end)
    assert.matches("eval_spec.lua:%d+: auc: AUC is undefined: no negative labels", msg)
    ok, msg = pcall(function() cr.eval.rmse({1, 2}, {1}) end)
    assert.matches("eval_spec.lua:%d+: rmse: prediction has 2 values, truth has 1", msg)
  end)
end)

describe("LDA evaluation", function()
  it("computes the collapsed log-likelihood of a one-token corpus", function()
    -- one document, one token of word 1 on topic 1; K = 2, V = 2:
    -- p(z) = alpha / (2 alpha) = 1/2, p(w | z) = beta / (2 beta) = 1/2
    local r = cr.eval.lda_loglik{n_dk = util.matrix{{1, 0}}, n_wk = util.matrix{{1, 0}, {0, 0}},
                                 alpha = 0.1, beta = 0.01}
    assert.near(math.log(0.5), r.doc, 1e-9)
    assert.near(math.log(0.5), r.word, 1e-9)
    assert.near(2 * math.log(0.5), r.per_token, 1e-9)
    assert.are.equal(1, r.tokens)
  end)

  it("computes document-completion perplexity, seeded", function()
    local nwk = util.matrix{{5}, {3}, {2}}
    local r = cr.eval.lda_perplexity{n_wk = nwk, alpha = 0.1, beta = 0.5, docs = {{0, 1, 2, 2}, util.ints{0, 1, 1}}}
    local phi = function(c) return (c + 0.5) / (10 + 1.5) end
    local ll = 2 * math.log(phi(2)) + math.log(phi(3)) + math.log(phi(3))
    assert.near(ll, r.loglik, 1e-9)
    assert.near(math.exp(-ll / 4), r.perplexity, 1e-9)
    assert.are.equal(4, r.tokens)
    local a = cr.eval.lda_perplexity{n_wk = util.matrix{{5, 1}, {3, 4}, {2, 7}}, alpha = 0.1, beta = 0.5,
                                     tokens = util.ints{0, 1, 2, 2, 0, 1, 1}, offsets = util.ints{0, 4, 7}, seed = 4}
    local b = cr.eval.lda_perplexity{n_wk = util.matrix{{5, 1}, {3, 4}, {2, 7}}, alpha = 0.1, beta = 0.5,
                                     docs = {{0, 1, 2, 2}, {0, 1, 1}}, seed = 4}
    assert.are.equal(a.loglik, b.loglik)
    local ok, msg = pcall(function()
      cr.eval.lda_perplexity{n_wk = nwk, alpha = 0.1, beta = 0.5, docs = {{0, 3}}}
    end)
    assert.matches("eval_spec.lua:%d+: lda_perplexity: document 1 token 2: word id 3 out of range %[0, 3%)", msg)
  end)
end)
