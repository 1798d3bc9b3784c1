-- Test model: every worker pushes a NaN row to every key of table C (the
-- remote keys' owner refuses it with an error reply: the worker must fail
-- with that message, not wait forever).
local M = {}

function M.epoch(ctx, args)
    local C = ctx.tables.C
    local keys = cr.core.util.ints(C.keys)
    for i = 1, C.keys do keys:set(i, i - 1) end
    local m = cr.core.util.matrix(C.keys, C.dim)
    for i = 1, C.keys do for j = 1, C.dim do m:set(i, j, 0 / 0) end end
    C:push(keys, m)
    return { worker = ctx.worker }
end

return M
