-- Integration job: worker 0 is slow; prints the largest clock gap per epoch
-- under the policy given on the command line, then switches to arg[1]
-- (if any) with job:policy and runs a second epoch.
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 2, policy = "bsp" }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", { slow_worker = 0, slow_sec = 0.03 })
job:epoch{ steps = 15 }
local st = job:stats()
print(("epoch1 policy=%s max_gap=%d"):format(st.policy, st.max_gap))
for _, w in ipairs(st.workers) do
    print(("  worker %d clock %d wait %.3f max_gap %d"):format(w.worker, w.clock, w.wait, w.max_gap))
end
if arg[1] then
    job:policy(arg[1])
    job:epoch{ steps = 15 }
    st = job:stats()
    print(("epoch2 policy=%s max_gap=%d"):format(st.policy, st.max_gap))
end
job:close()
