-- lua/models/word2vec.lua with clocks = 3 on 2 nodes for 2 epochs: every
-- worker ends at clock 6 (tests/integration/w2v_planted.sh). arg[1]: a corpus.
local cr = require "crescent"
local corpus = arg[1]
local K = cr.core.kernels
local v = assert(K.w2v_vocab(corpus, { min_count = 1 }))
local job = cr.job { nodes = 2, workers = 1, seed = 1 }
local add = cr.optim.add {}
job:table { name = "in", keys = v.n, dim = 8, init = cr.init.uniform(-0.05, 0.05), optimizer = add }
job:table { name = "out", keys = v.n, dim = 8, optimizer = add }
job:table { name = "progress", keys = 1, dim = 1, optimizer = add }
local w = {}
for k = 1, v.n do w[k] = v.counts:get(k) ^ 0.75 end
job:distribution { name = "neg", table = "out", kind = "weights", weights = w }
job:model("word2vec", { corpus = corpus, vocab = v.text, words = v.kept, raw = v.raw, epochs = 2, batch = 2000,
                        sample = 0, clocks = 3 })
job:epoch { epoch = 1 }
job:epoch { epoch = 2 }
for _, wk in ipairs(job:stats().workers) do print(("w2v clocks: worker %d clock %d"):format(wk.worker, wk.clock)) end
