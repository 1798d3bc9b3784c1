-- Test model for placements (tests/integration/place.sh): every worker adds
-- row {k, 2k + 1, 7} to every key k of table A (add rule, from zeros); then
-- reads every key back. local_keys lists this node's keys of A with the
-- owner the worker side gives each.
local M = {}

local function all_keys(T)
    local keys = cr.core.util.ints(T.keys)
    for i = 1, T.keys do keys:set(i, i - 1) end
    return keys
end

function M.epoch(ctx, args)
    local A = ctx.tables.A
    local keys = all_keys(A)
    local g = cr.core.util.matrix(A.keys, A.dim)
    for i = 1, A.keys do
        local k = i - 1
        g:set(i, 1, k)
        g:set(i, 2, 2 * k + 1)
        g:set(i, 3, 7)
    end
    A:push(keys, g)
    ctx:clock()
    return {}
end

-- every key's row, as pulled by this worker (a list of rows)
function M.read_all(ctx, args)
    local A = ctx.tables.A
    local rows = A:pull(all_keys(A))
    local out = {}
    for i = 1, A.keys do out[i] = rows:row(i) end
    return { rows = out }
end

function M.local_keys(ctx, args)
    local A = ctx.tables.A
    local ks, own = A:local_keys(), {}
    for i = 1, #ks do own[i] = A:owner(ks:get(i)) end
    return { node = ctx.node, nodes = ctx.nodes, keys = ks:totable(), owners = own }
end

return M
