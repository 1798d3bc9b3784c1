-- Test model: every worker adds 1 to every key of table C `steps` times
-- (one clock per step), pulling all keys before each push. Optional: a slow
-- worker (opts.slow_worker sleeps opts.slow_sec per step), an error on demand
-- (args.fail: after the steps; args.fail_early: before them).
local M = {}
local keys, slow, slow_sec

function M.init(ctx, opts)
    local C = ctx.tables.C
    keys = cr.core.util.ints(C.keys)
    for i = 1, C.keys do keys:set(i, i - 1) end
    slow, slow_sec = opts.slow_worker, opts.slow_sec or 0.05
end

function M.epoch(ctx, args)
    local C = ctx.tables.C
    local ones = cr.core.util.matrix(C.keys, C.dim)
    for i = 1, C.keys do for j = 1, C.dim do ones:set(i, j, 1) end end
    local seen = 0
    if args.fail_early and ctx.worker == args.fail_early then error("early failure on purpose") end
    for _ = 1, args.steps or 1 do
        if ctx.worker == slow then ctx:sleep(slow_sec) end
        if args.sleep then ctx:sleep(args.sleep) end
        local rows = C:pull(keys)
        seen = seen + rows:get(1, 1)
        local id = C:push_async(keys, ones)
        C:wait(id)
        local after = C:pull(keys)
        assert(after:get(1, 1) >= rows:get(1, 1) + 1, "pull after push must see the push")
        ctx:progress(C.keys)
        ctx:clock()
    end
    if args.fail and ctx.worker == args.fail then
        local t = nil
        return t.boom -- runtime error on purpose (line 35)
    end
    return { steps = args.steps or 1, seen = seen, worker = ctx.worker, node = ctx.node }
end

function M.evaluate(ctx, args)
    local lo, hi = ctx.tables.C:local_range()
    return { lo = lo, hi = hi, n = hi - lo }
end

return M
