-- Integration job: arg[1] calls that fail with requests in flight
-- (tests/models/pending.lua: 1.1 MB of rows each), then one that works,
-- in workers whose Lua states are capped at 32 MB.
local cr = require "crescent"
local n = tonumber(arg[1]) or 100
local job = cr.job{ nodes = 2, workers = 1, memory_mb = 32 }
job:table{ name = "E", keys = 2048, dim = 64 }
job:distribution{ name = "neg", table = "E", kind = "uniform" }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/pending.lua", {})
for i = 1, n do
    local ok, err = pcall(job.call, job, "fail")
    if ok or not tostring(err):find("failing on purpose", 1, true) then
        error(("call %d: %s"):format(i, tostring(err)), 0)
    end
end
print(("ok rows=%d"):format(job:call("ok").sum.rows))
