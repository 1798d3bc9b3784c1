-- Test model: a call that fails with asynchronous requests in flight (a
-- pull of every row, a push, a sample pull), and one that works
-- (tests/integration/ps_pending_error.sh).
local M = {}
local keys

function M.init(ctx, opts)
    local E = ctx.tables.E
    keys = cr.core.util.ints(E.keys)
    for i = 1, E.keys do keys:set(i, i - 1) end
end

function M.fail(ctx, args)
    local E = ctx.tables.E
    E:pull_async(keys)
    E:push_async(keys, cr.core.util.matrix(E.keys, E.dim))
    E:pull_sample_async(E:prepare_sample("neg", 500), 500)
    error("failing on purpose")
end

function M.ok(ctx, args)
    local E = ctx.tables.E
    return { rows = E:wait(E:pull_async(keys)):rows() }
end

return M
