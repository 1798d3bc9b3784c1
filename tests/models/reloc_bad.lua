-- Test model: localize with a key out of range (tests/integration/reloc_errors.sh).
local M = {}
function M.init(ctx, opts) end
function M.epoch(ctx, args)
    ctx.tables.C:localize({ 1, ctx.tables.C.keys + 5 })
    return {}
end
return M
