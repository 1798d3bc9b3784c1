-- Test policy: admits a worker only up to clock opts.upto (default 0: never
-- past its first clock); past it, may_proceed returns false for ever.
return function(opts)
    local upto = opts.upto or 0
    return {
        name = "never",
        may_proceed = function(my_clock, min_clock, clocks)
            if my_clock <= upto then return true end
            return false
        end,
    }
end
