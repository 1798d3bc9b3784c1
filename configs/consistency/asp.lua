-- Asynchronous parallel (eventual consistency): never wait. No options.
return function(opts)
    for k in pairs(opts or {}) do
        error("asp: unknown option '" .. tostring(k) .. "' (asp takes none)", 0)
    end
    return {
        name = "asp",
        may_proceed = function(my_clock, min_clock, clocks)
            return true
        end,
    }
end
