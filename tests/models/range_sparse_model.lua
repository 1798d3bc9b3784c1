-- Test model for tests/integration/range_sparse.sh: range operations on
-- table D (dense) and pulls and pushes of a sparse table S.
local M = {}

local function keys_of(lo, hi)
    local k = cr.core.util.ints(hi - lo)
    for i = 1, hi - lo do k:set(i, lo + i - 1) end
    return k
end

-- worker 0 only: push_range of rows {k, -k} to D[lo, hi), then read back
function M.push_range(ctx, a)
    if ctx.worker ~= 0 then return {} end
    local D = ctx.tables.D
    local m = cr.core.util.matrix(a.hi - a.lo, D.dim)
    for i = 1, a.hi - a.lo do m:set(i, 1, a.lo + i - 1) m:set(i, 2, -(a.lo + i - 1)) end
    D:push_range(a.lo, a.hi, m)
    local r = D:pull_range(a.lo, a.hi)
    local l = D:pull(keys_of(a.lo, a.hi))
    for i = 1, a.hi - a.lo do
        assert(r:get(i, 1) == l:get(i, 1) and r:get(i, 2) == l:get(i, 2), "pull_range and pull disagree")
    end
    return { first = r:get(1, 1), last = r:get(a.hi - a.lo, 1) }
end

-- worker 0 only: pull D[lo, hi) as a range or as a key list
function M.pull(ctx, a)
    if ctx.worker ~= 0 then return {} end
    local D = ctx.tables.D
    if a.range then D:pull_range(a.lo, a.hi) else D:pull(keys_of(a.lo, a.hi)) end
    return {}
end

function M.bad_range(ctx, a)
    if ctx.worker ~= 0 then return {} end
    ctx.tables.D:pull_range(a.lo, a.hi)
    return {}
end

-- every worker adds {1, k % 1000} to each sparse key of a.keys
function M.sparse_push(ctx, a)
    local S = ctx.tables.S
    local keys = cr.core.util.ints(a.keys)
    local g = cr.core.util.matrix(#a.keys, S.dim)
    for i, k in ipairs(a.keys) do g:set(i, 1, 1) g:set(i, 2, k % 1000) end
    S:push(keys, g)
    return {}
end

-- rows of the sparse keys a.keys as this worker pulls them
function M.sparse_pull(ctx, a)
    local r = ctx.tables.S:pull(cr.core.util.ints(a.keys))
    local out = {}
    for i = 1, #a.keys do out[i] = r:row(i) end
    return { rows = out, owner = ctx.tables.S:owner(a.keys[1]), sparse = ctx.tables.S.sparse }
end

return M
