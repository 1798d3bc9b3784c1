-- Test model misusing tables (args.what = "pull" | "push").
local M = {}
function M.epoch(ctx, args)
    local C = ctx.tables.C
    if args.what == "pull" then C:pull{1, 10} end
    if args.what == "push" then C:push({1, 2}, cr.core.util.matrix(2, 2)) end
    return {}
end
return M
