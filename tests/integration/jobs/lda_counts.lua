-- LDA's count invariant (tests/integration/lda_small.sh): after epochs under
-- a consistency policy, the tables equal the workers' assignments:
-- n_wk(w, k) = sum over workers of their tokens of word w with topic k, and
-- n_k(k) = sum over w of n_wk(w, k); the total is the number of tokens.
--   crescent run lda_counts.lua --nodes N --workers W -- data=FILE policy=bsp|ssp|asp
local cr = require "crescent"
local opt = { data = "", policy = "bsp" }
cr.script.options("lda_counts.lua", arg or {}, opt, { data = "string", policy = "string" })
local V, K = 100, 5
local job = cr.job { nodes = 1, workers = 1, seed = 3 }
job:policy(opt.policy, opt.policy == "ssp" and { staleness = 1 } or {})
local NWK = job:table { name = "n_wk", keys = V, dim = K, dtype = "i32", init = cr.init.zeros(),
                        optimizer = cr.optim.add {} }
local NK = job:table { name = "n_k", keys = 1, dim = K, dtype = "i32", init = cr.init.zeros(),
                       optimizer = cr.optim.add {} }
job:model("lda", { data = opt.data, V = V, K = K, alpha = 0.1, beta = 0.01, chunk = 700, clocks = 4 })
local tokens = job:call("start", {}).sum.tokens
local function check(when)
  local sum = {}
  for _, r in ipairs(job:call("counts", { lo = 0, hi = V }).results) do
    for i, v in ipairs(r.counts) do sum[i] = (sum[i] or 0) + v end
  end
  local col, total = {}, 0
  for w = 0, V - 1 do
    local row = NWK:get(w)
    for k = 1, K do
      local want = sum[w * K + k] or 0
      if row[k] ~= want then
        error(("%s: n_wk(%d, %d) = %s, the workers' assignments count %d"):format(when, w, k - 1, tostring(row[k]), want), 0)
      end
      assert(math.type(row[k]) == "integer", "n_wk rows are integers")
      col[k] = (col[k] or 0) + row[k]
      total = total + row[k]
    end
  end
  local nk = NK:get(0)
  for k = 1, K do
    if nk[k] ~= col[k] then error(("%s: n_k(%d) = %s, column sum %d"):format(when, k - 1, tostring(nk[k]), col[k]), 0) end
  end
  if total ~= tokens then error(("%s: %d counted, %d tokens"):format(when, total, tokens), 0) end
end
check("after start")
local moved = 0
for e = 1, 3 do moved = moved + job:epoch { epoch = e }.sum.changed end
check("after 3 epochs")
assert(moved > 0, "no token changed topic")
local st = job:stats()
if opt.policy == "bsp" then assert(st.max_gap == 0, "bsp: max gap " .. st.max_gap) end
print(("ok: %s on %d x %d: n_wk and n_k equal the assignments of %d tokens (%d moves)"):format(opt.policy, job.nodes,
      job.workers, tokens, moved))
