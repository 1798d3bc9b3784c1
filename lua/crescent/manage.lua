-- crescent.manage: decision scripts that choose a management technique per
-- key of a table (docs/management.md): configs/management/NAME.lua or
-- a user's .lua file, named as "auto", "nups:hot=50", {"auto", cap = 100}.
-- A script returns a constructor function(opts) -> decide(input). Each run
-- is sandboxed on the scheduler as sampling schemes are (run_scheme: a
-- state of its own, the workers' allow-list, a memory cap, 5 s), loaded
-- afresh at each decision: what it must remember (hysteresis) it reads from
-- the input (the current choice and its replicated keys).
--
--   local d = manage.new("auto", nil, { table = "E", keys = K, nodes = 2 })
--   local choice, why = d:decide(obs)  -- why: the reason a choice is kept
local core = require "crescent.core"
local home = require "crescent.home"
local policy = require "crescent.policy"
local counts = require "crescent.manage_counts"
local choice = require "crescent.manage_choice"

local M = {}

M.shipped = { "auto", "nups" }
-- The technique names a table takes directly (not decision scripts).
M.techniques = choice.techniques
-- Most keys a decision may replicate (ctx.cap lowers it): each costs every
-- node a row and the sync thread its traffic.
M.CAP = 1 << 16

-- Runs inside the sandbox: loads the user's script under its own name (so
-- its errors carry its file and line), calls the constructor with a proxy
-- of the options that notes what the script reads (an option never read is
-- refused by name, as run_scheme does for sampling schemes), then decide.
-- What decide returns is copied into plain data, anything else (a function
-- in the list...) replaced by a "<type>" marker for the caller to name. The
-- runner keeps its own copies of the globals it calls: the user's script
-- shares the sandbox's globals and may replace them. A sandboxed script
-- cannot require, so what decision scripts share the runner offers as the
-- global table `manage` (docs/management.md, "Writing a decision script").
local RUNNER = [[
-- the globals this runner uses, taken before the user's script can replace them
local type, next, error, tostring, load, setmetatable, ipairs = type, next, error, tostring, load, setmetatable, ipairs
-- manage.hot_keys(counts, keys, hot, cap): the keys of counts (input.expected
-- or input.observed: top largest first, and total) above hot x the mean
-- count per key (total / keys), hottest first, at most cap: the NuPS rule.
manage = {
    hot_keys = function(counts, keys, hot, cap)
        local over, limit = {}, hot * counts.total / keys
        for _, h in ipairs(counts.top) do
            if h.count <= limit or #over == cap then break end
            over[#over + 1] = h.key
        end
        return over
    end,
}
local function plain(v, depth)
    local t = type(v)
    if t == "number" or t == "string" or t == "boolean" or t == "nil" then return v end
    if t ~= "table" or depth > 2 then return "<" .. t .. ">" end
    local c = {}
    for k, x in next, v do
        if type(k) == "number" or type(k) == "string" then c[k] = plain(x, depth + 1)
        else c["<" .. type(k) .. " key>"] = true end
    end
    return c
end
return function(a)
    local f, err = load(a.src, "@" .. a.chunk, "t")
    if not f then error(err, 0) end
    local ctor = f()
    if type(ctor) ~= "function" then
        error(a.chunk .. ": must return a constructor function(opts) (got " .. type(ctor) .. ")", 0)
    end
    local raw, seen = a.opts, {}
    local proxy = setmetatable({}, {
        __index = function(_, k) seen[k] = true; return raw[k] end,
        __pairs = function() for k in next, raw do seen[k] = true end; return next, raw, nil end,
        __newindex = function(_, k, v) raw[k] = v end,
    })
    local decide = ctor(proxy)
    for k in next, raw do
        if not seen[k] then
            error(("%s: unknown option '%s' (the script never reads it)"):format(a.chunk, tostring(k)), 0)
        end
    end
    if type(decide) ~= "function" then
        error(("%s: the constructor must return a function decide(input) (got %s)"):format(a.chunk, type(decide)), 0)
    end
    if a.input == nil then return { checked = true } end
    return { out = plain(decide(a.input), 0) }
end
]]

-- run_scheme's wording is about sampling schemes; say management script.
local function reword(msg)
    msg = tostring(msg):gsub("^bad sampling scheme: ", ""):gsub("^bad sampling scheme ", "")
    msg = msg:gsub("sampling scheme ran longer", "management script ran longer")
             :gsub("sampling scheme exceeded", "management script exceeded")
    return msg
end

-- Any accepted form -> name, opts: "auto", "auto:hot=50,cap=10",
-- ("auto", {hot = 50}), {"auto", hot = 50}, or a .lua path.
function M.describe(spec, opts, level)
    local name, o = policy.spec(spec, opts, "management script", "auto:cap=100", (level or 1) + 1)
    return name, o -- not a tail call: the error level counts this frame
end

-- Is spec a decision script ("auto", "nups:hot=50", "my/rule.lua", {"auto"})?
function M.is_script(spec)
    if type(spec) == "table" then return type(spec[1]) == "string" end
    if type(spec) ~= "string" then return false end
    local name = spec:match("^([^:]+)") or spec
    return not M.techniques[name]
end

-- A script name or path -> path, source; an unknown name lists the shipped ones.
function M.source(name)
    local path = home.resolve(name, "configs/management")
    local src, err = home.read_file(path)
    if src then return path, src end
    if name:find("/", 1, true) or name:match("%.lua$") then
        error(("management script file %s"):format(err), 0)
    end
    error(("unknown technique '%s' (classic, relocate, replicate, or a decision script: %s, "
        .. "or the path of a .lua file)"):format(name, table.concat(M.shipped, ", ")), 0)
end

local function run(self, input)
    local res, err = core.sandbox.run_scheme(RUNNER, "crescent.manage runner",
        { src = self.src, chunk = self.shown, opts = self.opts, input = input })
    if not res then return nil, reword(err) end
    return res
end

-- ---------- checking what decide returned (crescent.manage_choice) ----------

M.check_choice, M.same, M.label = choice.check_choice, choice.same, choice.label

-- The counts decision scripts read (crescent.manage_counts).
M.observed, M.expected, M.window = counts.observed, counts.expected, counts.window

-- ---------- the decider ----------

local Decider = {}
Decider.__index = Decider

-- manage.new(spec [, opts], ctx): a decider for one table. ctx: table (its
-- name), keys, nodes, cap (optional, <= M.CAP), initial (the choice before
-- the first decision, default "classic"). Runs the constructor once to
-- refuse an unknown script, a broken one or an unknown option now, with a
-- one-line message naming the script (and its line).
function M.new(spec, opts, ctx)
    local name, o = M.describe(spec, opts, 2)
    if type(ctx) ~= "table" or type(ctx.table) ~= "string" or math.type(ctx.keys) ~= "integer" or ctx.keys < 1
        or math.type(ctx.nodes) ~= "integer" or ctx.nodes < 1 then
        error("manage.new: ctx = {table = name, keys = n >= 1, nodes = n >= 1} expected", 2)
    end
    local cap = ctx.cap or M.CAP
    if math.type(cap) ~= "integer" or cap < 0 or cap > M.CAP then
        error(("manage.new: cap must be an integer in [0, %d]"):format(M.CAP), 2)
    end
    local okp, path, src = pcall(M.source, name)
    if not okp then error(("manage %s: %s"):format(ctx.table, path), 0) end
    local d = setmetatable({
        name = name, opts = o, path = path, src = src, shown = home.display(path),
        table = ctx.table, keys = ctx.keys, nodes = ctx.nodes, cap = cap,
        choice = ctx.initial or "classic", decisions = 0,
    }, Decider)
    local ok, err = run(d, nil)
    if not ok then error(("manage %s: %s"):format(ctx.table, err), 0) end
    return d
end

-- The replicated keys of a choice, sorted.
local function replicated(self, choice)
    if choice == "replicate" then
        local all = {}
        for k = 0, self.keys - 1 do all[k + 1] = k end
        return all
    end
    if type(choice) == "table" then return choice.replicate end
    return {}
end

-- d:decide(obs) -> choice, why. obs: epoch, expected (M.expected or a list),
-- observed (M.observed), each may be nil; the script also gets table, keys,
-- nodes, cap, current and replicated. When it fails or returns garbage the
-- previous choice comes back with why = "manage T: SCRIPT[:LINE]: what;
-- keeping the previous choice (LABEL)".
function Decider:decide(obs)
    obs = obs or {}
    local expected, err = obs.expected, nil
    if expected ~= nil and expected.top == nil then expected, err = M.expected(expected, self.keys, self.cap) end
    if err then return self.choice, ("manage %s: %s; keeping the previous choice (%s)"):format(
        self.table, err, M.label(self.choice)) end
    local input = {
        table = self.table, keys = self.keys, nodes = self.nodes, cap = self.cap,
        epoch = obs.epoch, expected = expected, observed = obs.observed,
        current = self.choice, replicated = replicated(self, self.choice),
        relocated = type(self.choice) == "table" and type(self.choice.relocate) == "table" and self.choice.relocate or {},
    }
    local res, err = run(self, input)
    local choice
    if res then
        choice, err = M.check_choice(res.out, self.keys, self.cap)
        if not choice then err = ("%s: decide %s"):format(self.shown, err) end
    end
    if not choice then
        return self.choice, ("manage %s: %s; keeping the previous choice (%s)"):format(
            self.table, err, M.label(self.choice))
    end
    self.choice = choice
    self.decisions = self.decisions + 1
    return choice
end

return M
