-- Test model: deterministic gradient pushes into tables A and B (only
-- worker 0 pushes, so results do not depend on the node/worker count).
local M = {}
function M.epoch(ctx, args)
    if ctx.worker ~= 0 then return {} end
    local A, B = ctx.tables.A, ctx.tables.B
    local keys = cr.core.util.ints(A.keys)
    for i = 1, A.keys do keys:set(i, i - 1) end
    for _ = 1, args.steps do
        local rows = A:pull(keys)
        local g = cr.core.util.matrix(A.keys, A.dim)
        for i = 1, A.keys, 7 do for j = 1, A.dim do g:set(i, j, rows:get(i, j) + 0.01 * j) end end
        A:push(keys, g)
        local b = B:pull{ 0, 36 }
        B:push({ 0, 36 }, cr.core.util.matrix{ { b:get(1, 1), 1 }, { 0.5, b:get(2, 2) } })
    end
    return {}
end
return M
