-- Test policy: does the forbidden thing named by opts.what, either in
-- may_proceed (opts.at = "decide") or in the constructor when it runs in a
-- sandbox (opts.at = "load"; os.getenv is there only outside one).
return function(opts)
    local probes = {
        io = function() return io.open("/etc/passwd") end,
        os_execute = function() return os.execute("echo pwned > " .. opts.victim) end,
        require = function() return require("io") end,
        bytecode = function() return load("\27Lua\84\0", "x", "b") end,
        string_dump = function() return string.dump(print) end,
        debug_mt = function() return getmetatable("").__index.debug.getregistry() end,
        loadlib = function() return package.loadlib("libc.so.6", "system") end,
        gc_stop = function() return collectgarbage("stop") end,
        rep31 = function() return #string.rep("x", 2^31) end,
        rep30 = function() return #string.rep("x", 2^30) end,
        model_globals = function() return cr.core end,
    }
    local probe = probes[opts.what]
    if opts.at == "load" and rawget(os, "getenv") == nil then probe() end
    return {
        name = "hostile",
        may_proceed = function(my_clock, min_clock, clocks)
            if opts.at == "decide" then probe() end
            return true
        end,
    }
end
