-- Scores word vectors in the word2vec text format with crescent's own tests,
-- so tests/bench/w2v.sh rates gensim's, fastText's and crescent's vectors
-- with the same code (cr.eval.synonyms, cr.eval.analogy with the 30,000
-- most frequent words, in file order, which all three write by frequency).
--   crescent run tests/bench/w2v_score.lua -- VECTORS SYNONYMS [ANALOGY]
-- prints: "score: synonym_acc=A analogy_acc=B analogy_coverage=C words=N"
local cr = require "crescent"
local vec, syn, ana = arg[1], arg[2], arg[3]
if not vec or not syn then error("usage: w2v_score.lua -- VECTORS SYNONYMS [ANALOGY]", 0) end
local m, words = cr.core.kernels.w2v_read_vectors(vec)
if not m then error(words, 0) end
local s = cr.eval.synonyms(m, words, syn)
local a = ana and cr.eval.analogy(m, words, ana, { restrict = 30000 })
print(("score: synonym_acc=%.4f analogy_acc=%s analogy_coverage=%s words=%d"):format(s.accuracy,
      a and ("%.4f"):format(a.total) or "-", a and ("%.4f"):format(a.coverage) or "-", #words))
