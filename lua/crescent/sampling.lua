-- crescent.sampling: sampling distributions and schemes as a job script
-- names them (docs/sampling.md).
--
--   job:distribution{ name = "neg", table = "E", kind = "uniform" }
--   job:distribution{ name = "neg", table = "E", kind = "weights", weights = W }
--
-- W: a Lua array of numbers, a crescent Matrix (any shape, rows * cols =
-- keys) or an Ints, one weight per key of the table (key k is entry k + 1),
-- finite, >= 0, with a positive sum. Every node builds its alias tables once
-- (all keys, and its own slice for level 4); its workers share them.
local core = require "crescent.core"
local home = require "crescent.home"
local policy = require "crescent.policy"

local M = {}

-- The schemes shipped in configs/sampling (docs/sampling.md).
M.shipped = { "conform", "bounded", "longterm", "local" }
M.default = "conform"

local LEVELS = { conform = 1, bounded = 2, longterm = 3, ["local"] = 4 }
local LEVEL_NAMES = { "conform", "bounded", "longterm", "local" }
local CONF_KEYS = { level = true, pool = true, reuse = true, postpone = true }
local POOL_MAX = 1 << 24

-- Any accepted form of a scheme -> name, opts: "bounded:pool=100",
-- ("bounded", {pool = 100}), {"bounded", pool = 100}, or a .lua path.
function M.describe(spec, opts, level)
    local name, o = policy.spec(spec, opts, "sampling scheme", "bounded:pool=100", (level or 1) + 1)
    return name, o -- not a tail call: the error level counts this frame
end

-- A scheme name or path -> path, source; an unknown name lists the shipped ones.
function M.source(name)
    local path = home.resolve(name, "configs/sampling")
    local src, err = home.read_file(path)
    if src then return path, src end
    if name:find("/", 1, true) or name:match("%.lua$") then
        error(("sampling scheme file %s"):format(err), 0)
    end
    error(("unknown sampling scheme '%s' (known: %s; or the path of a .lua scheme file)")
        :format(name, table.concat(M.shipped, ", ")), 0)
end

-- "bounded:pool=100,reuse=4" from a name and options (keys sorted).
local function label(name, opts)
    local ks = {}
    for k in pairs(opts) do ks[#ks + 1] = tostring(k) end
    table.sort(ks)
    local parts = {}
    for _, k in ipairs(ks) do parts[#parts + 1] = k .. "=" .. tostring(opts[k]) end
    local l = #parts > 0 and (name .. ":" .. table.concat(parts, ",")) or name
    return #l > 255 and l:sub(1, 255) or l
end

-- One configuration (the scheme's, or one of its per-distribution or
-- per-table entries) checked and completed from base -> an entry.
local function entry(where, c, base, bad)
    if type(c) ~= "table" then bad(("%s must be a table"):format(where)) end
    for k in pairs(c) do
        if not CONF_KEYS[k] then
            bad(("%s has an unknown field '%s' (level, pool, reuse, postpone)"):format(where, tostring(k)))
        end
    end
    local e = { level = base.level, pool = base.pool, reuse = base.reuse, postpone = base.postpone }
    if c.level ~= nil then
        e.level = LEVELS[c.level] or (math.type(c.level) == "integer" and LEVEL_NAMES[c.level] and c.level)
        if not e.level then
            bad(("%s: level must be conform, bounded, longterm, local or 1-4 (got %s)"):format(where, tostring(c.level)))
        end
        if c.postpone == nil then e.postpone = 0 end
    end
    for _, k in ipairs { "pool", "reuse" } do
        if c[k] ~= nil then
            if math.type(c[k]) ~= "integer" or c[k] < 1 or c[k] > POOL_MAX then
                bad(("%s: %s must be an integer in [1, %d] (got %s)"):format(where, k, POOL_MAX, tostring(c[k])))
            end
            e[k] = c[k]
        end
    end
    if c.postpone ~= nil then
        if type(c.postpone) ~= "boolean" then bad(("%s: postpone must be true or false"):format(where)) end
        e.postpone = c.postpone and 1 or 0
    end
    if e.postpone == 1 and e.level ~= 3 then
        bad(("%s: postpone needs level longterm (3): it breaks level %s"):format(where, LEVEL_NAMES[e.level]))
    end
    return e
end

-- Entries for the C sampling manager from a scheme's configuration: the
-- default first, then one per name in c.distributions and c.tables.
local function entries(c, bad)
    local list = {}
    local top = {}
    for k, v in pairs(c) do
        if k ~= "distributions" and k ~= "tables" then top[k] = v end
    end
    local dflt = { level = 1, pool = 250, reuse = 16, postpone = 0 }
    list[1] = entry("the configuration", top, dflt, bad)
    list[1].name = ""
    for _, field in ipairs { "distributions", "tables" } do
        local per = c[field]
        if per ~= nil then
            if type(per) ~= "table" then bad(("%s must be a table {name = {...}}"):format(field)) end
            local names = {}
            for name in pairs(per) do
                if type(name) ~= "string" or name == "" or #name > 63 then
                    bad(("%s: names must be strings of 1 to 63 bytes"):format(field))
                end
                names[#names + 1] = name
            end
            table.sort(names)
            for _, name in ipairs(names) do
                local e = entry(("%s.%s"):format(field, name), per[name], list[1], bad)
                e.name = name
                list[#list + 1] = e
            end
        end
    end
    if #list > 256 then bad("more than 255 distribution and table entries") end
    return list
end

-- Run a scheme (name or path, options) in the sandbox and check what it
-- configures -> {label =, path =, entries = {...}}. Raises a one-line
-- message naming the script (and its line, for an error in it).
function M.plan(name, opts)
    local path, src = M.source(name)
    local shown = home.display(path)
    local c, err = core.sandbox.run_scheme(src, shown, opts or {})
    if not c then error(tostring(err), 0) end
    local function bad(msg) error(("bad sampling scheme %s: %s"):format(shown, msg), 0) end
    local list = entries(c, bad)
    local is_file = name:find("/", 1, true) or name:match("%.lua$")
    return { label = label(is_file and shown or name, opts or {}), entries = list }
end

-- job:sampling(name [, opts]): switch the sampling scheme. Each worker
-- takes it at its next prepare_sample; handles prepared before are served
-- as they were prepared (docs/sampling.md).
local function sampling(self, name, opts)
    self:_check()
    local ok, n, o = pcall(M.describe, name, opts, 1)
    if not ok then error("job:sampling: " .. n, 2) end
    local ok2, plan = pcall(M.plan, n, o)
    if not ok2 then error("job:sampling: " .. tostring(plan), 2) end
    self:_send_sampling(plan)
end

local dist_keys = { name = true, table = true, kind = true, weights = true }
local NAME_MAX = 63

local function check_dist(job, o)
    local function bad(msg) error("job:distribution{}: " .. msg, 4) end
    if type(o) ~= "table" then error("job:distribution{...}: table expected", 3) end
    for k in pairs(o) do
        if not dist_keys[k] then bad(("unknown option '%s'"):format(tostring(k))) end
    end
    if type(o.name) ~= "string" or o.name == "" or #o.name > NAME_MAX or o.name:find("%z") then
        bad(("name must be a non-empty string of at most %d bytes"):format(NAME_MAX))
    end
    if job.dists[o.name] then bad(("distribution '%s' already exists"):format(o.name)) end
    if type(o.table) ~= "string" then bad("table (the name of a table of the job) required") end
    local t = job.tables[o.table]
    if not t then
        local names = {}
        for _, x in ipairs(job.tables) do names[#names + 1] = x.name end
        bad(("unknown table '%s' (the job has: %s)"):format(o.table,
            #names > 0 and table.concat(names, ", ") or "no tables"))
    end
    if t.dtype == "i32" then bad(("table '%s' holds i32 counts; sampling is for f32 tables"):format(o.table)) end
    if o.kind ~= "uniform" and o.kind ~= "weights" then
        bad(("kind must be \"uniform\" or \"weights\" (got %s)"):format(tostring(o.kind)))
    end
    if o.kind == "uniform" and o.weights ~= nil then bad("a uniform distribution takes no weights") end
    if o.kind == "weights" and o.weights == nil then bad("kind = \"weights\" needs weights = {...}") end
    return t
end

local function distribution(self, o)
    self:_check()
    local t = check_dist(self, o)
    local ok, err = pcall(self.rt.distribution, self.rt, t.id, o.name, t.keys,
                          o.kind == "weights" and o.weights or nil)
    if not ok then
        if self.rt:failed() then self:close() end
        error(("job:distribution{}: '%s' over table '%s': %s"):format(o.name, o.table, tostring(err)), 2)
    end
    self.dists[o.name] = { name = o.name, table = o.table, kind = o.kind }
end

local COUNTERS = { "drawn", "served_local", "served_pooled", "remote", "reused", "postponed" }
M.counters = COUNTERS

-- Add distribution and sampling to Job, and the sampling totals to
-- job:stats() (installed after crescent.epoch's stats): st.sampling sums
-- the nodes' st.nodes[i].sampling; st.scheme names the scheme.
function M.install(Job)
    Job.distribution = distribution
    Job.sampling = sampling
    local node_stats = Job.stats
    function Job:stats()
        local st = node_stats(self)
        local sum = {}
        for _, k in ipairs(COUNTERS) do sum[k] = 0 end
        for _, n in ipairs(st.nodes) do
            for _, k in ipairs(COUNTERS) do sum[k] = sum[k] + (n.sampling and n.sampling[k] or 0) end
        end
        st.sampling, st.scheme = sum, self.sampling_name
        return st
    end
    function Job:_send_sampling(plan)
        self:_guard(self.rt.sampling, plan.label, plan.entries)
        self.sampling_name = plan.label
    end
end

return M
