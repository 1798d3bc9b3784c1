-- Bad sampling input, one case per run (arg 2): each must end the job with
-- a one-line error. arg 1: nodes; arg 3: a scheme file (case s:file).
package.path = os.getenv("CRESCENT_ROOT") .. "/tests/integration/jobs/?.lua;" .. package.path
local L = require "sampling_lib"
local job = L.start(tonumber(arg[1]) or 1, 1, 10)
local case = arg[2]
local w = {1,2,3,4,5,6,7,8,9,10}
if case == "unknown_table" then job:distribution{ name = "neg", table = "X", kind = "uniform" } end
if case == "short" then job:distribution{ name = "neg", table = "E", kind = "weights", weights = {1,2} } end
if case == "neg" then w[3] = -1 job:distribution{ name = "neg", table = "E", kind = "weights", weights = w } end
if case == "nan" then w[3] = 0/0 job:distribution{ name = "neg", table = "E", kind = "weights", weights = w } end
if case == "zero" then job:distribution{ name = "neg", table = "E", kind = "weights", weights = {0,0,0,0,0,0,0,0,0,0} } end
if case == "dup" then job:distribution{ name = "neg", table = "E", kind = "uniform" } job:distribution{ name = "neg", table = "E", kind = "uniform" } end
if case == "kind" then job:distribution{ name = "neg", table = "E", kind = "zipf" } end
if case == "mat" then local m = require("crescent").core.util.matrix(1, 10) job:distribution{ name = "neg", table = "E", kind = "weights", weights = m } end
job:distribution{ name = "neg2", table = "E", kind = "uniform" }
job:distribution{ name = "neg", table = "E", kind = "uniform" }
if case:match("^m:") then job:call("misuse", { case = case:sub(3) }) end
if case == "s:file" then job:sampling(arg[3]) end
if case == "s:unknown_opt" then job:sampling("bounded:pool=10,bogus=1") end
if case == "s:unknown_name" then job:sampling("nosuch") end
if case == "s:bad_opt" then job:sampling("bounded", { pool = 0 }) end
if case == "s:local_empty" then
    local z = {}
    for k = 1, 10 do z[k] = k <= 5 and 1 or 0 end -- node 1 of 2 holds keys 5..9: all zero
    job:distribution{ name = "half", table = "E", kind = "weights", weights = z }
    job:sampling("local")
    job:call("misuse", { case = "local_empty" })
end
print("no error")
