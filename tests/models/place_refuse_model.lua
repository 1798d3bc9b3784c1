-- Test model for tests/integration/jobs/place_refuse.lua.
local M = {}
function M.sample(ctx) return { h = ctx.tables.H:prepare_sample("u", 4) } end
function M.range(ctx) return { ctx.tables.H:local_range() } end
return M
