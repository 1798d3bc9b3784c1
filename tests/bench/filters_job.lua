-- Bench job (tests/bench/filters.sh): logistic regression on 2 nodes x 1
-- worker, arg[1] = data file, arg[2] = "off" | "kc" | "all", arg[3] = epochs.
-- Prints one line per epoch: remote bytes and the mean log loss.
local cr = require "crescent"
local data, mode, epochs = arg[1], arg[2] or "off", tonumber(arg[3]) or 3
local filters = ({ off = nil, kc = { key_cache = true, key_cache_bytes = 64 << 20 },
                   all = { key_cache = true, key_cache_bytes = 64 << 20, zeros = true, sigmod = 1e-4 } })[mode]
local X = cr.data.libsvm(data)
local job = cr.job{ nodes = 2, workers = 1, seed = 1 }
job:table{ name = "W", keys = X.cols, dim = 1, optimizer = cr.optim.sgd{ lr = 0.5 }, filters = filters }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/bench/filters_lr.lua", { data = data, batch = 500, lr = 0.5 })
for e = 1, epochs do
  local r = job:epoch()
  print(("mode=%s epoch=%d bytes_remote=%d loss=%.5f seconds=%.2f"):format(mode, e, r.bytes_remote,
                                                                          r.sum.loss / r.sum.n, r.seconds))
end
job:close()
