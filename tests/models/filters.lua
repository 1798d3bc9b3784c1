-- Test model for the traffic filters (docs/filters.md): each worker pulls
-- and pushes the same batches of keys every epoch (the key lists repeat,
-- as in logistic regression over fixed minibatches). Its pushes are
-- multiples of 1/4, mostly 0: sums are exact in float in any order, so a
-- job with filters must end with exactly the values of a job without.
-- The job script (tests/integration/jobs/filters.lua) recomputes them
-- with M.batch.
local M = {}
local batches, grads

-- Keys and pushed value (row i, column j) of batch b of worker w.
function M.batch(w, b, keys, per_batch)
    local start = (w * 997 + b * 131) % keys
    local function key(i) return (start + (i - 1) * 7) % keys end
    local function value(i, j)
        if (w + b + i + j) % 4 ~= 0 then return 0 end
        return 0.25 * ((i + j) % 5 - 2)
    end
    return key, value
end

function M.init(ctx, opts)
    local F = ctx.tables.F
    batches, grads = {}, {}
    for b = 1, opts.batches do
        local key, value = M.batch(ctx.worker, b, F.keys, opts.per_batch)
        local ks, g = cr.core.util.ints(opts.per_batch), cr.core.util.matrix(opts.per_batch, F.dim)
        for i = 1, opts.per_batch do
            ks:set(i, key(i))
            for j = 1, F.dim do g:set(i, j, value(i, j)) end
        end
        batches[b], grads[b] = ks, g
    end
end

function M.epoch(ctx, args)
    local F = ctx.tables.F
    for b = 1, #batches do
        F:pull(batches[b])
        F:push(batches[b], grads[b])
        ctx:clock()
    end
    return { batches = #batches }
end

return M
