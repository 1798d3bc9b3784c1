-- Bulk synchronous parallel: a worker may start clock c+1 only when every
-- active worker has finished clock c.
return function(opts)
    return {
        name = "bsp",
        may_proceed = function(my_clock, min_clock, clocks)
            return min_clock >= my_clock
        end,
    }
end
