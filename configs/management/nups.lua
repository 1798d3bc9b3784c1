-- The NuPS heuristic (NuPS section 3.4): replicate the keys whose expected
-- access frequency exceeds `hot` times the mean (manage.hot_keys, which the
-- runner offers every decision script), relocate the rest. The
-- frequencies are input.expected (a frequency vector given to the table,
-- or the weights of a sampling distribution declared on it); without them
-- nothing is known to be hot and every key is relocated. Observed counts
-- are not used: this rule is decided once, from what is expected.
-- On one node every key is local: classic.
--   hot  = factor over the mean frequency (default 100)
--   cap  = most keys replicated, the hottest first (default 4096)
--   rest = the technique of the other keys: "relocate" (default) or "classic"
local KNOWN = { hot = true, cap = true, rest = true }

local function options(opts, name)
    for k in pairs(opts) do
        if not KNOWN[k] then error(("%s: unknown option '%s' (options: hot, cap, rest)"):format(name, tostring(k)), 0) end
    end
    local hot, cap, rest = opts.hot or 100, opts.cap or 4096, opts.rest or "relocate"
    if type(hot) ~= "number" or hot <= 0 or hot ~= hot then
        error(("%s: hot must be a positive number (got %s)"):format(name, tostring(opts.hot)), 0)
    end
    if math.type(cap) ~= "integer" or cap < 0 then
        error(("%s: cap must be a non-negative integer (got %s)"):format(name, tostring(opts.cap)), 0)
    end
    if rest ~= "relocate" and rest ~= "classic" then
        error(("%s: rest must be relocate or classic (got %s)"):format(name, tostring(opts.rest)), 0)
    end
    return hot, cap, rest
end

return function(opts)
    local hot, cap, rest = options(opts, "nups")
    return function(input)
        if input.nodes == 1 then return "classic" end
        if not input.expected then return rest end
        local cap2 = math.min(cap, input.cap)
        return { replicate = manage.hot_keys(input.expected, input.keys, hot, cap2), [rest] = "rest" }
    end
end
