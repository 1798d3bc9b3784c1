-- crescent.eval: evaluators (link prediction, word analogy, synonyms, point
-- metrics, LDA likelihood and perplexity). The work is done in C
-- (src/eval, bound in src/lua/l_eval.c); this wrapper turns every failure --
-- a raised error or an expected `nil, msg` (unreadable or malformed question
-- file) -- into an error at the caller's line:
--   my_job.lua:12: questions.txt:3: expected 4 words, got 3
-- Call crescent.core.eval.* directly to get `nil, msg` instead.
--
--   cr.eval.link_prediction{model = "complex", entities = E, relations = R,
--       test = T, filter = {train, valid}, naive = false, ranks = false}
--     -> {mrr, mr, hits1, hits3, hits10, mrr_tail, mrr_head, queries [, ranks]}
--     ids are 0-based rows of E and R; T is a flat crescent.Ints {s, r, o, ...},
--     a table of {s, r, o}, or {s = ids, r = ids, o = ids}. Ties count half.
--   cr.eval.analogy(vectors, words, path, {restrict = 30000})
--     -> {total, semantic, syntactic, coverage, questions, seen, correct, ...}
--   cr.eval.synonyms(vectors, words, path [, {restrict = n}])
--     -> {accuracy, coverage, questions, covered, correct}
--   cr.eval.rmse(pred, truth), logloss(p, y), accuracy(score, y [, threshold]),
--   auc(score, y)   (Matrices or tables of numbers; y > 0 is positive)
--   cr.eval.lda_loglik{n_wk =, n_dk =, n_k =, alpha =, beta =}
--     -> {per_token, total, word, doc, tokens}
--   cr.eval.lda_perplexity{n_wk =, n_k =, alpha =, beta =, docs = {...} or
--       tokens =, offsets =, iters = 20, burnin = iters // 2, seed = 1}
--     -> {perplexity, loglik, tokens, docs}
local core = require("crescent.core").eval

local M = {}

for name, f in pairs(core) do
  M[name] = function(...)
    -- Called through pcall, a C error carries no position of its own, so
    -- error(msg, 2) below adds exactly one: the caller's line.
    local ok, r, msg = pcall(f, ...)
    if not ok then
      if type(r) == "string" then r = r:gsub("to '%?'", "to '" .. name .. "'", 1) end
      error(r, 2)
    end
    if r == nil then error(msg, 2) end
    return r
  end
end

return M
