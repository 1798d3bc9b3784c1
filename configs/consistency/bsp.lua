-- Bulk synchronous parallel: a worker may start clock c+1 only when every
-- active worker has finished clock c. No options.
return function(opts)
    for k in pairs(opts or {}) do
        error("bsp: unknown option '" .. tostring(k) .. "' (bsp takes none)", 0)
    end
    return {
        name = "bsp",
        may_proceed = function(my_clock, min_clock, clocks)
            return min_clock >= my_clock
        end,
    }
end
