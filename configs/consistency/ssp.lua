-- Stale synchronous parallel (bounded delay): a worker at clock c may go on
-- while c - min_clock <= staleness. staleness = 0 is BSP.
return function(opts)
    local s = opts.staleness or 2
    if math.type(s) ~= "integer" or s < 0 then
        error("ssp: staleness must be a non-negative integer, got " .. tostring(opts.staleness), 0)
    end
    for k in pairs(opts) do
        if k ~= "staleness" then error("ssp: unknown option '" .. tostring(k) .. "'", 0) end
    end
    return {
        name = "ssp",
        staleness = s,
        may_proceed = function(my_clock, min_clock, clocks)
            return my_clock - min_clock <= s
        end,
    }
end
