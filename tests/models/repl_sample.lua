-- Test model (tests/integration/repl_sample.sh): a worker reads its own
-- writes to replicated keys through the sampling API too. Each step it
-- reads every key of C (replicas), adds 1 to every key, and pulls samples
-- of distribution "u" over C: a sample's row must hold the worker's add
-- (at least the value read before it plus 1), whichever node owns the key.
-- Replicas only grow (rule add, adds of 1), so the other nodes' merged
-- adds can only raise it.
local M = {}

function M.init(ctx, opts) end

function M.epoch(ctx, args)
    local C = ctx.tables.C
    local U = cr.core.util
    local K, steps, m = C.keys, args.steps or 200, args.samples or 8
    local all, ones = U.ints(K), U.matrix(K, C.dim)
    for i = 1, K do
        all:set(i, i - 1)
        for j = 1, C.dim do ones:set(i, j, 1) end
    end
    local checked, async = 0, args.async
    for step = 1, steps do
        local before = C:pull(all)
        C:push(all, ones)
        local h = C:prepare_sample("u", m)
        local keys, rows
        if async then keys, rows = C:wait(C:pull_sample_async(h, m)) else keys, rows = C:pull_sample(h) end
        for i = 1, #keys do
            local k = keys:get(i)
            local want = before:get(k + 1, 1) + 1
            if rows:get(i, 1) < want then
                error(("step %d: worker %d sampled key %d (owner node %d) holding %g, its own add made it >= %g"):format(
                    step, ctx.worker, k, C:owner(k), rows:get(i, 1), want), 0)
            end
            checked = checked + 1
        end
    end
    return { checked = checked }
end

return M
