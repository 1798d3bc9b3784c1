-- Test policy: may_proceed never returns.
return function(opts)
    return {
        name = "spin",
        may_proceed = function(my_clock, min_clock, clocks)
            while true do end
        end,
    }
end
