-- Test model that never reports progress: each step sleeps (args.sleep) and
-- ends a clock, so the scheduler hears nothing but clock states while an
-- epoch runs. Worker args.fail raises at once; worker args.spin loops in pure
-- Lua (no clock, barrier, progress or sleep) until its command is stopped.
local M = {}

function M.init(ctx, opts) end

function M.epoch(ctx, args)
    if args.fail and ctx.worker == args.fail then error("failure on purpose") end
    if args.spin and ctx.worker == args.spin then
        local x = 0
        while true do x = x + 1 end
    end
    for _ = 1, args.steps or 1 do
        if args.sleep then ctx:sleep(args.sleep) end
        ctx:clock()
    end
    return { steps = args.steps or 1 }
end

return M
