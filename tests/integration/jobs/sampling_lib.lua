-- Shared by the sampling jobs: a job with table E (row k = k, 40 keys,
-- dim 3) and a second table R, the test model loaded and E filled; a
-- chi-square check of drawn keys against weights.
local cr = require "crescent"
local L = {}

function L.start(nodes, workers, keys)
    local job = cr.job{ nodes = nodes, workers = workers, seed = 7, policy = "asp" }
    job:table{ name = "E", keys = keys or 40, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
    job:table{ name = "R", keys = 5, dim = 2 }
    job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/sampling.lua", {})
    job:call("fill")
    return job
end

-- Sum of the workers' counts (results of M.draw), and bad / remote / pulled.
function L.merge(results, keys)
    local counts, tot = {}, { bad = 0, remote = 0, pulled = 0 }
    for i = 1, keys do counts[i] = 0 end
    for _, r in ipairs(results) do
        for i = 1, keys do counts[i] = counts[i] + r.counts[i] end
        tot.bad, tot.remote, tot.pulled = tot.bad + r.bad, tot.remote + r.remote, tot.pulled + r.pulled
    end
    return counts, tot
end

-- Chi-square statistic of counts against weights w (same length), over the
-- keys of positive weight, and the critical value at p = 0.001
-- (Wilson-Hilferty). A key of zero weight drawn at all makes it infinite.
function L.chi2(counts, w)
    local n, sw, df = 0, 0, -1
    for i = 1, #w do n, sw = n + counts[i], sw + w[i] end
    local x = 0
    for i = 1, #w do
        if w[i] > 0 then
            local e = n * w[i] / sw
            x, df = x + (counts[i] - e) ^ 2 / e, df + 1
        elseif counts[i] > 0 then
            x = math.huge
        end
    end
    local z = 3.09
    local crit = df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ^ 3
    return x, crit
end

return L
