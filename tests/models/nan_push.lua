-- Test model: every worker pushes a NaN row to every key of table C (the
-- remote keys' owner refuses it with an error reply: the worker must fail
-- with that message, not wait forever). args.last: only the last key's row
-- is NaN, the others 1 (on 2 nodes that row is remote for node 0's worker).
local M = {}

function M.epoch(ctx, args)
    local C = ctx.tables.C
    local keys = cr.core.util.ints(C.keys)
    for i = 1, C.keys do keys:set(i, i - 1) end
    local m = cr.core.util.matrix(C.keys, C.dim)
    for i = 1, C.keys do
        for j = 1, C.dim do m:set(i, j, (args and args.last and i < C.keys) and 1 or 0 / 0) end
    end
    C:push(keys, m)
    return { worker = ctx.worker }
end

return M
