-- Test model for dtype = "i32" tables (tests/integration/table_i32.sh):
-- every worker adds +1 (an int32 matrix) to random batches of keys of the
-- count table C, localizing each next batch one batch ahead when the table
-- relocates (and -1 then +1 to column 2 before each +1). Pulls come back as int32
-- matrices; a pull after the worker's own push sees it. Returns how many times it added to each key (adds[k +
-- 1]) so the job can check the counts are exact.
local M = {}

function M.init(ctx, opts) end

function M.epoch(ctx, args)
    local C = ctx.tables.C
    assert(C.dtype == "i32", "C.dtype is " .. tostring(C.dtype))
    local K, batch, steps = C.keys, args.batch or 8, args.steps or 50
    local U = cr.core.util
    local seed = (ctx.worker * 7919 + 17 + (args.round or 0) * 104729) % 2147483648
    local function rnd(n)
        seed = (seed * 1103515245 + 12345) % 2147483648
        return (seed // 65536) % n
    end
    local ones, minus, plus = U.matrix(batch, C.dim, "i32"), U.matrix(batch, 2, "i32"), U.matrix(batch, 2, "i32")
    for i = 1, batch do
        for j = 1, C.dim do ones:set(i, j, 1) end
        minus:set(i, 2, -1)
        plus:set(i, 2, 1)
    end
    local function draw()
        local v = U.ints(batch)
        for i = 1, batch do v:set(i, rnd(K)) end
        return v
    end
    local adds = {}
    for k = 1, K do adds[k] = 0 end
    local nextk = draw()
    local lid = args.localize and C:localize(nextk)
    for _ = 1, steps do
        local keys = nextk
        if lid then C:wait(lid) end
        nextk = draw()
        if args.localize then lid = C:localize(nextk) end
        local before = C:pull(keys)
        assert(before:dtype() == "i32", "pull of an i32 table gave an " .. before:dtype() .. " matrix")
        -- -1 then +1 in column 2 (no change; column 1, checked below, never
        -- goes down): -1's bits are a float NaN's, which an f32 table's
        -- pushes refuse; an i32 table takes them, local or remote
        C:push(keys, minus)
        C:push(keys, plus)
        local pid = C:push_async(keys, ones)
        local after = C:pull(keys)
        for i = 1, batch do
            local k = keys:get(i)
            adds[k + 1] = adds[k + 1] + 1
            local b, a = before:get(i, 1), after:get(i, 1)
            if math.type(a) ~= "integer" or a < b + 1 then
                error(("worker %d key %d read %s before its push, %s after"):format(ctx.worker, k, b, a))
            end
        end
        C:wait(pid)
    end
    if lid then C:wait(lid) end
    return { adds = adds }
end

-- Every key's first column, read through the data path (asynchronously).
function M.read_all(ctx, args)
    local C = ctx.tables.C
    local keys = cr.core.util.ints(C.keys)
    for i = 1, C.keys do keys:set(i, i - 1) end
    local m = C:wait(C:pull_async(keys))
    local values = {}
    for i = 1, C.keys do values[i] = m:get(i, 1) end
    return { values = values }
end

-- Bad input (tests/integration/table_i32.sh): what = "f32push" pushes a
-- float matrix to the i32 table C; "sample" prepares a sample of it.
function M.bad(ctx, args)
    local C, U = ctx.tables.C, cr.core.util
    if args.what == "f32push" then C:push({ 0 }, U.matrix(1, C.dim)) end
    if args.what == "i32push" then ctx.tables.F:push({ 0 }, U.matrix(1, ctx.tables.F.dim, "i32")) end
    if args.what == "sample" then C:prepare_sample("u", 4) end
    return {}
end

return M
