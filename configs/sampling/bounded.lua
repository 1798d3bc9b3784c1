-- L2 BOUNDED (NuPS 4.4, sample reuse): keys come from pools of `pool`
-- independent draws, each pool gone through `reuse` times, each pass in a
-- fresh random order. The next pool is drawn and its remote rows fetched
-- while the current one is in use (one pool ahead). Conditional on all but
-- the last pool * reuse samples of a worker, a sample is distributed as the
-- distribution; marginals are exact.
--   pool  = G draws per pool (default 250)
--   reuse = U passes over each pool (default 16; 1 = no reuse)
local function count(opts, k, dflt)
    local v = opts[k]
    if v == nil then return dflt end
    if math.type(v) ~= "integer" or v < 1 or v > 1 << 24 then
        error(("bounded: %s must be an integer in [1, 16777216] (got %s)"):format(k, tostring(v)), 0)
    end
    return v
end

return function(opts)
    for k in pairs(opts) do
        if k ~= "pool" and k ~= "reuse" then
            error(("bounded: unknown option '%s' (options: pool, reuse)"):format(tostring(k)), 0)
        end
    end
    return { level = "bounded", pool = count(opts, "pool", 250), reuse = count(opts, "reuse", 16) }
end
