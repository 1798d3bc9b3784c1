-- Test model: M.big returns an array of args.n integers (a result at, or
-- past, the bound on a worker's result size).
local M = {}
function M.init() end
function M.big(_, args)
    local t = {}
    for i = 1, args.n do t[i] = i end
    return t
end
return M
