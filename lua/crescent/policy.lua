-- crescent.policy: consistency policies as a job script names them
-- ("ssp:staleness=2", {"ssp", staleness = 2}, cr.policy("ssp", {...}) or a
-- file path), their sources, and the scheduler's check of a policy file
-- before it is shipped to the workers.
--
-- The check runs the policy's code, so it never runs it with the scheduler's
-- globals: core.sandbox.check_policy (a sandboxed, memory-capped state, when
-- the binary has it) or, failing that, an environment holding only the safe
-- functions below, under an instruction budget.
local core = require "crescent.core"
local home = require "crescent.home"

local M = {}

-- "ssp:staleness=2,x=y" -> "ssp", {staleness = 2, x = "y"}
function M.parse(spec)
    local name, rest = spec:match("^([^:]+):?(.*)$")
    if not name then error("bad policy '" .. spec .. "'", 2) end
    local opts = {}
    for kv in rest:gmatch("[^,]+") do
        local k, v = kv:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
        if not k then error(("bad policy option '%s' in '%s' (expected key=value)"):format(kv, spec), 2) end
        opts[k] = tonumber(v) or v
    end
    return name, opts
end

-- Resolve a policy name ("bsp") or path ("my/policy.lua") to (path, source).
function M.source(name)
    local path = home.resolve(name, "configs/consistency")
    local src, err = home.read_file(path)
    if not src then
        error(("unknown consistency policy '%s' (%s)"):format(name, err), 0)
    end
    return path, src
end

-- cr.policy("ssp", {staleness = 2}) -> a description for cr.job{consistency = ...}
function M.new(name, opts)
    return { name = name, opts = opts or {} }
end

-- Any accepted form of a policy -> name, opts. level: for error().
function M.describe(p, level)
    if p == nil then return "bsp", {} end
    if type(p) == "string" then return M.parse(p) end
    if type(p) == "table" then
        if p.name then return p.name, p.opts or {} end
        local opts = {}
        for k, v in pairs(p) do if k ~= 1 then opts[k] = v end end
        return p[1], opts
    end
    error("policy must be a name, {name, key = value} or cr.policy(name, opts)", (level or 1) + 1)
end

-- What a policy may use when it is checked without core.sandbox: no I/O, no
-- os, no load, no debug, no require, no getmetatable (the string metatable is shared).
local SAFE = { "assert", "error", "ipairs", "next", "pairs", "pcall", "select", "tonumber",
               "tostring", "type", "xpcall", "rawequal", "rawlen", "setmetatable" }
local DROP = { ["string.dump"] = true, ["math.randomseed"] = true } -- bytecode; the scheduler's rng
local SAFE_LIBS = { "math", "string", "table", "utf8" }
local BUDGET = 10000000 -- instructions for loading the file and building the policy

local function safe_env()
    local env = {}
    for _, k in ipairs(SAFE) do env[k] = _G[k] end
    for _, lib in ipairs(SAFE_LIBS) do
        local t = {}
        for k, v in pairs(_G[lib]) do
            if not DROP[lib .. "." .. k] then t[k] = v end
        end
        env[lib] = t
    end
    env._G = env
    return env
end

-- Run the policy file's chunk and constructor in a coroutine whose count
-- hook stops a runaway loop. Returns the policy table; raises the message.
local function run_fallback(chunk, opts)
    local co = coroutine.create(function()
        local ctor = chunk()
        if type(ctor) ~= "function" then return nil, "ctor" end
        return ctor(opts)
    end)
    debug.sethook(co, function() error("policy check ran too long (a loop?)", 0) end, "", BUDGET)
    local ok, pol, what = coroutine.resume(co)
    if not ok then error(tostring(pol), 0) end
    return pol, what
end

local function shape_error(shown, what)
    if what == "ctor" then
        error(("bad policy file %s: must return a constructor function(opts)"):format(shown), 0)
    end
    error(("bad policy file %s: the constructor must return a table with may_proceed(my_clock, min_clock, clocks)")
        :format(shown), 0)
end

-- Load and check a policy the way workers will (so a bad file fails here,
-- with its name, before anything is sent). Raises "bad policy file: ...".
function M.check(path, src, opts)
    local shown = home.display(path)
    local sandbox = core.sandbox
    if sandbox and sandbox.check_policy then
        local ok, err = sandbox.check_policy(src, "@" .. shown, opts)
        if ok then return end
        err = tostring(err)
        if err:find("^bad policy file") then error(err, 0) end
        error("bad policy file: " .. err, 0)
    end
    local chunk, err = load(src, "@" .. shown, "t", safe_env())
    if not chunk then error("bad policy file: " .. err, 0) end
    local ok, pol, what = pcall(run_fallback, chunk, opts)
    if not ok then error("bad policy file: " .. tostring(pol), 0) end
    if what == "ctor" then shape_error(shown, what) end
    if type(pol) ~= "table" or type(pol.may_proceed) ~= "function" then shape_error(shown, "table") end
end

return M
