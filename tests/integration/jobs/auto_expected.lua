-- Integration job (tests/integration/auto_expected.sh): decision scripts
-- decide at creation from expected frequencies (job:table's frequencies,
-- a sampling distribution's weights declared later, T:frequencies), on 2
-- nodes; on 1 node auto is classic whatever is expected.
local cr = require "crescent"
local nodes = tonumber(arg[1]) or 2
local job = cr.job{ nodes = nodes, workers = 1, seed = 3 }
local K = 1000
local function planted()
    local w = {}
    for k = 1, K do w[k] = 1 end
    w[4], w[8] = 1e6, 5e5 -- keys 3 and 7: far above 100 x the mean
    return w
end
local function census(T) return table.concat({ T:census() }, ",") end
local A = job:table{ name = "A", keys = K, dim = 2, manage = "auto", frequencies = planted() }
local B = job:table{ name = "B", keys = K, dim = 2, manage = "auto" }
local N = job:table{ name = "N", keys = K, dim = 2, manage = "nups" }
local M = job:table{ name = "M", keys = K, dim = 2, manage = "nups:rest=classic", frequencies = planted() }
print("A " .. census(A))
print("B " .. census(B))
print("N " .. census(N))
print("M " .. census(M))
job:distribution{ name = "d", table = "B", kind = "weights", weights = planted() }
print("B after distribution " .. census(B))
B:frequencies((function() local w = {} for k = 1, K do w[k] = 1 end return w end)())
print("B after flat frequencies " .. census(B))
job:close()
