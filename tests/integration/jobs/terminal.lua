-- Integration job: tests/models/terminal.lua's log line, then its error
-- caught (printed by this script), then uncaught (printed by crescent run).
local cr = require "crescent"
local job = cr.job{ nodes = tonumber(arg[1]) or 1, workers = 1 }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/terminal.lua", {})
job:call("log")
local ok, err = pcall(job.call, job, "fail")
print("caught: " .. tostring(ok) .. " " .. tostring(err))
job:call("fail")
