-- crescent.policy: consistency policies as a job script names them
-- ("ssp:staleness=2", {"ssp", staleness = 2}, cr.policy("ssp", {...}) or a
-- file path), their sources, and the scheduler's check of a policy file
-- before it is shipped to the workers.
--
-- The check runs the policy's code, so it never runs it with the scheduler's
-- globals: core.sandbox.check_policy runs it in a state of its own with the
-- workers' allow-list, a memory cap and a time limit (src/lua/l_sandbox.c).
local core = require "crescent.core"
local home = require "crescent.home"

local M = {}

-- "ssp:staleness=2,x=y" -> "ssp", {staleness = 2, x = "y"}. what: the
-- kind of script in messages ("policy", "sampling scheme"). Values "true"
-- and "false" become booleans.
function M.parse(spec, what)
    what = what or "policy"
    local name, rest = spec:match("^([^:]+):?(.*)$")
    if not name then error(("bad %s '%s'"):format(what, spec), 2) end
    local opts = {}
    for kv in rest:gmatch("[^,]+") do
        local k, v = kv:match("^%s*([%w_]+)%s*=%s*(.-)%s*$")
        if not k then error(("bad %s option '%s' in '%s' (expected key=value)"):format(what, kv, spec), 2) end
        if v == "true" then opts[k] = true
        elseif v == "false" then opts[k] = false
        else opts[k] = tonumber(v) or v end
    end
    return name, opts
end

-- Resolve a policy name ("bsp") or path ("my/policy.lua") to (path, source).
-- Any accepted form of a script choice (a sampling scheme, a management
-- script) -> name, opts: "name:k=v,...", (name, {k = v}), {name, k = v}, or a
-- .lua path. what names it in errors ("sampling scheme"), example is a spec to
-- show ("bounded:pool=100"); level as for error(), counted from the caller.
function M.spec(spec, opts, what, example, level)
    level = (level or 1) + 1
    if type(spec) == "string" then
        if opts ~= nil then
            if type(opts) ~= "table" then error(what .. " options must be a table", level) end
            return spec, opts
        end
        local ok, name, o = pcall(M.parse, spec, what)
        if not ok then error(name, level) end
        return name, o
    end
    if type(spec) == "table" and type(spec[1]) == "string" then
        local o = {}
        for k, v in pairs(spec) do if k ~= 1 then o[k] = v end end
        return spec[1], o
    end
    error(("%s must be a name (\"%s\"), {name, key = value} or a .lua path"):format(what, example), level)
end

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
    if type(p) == "string" then
        local ok, name, opts = pcall(M.parse, p) -- parse's position would be this file's
        if not ok then error(name, (level or 1) + 1) end
        return name, opts
    end
    if type(p) == "table" then
        if p.name then return p.name, p.opts or {} end
        local opts = {}
        for k, v in pairs(p) do if k ~= 1 then opts[k] = v end end
        return p[1], opts
    end
    error("policy must be a name, {name, key = value} or cr.policy(name, opts)", (level or 1) + 1)
end

-- The job's policy -> name, opts: cli (--policy, or nil) wins, and its
-- errors name the option, as it has no line; else spec, its errors at level.
function M.choose(cli, spec, level)
    if cli == nil then
        local name, opts = M.describe(spec, (level or 1) + 1) -- not a tail call: level counts this frame
        return name, opts
    end
    local ok, name, opts = pcall(M.describe, cli)
    if not ok then error("--policy: " .. tostring(name), 0) end
    return name, opts
end

-- Load and check a policy the way workers will (so a bad file fails here,
-- with its name, before anything is sent). Raises "bad policy file: ...".
function M.check(path, src, opts)
    local ok, err = core.sandbox.check_policy(src, home.display(path), opts)
    if ok then return end
    err = tostring(err)
    if err:find("^bad policy file") then error(err, 0) end
    error("bad policy file: " .. err, 0)
end

return M
