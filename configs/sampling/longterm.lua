-- L3 LONG-TERM (NuPS 4.4, sample reuse with postponing): pools as in
-- bounded.lua, and a sample whose row is neither on this node nor arrived
-- yet when pulled is moved to the end of its handle, the next one served in
-- its place; each sample is postponed at most once. Every handle still
-- serves exactly the keys it was prepared with, so per worker the long-run
-- frequency of every key converges to the distribution.
--   pool     = G draws per pool (default 250)
--   reuse    = U passes over each pool (default 16)
--   postpone = true | false (default true; without it samples are served as
--              in bounded.lua, which also meets level 3)
local function count(opts, k, dflt)
    local v = opts[k]
    if v == nil then return dflt end
    if math.type(v) ~= "integer" or v < 1 or v > 1 << 24 then
        error(("longterm: %s must be an integer in [1, 16777216] (got %s)"):format(k, tostring(v)), 0)
    end
    return v
end

local known = { pool = true, reuse = true, postpone = true }

return function(opts)
    for k in pairs(opts) do
        if not known[k] then
            error(("longterm: unknown option '%s' (options: pool, reuse, postpone)"):format(tostring(k)), 0)
        end
    end
    local p = opts.postpone
    if p == "true" or p == 1 then p = true elseif p == "false" or p == 0 then p = false end
    if p == nil then p = true end
    if type(p) ~= "boolean" then
        error(("longterm: postpone must be true or false (got %s)"):format(tostring(opts.postpone)), 0)
    end
    return { level = "longterm", pool = count(opts, "pool", 250),
             reuse = count(opts, "reuse", 16), postpone = p }
end
