-- The relocation test model on a classic table (tests/integration/reloc_count.sh):
-- localize is a no-op, the counts still add up, and no relocation message
-- is sent.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 2, seed = 3 }
local K = 40
local C = job:table{ name = "C", keys = K, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count_reloc.lua", {})
local r = job:call("epoch", { steps = 30, batch = 6, round = 1 })
local want = {}
for k = 1, K do want[k] = 0 end
for _, w in ipairs(r.results) do for k = 1, K do want[k] = want[k] + w.adds[k] end end
for k = 0, K - 1 do assert(C:get(k)[1] == want[k + 1], "key " .. k) end
local msgs, rin, fwd = 0, 0, 0
for _, nd in ipairs(job:stats().nodes) do
    msgs, rin, fwd = msgs + nd.relocation.messages, rin + nd.relocation.rows_in, fwd + nd.access.forwarded
end
print(("ok classic reloc_messages=%d rows_in=%d forwarded=%d"):format(msgs, rin, fwd))
job:close()
