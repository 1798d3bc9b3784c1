-- The scheme set before the job runs (--sampling, or cr.job{sampling =}
-- when arg 1 is "job"): prints the scheme and the counters of one draw.
package.path = os.getenv("CRESCENT_ROOT") .. "/tests/integration/jobs/?.lua;" .. package.path
local cr = require "crescent"
local job
if arg[1] == "job" then
    job = cr.job{ nodes = 2, workers = 1, seed = 3, sampling = { "bounded", pool = 8, reuse = 5 } }
    job:table{ name = "E", keys = 20, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add() }
    job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/sampling.lua", {})
    job:call("fill")
else
    job = require("sampling_lib").start(2, 1, 20)
end
job:distribution{ name = "u", table = "E", kind = "uniform" }
local r = job:call("draw", { dist = "u", n = 200, m = 20 }).results
for _, x in ipairs(r) do assert(x.bad == 0, "rows match keys") end
local s = job:stats()
print(("scheme=%s drawn=%d reused=%d postponed=%d remote=%d"):format(s.scheme, s.sampling.drawn,
    s.sampling.reused, s.sampling.postponed, s.sampling.remote))
if arg[#arg] ~= "keep" then job:close() end
