-- Held-out perplexity of topics made elsewhere (tests/bench/lda.sh: gensim's),
-- by the code that scores crescent's (cr.eval.lda_perplexity, document
-- completion on the same held-out documents as examples/lda.lua).
--   crescent run tests/bench/lda_score.lua -- topics=FILE data=data/gcide.svm alpha=0.1 [heldout_every=10]
-- FILE: a line "V K beta", then V lines of K word-topic counts (real
-- numbers: a variational model's lambda - eta), word id = line - 2.
-- Prints "lda score: perplexity=P tokens=N docs=D".
local cr = require "crescent"
local opt = { topics = "", data = "data/gcide.svm", alpha = 0.1, heldout_every = 10 }
local me = "tests/bench/lda_score.lua"
cr.script.options(me, arg or {}, opt, { topics = "string", data = "string", alpha = "number", heldout_every = "number" })
local f = io.open(opt.topics, "r") or error(me .. ": cannot open " .. opt.topics, 0)
local V, K, beta = f:read("n", "n", "n")
if not (V and K and beta) then error(me .. ": " .. opt.topics .. ":1: expected \"V K beta\"", 0) end
local nwk, nk, sums = cr.core.util.matrix(V, K), cr.core.util.matrix(1, K), {}
for k = 1, K do sums[k] = 0.0 end
for w = 1, V do
  for k = 1, K do
    local x = f:read("n")
    if not x then error(("%s: %s:%d: expected %d numbers"):format(me, opt.topics, w + 1, K), 0) end
    nwk:set(w, k, x)
    sums[k] = sums[k] + x
  end
end
f:close()
for k = 1, K do nk:set(1, k, sums[k]) end
local T, err = cr.core.kernels.lda_load(opt.data, { V = V, heldout_every = opt.heldout_every, split = "test" })
if not T then error(err, 0) end
local tokens, offsets = T:tokens_offsets(1)
local p = cr.eval.lda_perplexity { n_wk = nwk, n_k = nk, alpha = opt.alpha, beta = beta, tokens = tokens,
                                   offsets = offsets, seed = 1 }
print(("lda score: perplexity=%.2f tokens=%d docs=%d"):format(p.perplexity, p.tokens, T:docs()))
