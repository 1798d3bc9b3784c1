-- Test model: what a hostile model script tries (tests/integration/sandbox_*.sh).
-- M.probe(ctx, {what = name, victim = path}) does one forbidden thing
-- without catching the error, so the error names this file and line.
local M = {}
local probes = {
    io = function() return io.open("/etc/passwd"):read("a") end,
    os_execute = function(a) return os.execute("echo pwned > " .. a.victim) end,
    require = function() return require("io") end,
    bytecode = function() return load("\27Lua\84\0", "x", "b") end,
    bytecode_text = function() return assert(load("\27Lua\84\0\25\147\r\n\26\n")) end,
    string_dump = function() return string.dump(M.probe) end,
    debug_mt = function() return getmetatable("").__index.debug.getregistry() end,
    debug = function() return debug.getregistry() end,
    string_mt = function() getmetatable("").__index = {} end,
    loadlib = function() return package.loadlib("libc.so.6", "system") end,
    gc_stop = function() return collectgarbage("stop") end,
    rep31 = function() return #string.rep("x", 2^31) end,
    rep30 = function() return #string.rep("x", 2^30) end,
    grow = function()
        local t = {}
        for i = 1, 1e9 do t[i] = i end
    end,
    write_text = function(a) return cr.core.data.write_text(a.victim, {}) end,
    mf_load = function() return cr.core.kernels.mf_load("/etc/passwd") end,
    text = function() return cr.core.data.text("/etc/passwd") end,
}

function M.probe(ctx, args)
    return { r = tostring(probes[args.what](args)) }
end

-- Every function reachable under cr.core, called with a path first: none
-- may return data, none may touch the victim file.
function M.sweep(ctx, args)
    local out = {}
    local function visit(t, name, depth)
        for k, v in pairs(t) do
            local n = name .. "." .. tostring(k)
            if type(v) == "table" and depth < 3 then
                visit(v, n, depth + 1)
            elseif type(v) == "function" and n ~= "cr.core.util.now" then
                for _, path in ipairs { "/etc/passwd", args.victim } do
                    local ok, r = pcall(v, path, {})
                    if ok and r ~= nil then out[#out + 1] = n .. "(" .. path .. ") returned " .. type(r) end
                    ok, r = pcall(v, cr.core.util.matrix(1, 1), {}, path)
                    if ok and r ~= nil then out[#out + 1] = n .. "(M, {}, " .. path .. ") returned " .. type(r) end
                end
            end
        end
    end
    visit(cr.core, "cr.core", 0)
    return { leaks = table.concat(out, "; ") }
end

-- The allowed data file declared by the job (an option) is readable.
function M.allowed(ctx, args)
    local h = cr.core.kernels.mm_header(args.path)
    return { rows = h.rows }
end

-- Worker 0 fails at once; every other worker spins in pure Lua.
function M.spin(ctx, args)
    if ctx.worker == 0 then error("worker 0 fails on purpose") end
    local n = 0
    while true do n = n + 1 end
end

-- Worker 0 fails at once; every other worker spins in a message handler
-- (where Lua runs code with hooks off once the count hook raised).
function M.spin_handler(ctx, args)
    if ctx.worker == 0 then error("worker 0 fails on purpose") end
    xpcall(error, function() while true do end end)
end

-- C buffers sized by the script: 4 positives with 2e7 negatives each
-- would be about 4 GB of batcher buffers in C, past the model's cap.
function M.kge_bomb(ctx, args)
    local b = cr.core.kernels.kge_batches({ s = { 0 }, r = { 0 }, o = { 1 }, n_ent = 2, n_rel = 1 },
        { batch = 4, neg = 2e7 })
    return { n = #b:next() }
end

-- Answers at once: the job is still usable.
function M.ping(ctx, args)
    return { worker = ctx.worker }
end

-- Every worker spins in a message handler until the command is cancelled.
function M.spin_handler_all(ctx, args)
    xpcall(error, function() while true do end end)
end

return M
