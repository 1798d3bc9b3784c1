-- A decision script for tests/integration/auto_errors.sh: a valid
-- three-way choice at the start (epoch 0), then at every epoch boundary
-- what opts.mode says: an error, or garbage.
return function(opts)
    local mode = opts.mode
    return function(input)
        if input.epoch == 0 then return { replicate = { 1 }, relocate = { 5, 6 }, classic = "rest" } end
        if mode == "error" then return input.observed.nothing.here end -- line 8
        if mode == "range" then return { replicate = { 1 }, relocate = { 5, input.keys }, classic = "rest" } end
        if mode == "technique" then return "sideways" end
        if mode == "number" then return 42 end
        if mode == "overlap" then return { replicate = { 1, 5 }, relocate = { 5 }, classic = "rest" } end
        return { replicate = { 2 }, relocate = { 7 }, classic = "rest" } -- "ok": a valid change
    end
end
