-- Asynchronous parallel (eventual consistency): never wait.
return function(opts)
    return {
        name = "asp",
        may_proceed = function(my_clock, min_clock, clocks)
            return true
        end,
    }
end
