-- Test model for sampling through the parameter server. Table E holds row
-- k = {k, k, ...} (M.fill writes it: worker 0 of each node pushes its
-- node's keys into a zero table with the add rule). M.draw prepares and
-- pulls samples and checks every row against its key.
--   args: dist, table (default "E"), n (samples per handle), m (per pull),
--         handles (default 1), async (pull_sample_async + wait),
--         local_only (fail on a key this node does not hold)
-- Returns per worker: counts[k + 1] of the keys drawn, bad rows, remote keys.
local M = {}

function M.fill(ctx)
    local E = ctx.tables.E
    if ctx.local_worker == 0 then
        local lo, hi = E:local_range()
        if hi > lo then
            local keys = cr.core.util.ints(hi - lo)
            local rows = cr.core.util.matrix(hi - lo, E.dim)
            for i = 1, hi - lo do
                keys:set(i, lo + i - 1)
                for j = 1, E.dim do rows:set(i, j, lo + i - 1) end
            end
            E:push(keys, rows)
        end
    end
    ctx:barrier()
    return {}
end

local function check(ctx, T, keys, rows, counts, acc, local_only)
    local lo, hi = T:local_range()
    for i = 1, #keys do
        local k = keys:get(i)
        counts[k + 1] = (counts[k + 1] or 0) + 1
        for j = 1, T.dim do
            if rows:get(i, j) ~= k then acc.bad = acc.bad + 1 break end
        end
        if k < lo or k >= hi then
            acc.remote = acc.remote + 1
            if local_only then error(("key %d is not on node %d"):format(k, ctx.node)) end
        end
    end
end

function M.draw(ctx, args)
    local T = ctx.tables[args.table or "E"]
    local n, m = args.n or 100, args.m or 10
    local counts, acc = {}, { bad = 0, remote = 0, pulled = 0 }
    for i = 1, T.keys do counts[i] = 0 end
    for _ = 1, args.handles or 1 do
        local h = T:prepare_sample(args.dist, n)
        local left = n
        while left > 0 do
            local take = math.min(m, left)
            local keys, rows
            if args.async then
                local r = T:pull_sample_async(h, take)
                keys, rows = T:wait(r)
            else
                keys, rows = T:pull_sample(h, take)
            end
            assert(#keys == take and rows:rows() == take and rows:cols() == T.dim, "shape")
            check(ctx, T, keys, rows, counts, acc, args.local_only)
            acc.pulled = acc.pulled + take
            left = left - take
        end
        ctx:clock()
    end
    return { counts = counts, bad = acc.bad, remote = acc.remote, pulled = acc.pulled, node = ctx.node }
end

-- A handle kept across calls (and scheme changes): M.keep prepares it,
-- M.finish pulls it to the end, checking rows against keys.
local kept
function M.keep(ctx, args)
    kept = ctx.tables.E:prepare_sample(args.dist, args.n)
    return {}
end

function M.finish(ctx)
    local T = ctx.tables.E
    local keys, rows = T:pull_sample(kept)
    local counts, acc = {}, { bad = 0, remote = 0 }
    check(ctx, T, keys, rows, counts, acc, false)
    kept = nil
    return { bad = acc.bad, remote = acc.remote, pulled = #keys }
end

-- Bad uses, one per args.case, each raising the binding's error.
function M.misuse(ctx, args)
    local E, R = ctx.tables.E, ctx.tables.R
    if args.case == "undeclared" then E:prepare_sample("nope", 3)
    elseif args.case == "wrong_table" then R:prepare_sample("neg", 3)
    elseif args.case == "closed" then
        local h = E:prepare_sample("neg", 2)
        E:pull_sample(h, 2)
        E:pull_sample(h, 1)
    elseif args.case == "too_many" then
        local h = E:prepare_sample("neg", 2)
        E:pull_sample(h, 3)
    elseif args.case == "local_empty" then
        E:prepare_sample("half", 3)
    elseif args.case == "hoard" then -- handles hold their samples in C: they count against memory_mb
        for _ = 1, 10 do E:prepare_sample("neg", 1 << 21) end -- 84 MB each, dropped: collected
        E:prepare_sample("neg", 1 << 24)
    end
    return {}
end

return M
