-- Test model for relocation (docs/management.md): every worker adds 1 to
-- random batches of keys of table C, localizing each next batch one batch
-- ahead, so that workers on different nodes pull the same keys back and
-- forth. After each push (asynchronous, not waited for) it pulls the batch
-- again: per-key sequential consistency says the pull sees the push
-- (read-your-writes), even while the keys move. Returns how many times it
-- added to each key (adds[k + 1]) so the job can check that no update was
-- lost or applied twice.
local M = {}

function M.init(ctx, opts) end

function M.epoch(ctx, args)
    local C = ctx.tables.C
    local K, batch, steps = C.keys, args.batch or 8, args.steps or 50
    local U = cr.core.util
    local seed = (ctx.worker * 7919 + 17 + (args.round or 0) * 104729) % 2147483648
    local function rnd(n)
        seed = (seed * 1103515245 + 12345) % 2147483648
        return (seed // 65536) % n
    end
    local ones = U.matrix(batch, C.dim)
    for i = 1, batch do for j = 1, C.dim do ones:set(i, j, 1) end end
    local function draw()
        local v = U.ints(batch)
        for i = 1, batch do v:set(i, rnd(K)) end
        return v
    end
    local adds, checked = {}, 0
    for k = 1, K do adds[k] = 0 end
    local nextk = draw()
    local lid = C:localize(nextk)
    for _ = 1, steps do
        local keys = nextk
        C:wait(lid)
        nextk = draw()
        lid = C:localize(nextk) -- one batch ahead of use
        local before = C:pull(keys)
        local pid = C:push_async(keys, ones)
        local after = C:pull(keys) -- the push is not waited for: it must still be seen
        for i = 1, batch do
            local k = keys:get(i)
            adds[k + 1] = adds[k + 1] + 1
            if after:get(i, 1) < before:get(i, 1) + 1 then
                error(("read-your-writes broken: worker %d key %d read %g before its push, %g after"):format(
                    ctx.worker, k, before:get(i, 1), after:get(i, 1)))
            end
            checked = checked + 1
        end
        C:wait(pid)
    end
    C:wait(lid)
    return { adds = adds, checked = checked }
end

-- Read every key through the data path (evaluation-style pulls): rows of
-- moved keys must come from wherever they are.
function M.read_all(ctx, args)
    local C = ctx.tables.C
    local keys = cr.core.util.ints(C.keys)
    for i = 1, C.keys do keys:set(i, i - 1) end
    local rows = C:pull(keys)
    local v = {}
    for i = 1, C.keys do v[i] = rows:get(i, 1) end
    return { values = v }
end

-- Draw samples of distribution "u" over C (sampling fetches): each row
-- must hold args.want[k + 1], wherever the key is now (keys below
-- args.from are skipped: replicated ones may lag a sync round).
function M.sample_all(ctx, args)
    local C = ctx.tables.C
    local h = C:prepare_sample("u", 64)
    local keys, rows = C:pull_sample(h)
    local seen = 0
    for i = 1, #keys do
        local k = keys:get(i)
        if k >= (args.from or 0) then
            if rows:get(i, 1) ~= args.want[k + 1] then
                error(("sample of key %d holds %g, expected %g"):format(k, rows:get(i, 1), args.want[k + 1]))
            end
            seen = seen + 1
        end
    end
    return { sampled = seen }
end

return M
