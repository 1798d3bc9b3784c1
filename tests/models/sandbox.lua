-- Test model: probes the worker sandbox; M.probe returns what is reachable.
local M = {}
function M.probe(ctx, args)
    local r = {}
    r.io = pcall(function() return io end)
    r.os_execute = os.execute ~= nil
    r.debug = pcall(function() return debug end)
    r.require = pcall(function() return require end)
    r.loadfile = pcall(function() return loadfile end)
    r.binary_load = load("\27Lua") == nil
    r.cr_util = type(cr.core.util.matrix) == "function"
    r.kernels = type(cr.core.kernels) == "table"
    local ok, err = pcall(function() return undefined_thing end)
    r.undefined = not ok and tostring(err):match("undefined global 'undefined_thing'") ~= nil
    r.ctx = ("%d/%d/%d/%d/%d"):format(ctx.node, ctx.nodes, ctx.worker, ctx.workers, ctx.workers_per_node)
    local T = ctx.tables.T
    r.dim, r.keys = T.dim, T.keys
    local lo, hi = T:local_range()
    r.lo, r.hi, r.owner_last = lo, hi, T:owner(T.keys - 1)
    r.owner_huge = select(2, pcall(T.owner, T, math.maxinteger))
    r.echo = args.echo
    return r
end
function M.io_open(ctx, args) return { f = io.open("/etc/passwd") } end
function M.rows(ctx, args)
    local T = ctx.tables.T
    local m = T:pull(cr.core.util.ints{ 3, 1, 3 })
    return { m:row(1), m:row(2), m:row(3) }
end
function M.async(ctx, args)
    local T = ctx.tables.T
    local a = T:pull_async{ 0, 1 }
    local p = T:push_async({ 0 }, cr.core.util.matrix{ { 9, 9 } })
    local b = T:pull_async{ 0 }
    local rb, ra = T:wait(b), T:wait(a)
    local ok = T:wait(p)
    local waited_twice = pcall(T.wait, T, a)
    return { ra = ra:row(1), rb = rb:row(1), push = ok, twice = waited_twice }
end
function M.drop_tables(ctx, args) ctx.tables = nil end
function M.fill(ctx, args)
    local Z = ctx.tables[args.table]
    local keys = cr.core.util.ints(Z.keys)
    for i = 1, Z.keys do keys:set(i, i - 1) end
    local rows = cr.core.util.matrix(Z.keys, Z.dim)
    for i = 1, Z.keys do rows:set(i, 1, i - 1) end
    Z:push(keys, rows)
    local back = Z:pull(keys)
    return { last = back:get(Z.keys, 1), first = back:get(1, 1) }
end
function M.slow(ctx, args)
    ctx:progress(1)
    ctx:sleep(0.3)
    return { slow = true }
end
function M.barrier(ctx, args)
    if ctx.worker == 0 then ctx:sleep(0.2) end
    local t0 = cr.core.util.now()
    ctx:barrier()
    ctx:barrier()
    return { waited = cr.core.util.now() - t0 }
end
return M
