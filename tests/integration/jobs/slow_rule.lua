-- A decision script that takes about `ms` milliseconds of CPU per decision
-- (tests/integration/auto_budget.sh) and keeps the current choice.
return function(opts)
    local ms = opts.ms or 40
    return function(input)
        local t0 = os.clock()
        local x = 0
        while os.clock() - t0 < ms / 1000 do x = x + 1 end
        return input.current
    end
end
