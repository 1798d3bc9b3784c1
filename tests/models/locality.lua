-- Test model for manage = "auto" (tests/integration/auto_locality.sh):
-- every worker adds 1 to batches of keys of table C drawn from three
-- kinds: its node's own keys (args.own[node + 1], homed on another node:
-- only this node uses them), hot keys every worker hammers (args.hot, in
-- every batch), shared keys every worker uses now and then (args.shared),
-- and keys spread uniformly over the table. It localizes each next batch one
-- batch ahead (only keys auto relocates move) and checks each pull after
-- its own unwaited push (read-your-writes). Returns how many times it
-- added to each key, so the job can check no update was lost or doubled
-- while auto switches techniques between epochs.
local M = {}

function M.init(ctx, opts) end

function M.epoch(ctx, args)
    local C = ctx.tables.C
    local K, steps = C.keys, args.steps or 200
    local own, hot, shared = args.own[ctx.node + 1], args.hot, args.shared
    local n_own, n_shared, n_uni = args.n_own or 6, args.n_shared or 2, args.n_uni or 0
    local batch = n_own + #hot + n_shared + n_uni
    local U = cr.core.util
    local seed = (ctx.worker * 7919 + 17 + (args.round or 0) * 104729) % 2147483648
    local function rnd(n)
        seed = (seed * 1103515245 + 12345) % 2147483648
        return (seed // 65536) % n
    end
    local ones = U.matrix(batch, C.dim)
    for i = 1, batch do for j = 1, C.dim do ones:set(i, j, 1) end end
    -- a batch has no key twice (the push adds once per listed key)
    local function draw()
        local v, seen, i = U.ints(batch), {}, 0
        local function put(k)
            if not seen[k] then seen[k] = true; i = i + 1; v:set(i, k) end
        end
        for _, k in ipairs(hot) do put(k) end
        while i < n_own + #hot do put(own[rnd(#own) + 1]) end
        while i < n_own + #hot + n_shared do put(shared[rnd(#shared) + 1]) end
        while i < batch do put(rnd(K)) end
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
        lid = C:localize(nextk)
        local before = C:pull(keys)
        local pid = C:push_async(keys, ones)
        local after = C:pull(keys)
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

-- Every key's value through the data path, wherever it is.
function M.read_all(ctx, args)
    local C = ctx.tables.C
    local keys = cr.core.util.ints(C.keys)
    for i = 1, C.keys do keys:set(i, i - 1) end
    local rows = C:pull(keys)
    local v = {}
    for i = 1, C.keys do v[i] = rows:get(i, 1) end
    return { values = v }
end

return M
