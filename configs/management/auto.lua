-- "auto": start from the NuPS heuristic, then re-decide from the access
-- counts observed since the last decision (all nodes, merged), at each
-- epoch boundary (docs/management-auto.md).
--
-- A key is replicated when its observed count, less the counting error
-- bound, exceeds `hot` times the mean count per key of the table; a key
-- already replicated stays so while its count exceeds `keep` x that (so a
-- key near the line does not flap between techniques from one epoch to the
-- next). At most `cap` keys, the most accessed first. Everything else is
-- relocated. Before anything is observed (or with fewer than `min`
-- accesses in the window): the heuristic from the expected frequencies if
-- the table has them, else the current choice. On one node: classic.
--   hot  = factor over the mean count (default 100, as NuPS)
--   keep = share of the hot line under which a replicated key goes back
--          (default 0.5; 1 = no hysteresis)
--   cap  = most keys replicated (default 1024: the candidates a sketch keeps)
--   min  = fewest accesses in a window to decide from (default 1000)
--   rest = the technique of the other keys: "relocate" (default) or "classic"
local KNOWN = { hot = true, keep = true, cap = true, min = true, rest = true }

local function number(opts, k, dflt, lo, hi, int)
    local v = opts[k]
    if v == nil then return dflt end
    if type(v) ~= "number" or v ~= v or v < lo or v > hi or (int and math.type(v) ~= "integer") then
        error(("auto: %s must be %s in [%s, %s] (got %s)"):format(k, int and "an integer" or "a number",
            tostring(lo), tostring(hi), tostring(v)), 0)
    end
    return v
end

-- The keys expected above hot x the mean, hottest first, at most cap. e:
-- the expected frequencies as the runner gives them (the keys above the
-- mean, largest first, with the total).
local function heuristic(e, keys, hot, cap)
    local over, limit = {}, hot * e.total / keys
    for _, h in ipairs(e.top) do
        if h.count <= limit or #over == cap then break end
        over[#over + 1] = h.key
    end
    return over
end

return function(opts)
    for k in pairs(opts) do
        if not KNOWN[k] then
            error(("auto: unknown option '%s' (options: hot, keep, cap, min, rest)"):format(tostring(k)), 0)
        end
    end
    local hot = number(opts, "hot", 100, 1e-9, math.huge)
    local keep = number(opts, "keep", 0.5, 0, 1)
    local cap = number(opts, "cap", 1024, 0, math.maxinteger, true)
    local min = number(opts, "min", 1000, 0, math.maxinteger, true)
    local rest = opts.rest or "relocate"
    if rest ~= "relocate" and rest ~= "classic" then
        error(("auto: rest must be relocate or classic (got %s)"):format(tostring(rest)), 0)
    end

    return function(input)
        if input.nodes == 1 then return "classic" end
        local cap2 = math.min(cap, input.cap)
        local obs = input.observed
        if not obs or obs.total < min then
            if input.expected then
                return { replicate = heuristic(input.expected, input.keys, hot, cap2), [rest] = "rest" }
            end
            return input.current
        end
        local mean = obs.total / input.keys
        local up, down = hot * mean, keep * hot * mean
        local was, listed = {}, {}
        for _, k in ipairs(input.replicated) do was[k] = true end
        local pick = {}
        for _, h in ipairs(obs.top) do
            listed[h.key] = true
            if (was[h.key] and h.count > down) or h.count - (obs.bound or 0) > up then
                pick[#pick + 1] = h
            end
        end
        -- A replicated key missing from the list was cut at obs.floor: if
        -- that is above the line it must fall under, its count is unknown,
        -- so it stays.
        if (obs.floor or 0) > down then
            for k in pairs(was) do
                if not listed[k] then pick[#pick + 1] = { key = k, count = obs.floor } end
            end
        end
        table.sort(pick, function(a, b)
            if a.count ~= b.count then return a.count > b.count end
            return a.key < b.key
        end)
        local keys = {}
        for i = 1, math.min(#pick, cap2) do keys[i] = pick[i].key end
        return { replicate = keys, [rest] = "rest" }
    end
end
