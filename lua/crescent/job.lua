-- crescent.job: a job as the job script on the scheduler drives it:
-- cr.job{...}, job:table, job:model, job:policy, job:call, job:epoch,
-- job:stats, job:log, job:close (job:save and job:load: crescent.checkpoint).
-- The C half is crescent.core.ps (src/lua/l_ps.c); worker-side code is
-- src/lua/l_worker.c.
--
-- The library sets no globals. M.current() is the most recently opened job
-- that is still open; a host that wants a global `job` sets it itself (the
-- REPL: crescent.repl's sync_job, before each line).
local core = require "crescent.core"
local home = require "crescent.home"
local policy = require "crescent.policy"
local metrics = require "crescent.metrics"
local initializers, optimizers = require "crescent.initializers", require "crescent.optimizers"
local tables = require "crescent.table"
local checkpoint = require "crescent.checkpoint"
local sampling = require "crescent.sampling"
local nodes_of = require "crescent.nodes"
local cps = core.ps

local Job = {}
Job.__index = Job

-- quiet = true: no progress bar on stderr (crescent.ps forwards its own
-- `quiet` field here).
local M = { Job = Job, quiet = false }

-- Open jobs, by opening order. The latest is held strongly (it is the one a
-- REPL works with after the job script's locals are gone); the others only
-- while something else holds them.
local open_jobs = setmetatable({}, { __mode = "k" })
local latest, opened = nil, 0

local job_keys = { nodes = true, workers = true, seed = true, policy = true, consistency = true,
                   metrics = true, listen = true, spawn = true, timeout = true, join_timeout = true,
                   memory_mb = true, sampling = true }

-- Refuse an unwritable metrics file now, not after the first epoch's work.
local function check_metrics(path)
    if type(path) ~= "string" then error("cr.job{}: metrics must be a path", 3) end
    local f, err = io.open(path, "a")
    if not f then error(("cr.job{}: metrics file %s"):format(home.open_error(path, err)), 3) end
    f:close()
end

local function check_options(o)
    if type(o) ~= "table" then error("cr.job{...}: table expected", 3) end
    for k in pairs(o) do
        if not job_keys[k] then error(("cr.job{}: unknown option '%s'"):format(tostring(k)), 3) end
    end
end

-- cr.job{nodes=, workers=, seed=, policy= | consistency=, sampling=, metrics=, listen=, spawn=, memory_mb=}
-- Command-line values (crescent run --nodes ...) override the script's.
function M.new(o)
    o = o or {}
    check_options(o)
    local ov = cps.overrides()
    local function pick(k, dflt)
        if ov and ov[k] ~= nil then return ov[k] end
        if o[k] ~= nil then return o[k] end
        return dflt
    end
    local nodes, workers, seed = pick("nodes", 1), pick("workers", 1), pick("seed", 1)
    for k, v in pairs { nodes = nodes, workers = workers, seed = seed } do
        if math.type(v) ~= "integer" then error(("cr.job{}: %s must be an integer"):format(k), 2) end
    end
    local pname, popts = policy.choose(ov and ov.policy, pick("policy", o.consistency), 2)
    local ppath, psrc = policy.source(pname)
    policy.check(ppath, psrc, popts)
    local splan
    local sspec = pick("sampling", nil)
    if sspec ~= nil then
        local ok, sn, so = pcall(sampling.describe, sspec, nil, 1)
        if ok then ok, splan = pcall(sampling.plan, sn, so) else splan = sn end
        if not ok then error("cr.job{}: sampling: " .. tostring(splan), 2) end
    end
    local mem = o.memory_mb
    if mem ~= nil and (math.type(mem) ~= "integer" or mem < 1 or mem > 1048576) then
        error("cr.job{}: memory_mb must be an integer in [1, 1048576] (MB per worker Lua state)", 2)
    end
    local mpath = pick("metrics", nil)
    if mpath ~= nil then check_metrics(mpath) end
    local ok, rt = pcall(cps.start, nodes_of.start_options(o, ov, nodes, workers, seed))
    if not ok then error(rt, 2) end
    local job = setmetatable({
        rt = rt, nodes = rt:nodes(), workers = workers, seed = seed, tables = {}, ntables = 0,
        metrics = mpath, epochs = 0, memory_mb = mem, dists = {},
        curve = {}, -- one record per finished epoch (job:epoch, then job:log merges into it)
        state = {}, -- the script's own resume state (plain data), saved and restored with the job
        _ck = require("crescent.restart").settings(ov), -- crescent run --checkpoint
    }, Job)
    opened = opened + 1
    open_jobs[job], latest = opened, job
    job:_send_policy(pname, popts, ppath, psrc)
    job.sampling_name = sampling.default
    if splan then job:_send_sampling(splan) end
    return job
end

-- The most recently opened job that is still open, or nil.
function M.current()
    if latest and not latest.rt:closed() then return latest end
    local best, seq = nil, -1
    for j, n in pairs(open_jobs) do
        if n > seq and not j.rt:closed() then best, seq = j, n end
    end
    return best
end

function Job:_check()
    if self.rt:closed() then error("the job is closed", 3) end
end

-- Run f(...) on the runtime and re-raise a failure's message as is (it
-- names worker, script and line). A worker's error leaves the job usable
-- (every worker has answered: at a REPL the user can go on); a dead node
-- ends it.
function Job:_guard(f, ...)
    local r = table.pack(pcall(f, self.rt, ...))
    if not r[1] then
        if self.rt:failed() then
            M.lost_node = true -- crescent run --restarts runs the script again
            local ov = cps.overrides() -- under a launcher, its ranks join the next run
            self.rt:close(ov and ov.world and ov.restarts and true or false)
            self:close()
        end
        error(r[2], 0)
    end
    return table.unpack(r, 2, r.n)
end

-- A job with workers = 0 holds tables only: running a model on it is the
-- script's mistake, reported at the script's line (level: for error()).
function Job:_need_workers(what, level)
    if self.workers == 0 then
        error(("job:%s: this job has no workers (workers = 0): it holds tables but runs no model"):format(what),
              (level or 1) + 1)
    end
end

function Job:_send_policy(name, opts, path, src)
    self.rt:policy(src, home.display(path), cps.serialize(opts))
    self.policy_name, self.policy_opts = name, opts
end

-- job:policy("ssp", {staleness = 2}) or job:policy("ssp:staleness=2") or a file path.
-- Takes effect at each worker's next clock boundary.
function Job:policy(name, opts)
    self:_check()
    if type(name) ~= "string" then error("job:policy(name, opts): name expected", 2) end
    if opts == nil then name, opts = policy.parse(name) end
    local path, src = policy.source(name)
    policy.check(path, src, opts)
    self:_send_policy(name, opts, path, src)
end

local table_keys = { name = true, keys = true, dim = true, init = true, optimizer = true, compress = true,
                     manage = true, frequencies = true, dtype = true, placement = true, filters = true }

local function check_table(self, o)
    if type(o) ~= "table" then error("job:table{...}: table expected", 3) end
    for k in pairs(o) do
        if not (table_keys[k] or optimizers.takes(o, k, table_keys)) then error(optimizers.unknown_option(k), 3) end
    end
    if type(o.name) ~= "string" or o.name == "" then error("job:table{}: name (string) required", 3) end
    if self.tables[o.name] then error(("job:table{}: table '%s' already exists"):format(o.name), 3) end
    if o.keys ~= "sparse" and (math.type(o.keys) ~= "integer" or o.keys <= 0) then
        error(type(o.keys) ~= "string" and "job:table{}: keys must be a positive integer"
            or ("job:table{}: keys must be a positive integer or \"sparse\", got %q"):format(o.keys), 3)
    end
    if math.type(o.dim) ~= "integer" or o.dim <= 0 then error("job:table{}: dim must be a positive integer", 3) end
    local init = o.init or initializers.zeros()
    local okopt, opt = pcall(optimizers.table_optimizer, o, table_keys)
    if not okopt then error(opt, 3) end
    if type(init) ~= "table" or not init.kind then error("job:table{}: init must come from cr.init", 3) end
    local ok, err = pcall(tables.check_dtype, o, init, opt)
    if not ok then error(err, 3) end
    local okf, filt = pcall(tables.parse_filters, o, opt)
    if not okf then error(filt, 3) end
    local okp, pl = pcall(tables.placement, o, self.nodes)
    if not okp then error(pl, 3) end
    return init, opt, pl, filt
end

-- job:table{name=, keys=, dim=, init=cr.init.normal(0, 0.1), optimizer=cr.optim.sgd{lr=} (or its name),
--            dtype="f32"|"i32" (int32 counts: optimizer add (default) or assign, init zeros or constant),
--            placement="range"|"hash"|a placement file's path (docs/placement.md),
--            manage="classic"|"relocate"|"replicate"|{replicate=keys, relocate=keys|"rest", classic="rest"}
--                   |"auto"|"nups"|a decision script (docs/management.md),
--            frequencies={expected accesses of key k at [k + 1]} (for decision scripts),
--            filters={key_cache=true, zeros=true, sigmod=threshold} (docs/filters.md; all off by default)}
function Job:table(o)
    self:_check()
    local init, opt, pl, filt = check_table(self, o)
    local probe = { keys = o.keys, name = o.name, nodes = self.nodes }
    local decider
    if o.manage ~= nil then
        local what = "job:table{}: manage"
        local ok, r = pcall(tables.parse_manage, probe, o.manage, what)
        if ok and r.script then ok, r = pcall(tables.decider, probe, o.manage, what) decider = r end
        if not ok then error(r, 2) end
    end
    local freq
    if o.frequencies ~= nil then
        local okf, e = pcall(tables.Table._expect, probe, o.frequencies, "job:table{}: frequencies")
        if not okf then error(e, 2) end
        freq = probe.expected
    end
    local def = {
        name = o.name, keys = o.keys, dim = o.dim, init = init.kind, a = init.a, b = init.b,
        seed = self.seed, compress = o.compress and 1 or 0, dtype = o.dtype or "f32", placement = pl, optimizer = opt,
    }
    for k, v in pairs(filt) do def[k] = v end
    if o.keys == "sparse" then
        def.keys, def.sparse, def.sparse_placement = 0, true, o.placement or "hash"
    end
    local id = self.ntables
    -- a node that cannot make its shard (memory) leaves the tables out of
    -- step across nodes: the job cannot go on
    local ok, err = pcall(self.rt.table, self.rt, id, def)
    if not ok then
        self:close()
        error(err, 2)
    end
    self.ntables = id + 1
    local t = tables.new(self, id, o, opt, optimizers.rate(opt), pl)
    t.manage_label, t.choice, t.expected = "classic", "classic", freq
    if o.manage ~= nil then
        local ok2, err2 = pcall(t._manage, t, o.manage, "job:table{}: manage", decider)
        if not ok2 then error(err2, 2) end
    end
    self.tables[o.name] = t
    self.tables[#self.tables + 1] = t
    if Job[o.name] == nil then rawset(self, o.name, t) end
    return t
end

-- job:model("mf", opts): a name is lua/models/<name>.lua under the home
-- directory; anything with a "/" or ending in .lua is a path.
function Job:model(name, opts)
    self:_check()
    if type(name) ~= "string" then error("job:model(name, opts): name expected", 2) end
    self:_need_workers("model", 2)
    local path = home.resolve(name, "lua/models")
    local src, err = home.read_file(path)
    if not src then error(("job:model: cannot read model '%s': %s"):format(name, err), 2) end
    opts = opts or {}
    if self.memory_mb and type(opts) == "table" and opts.memory_mb == nil then
        local o = { memory_mb = self.memory_mb } -- the job's cap for every worker's state
        for k, v in pairs(opts) do o[k] = v end
        opts = o
    end
    local ok, s = pcall(cps.serialize, opts)
    if not ok then error("job:model: options " .. s, 2) end
    self.model_name = home.display(path)
    self:_guard(self.rt.model, src, home.display(path), s)
end

-- job:log{...}: one JSON line in the metrics file (no-op without one). A
-- record whose epoch is the last finished epoch also goes into that epoch's
-- record of the learning curve (job.curve, saved by job:save), file or not.
-- A write error (full disk, /dev/full) raises, naming the file.
function Job:log(t)
    if type(t) ~= "table" then error("job:log(table): table expected", 2) end
    local rec = {}
    for k, v in pairs(t) do rec[k] = v end
    if rec.policy == nil then rec.policy = self.policy_name end
    local last = self.curve[#self.curve]
    if last and rec.epoch == last.epoch then
        for k, v in pairs(rec) do last[k] = v end
    end
    if not self.metrics then return end
    local ok, err = pcall(metrics.append, self.metrics, rec)
    if not ok then error("job:log: " .. err, 2) end
end

function Job:close()
    if not self.rt:closed() then self.rt:close() end
    open_jobs[self] = nil
    if latest == self then latest = nil end
end

function M.close_all()
    local all = {}
    for j in pairs(open_jobs) do all[#all + 1] = j end
    for _, j in ipairs(all) do j:close() end
end

require("crescent.epoch").install(Job, M)
checkpoint.install(Job)
sampling.install(Job)
-- job:load around replicated keys, a distribution's weights for decision
-- scripts
require("crescent.manage_job").install(Job)
require("crescent.restart").install(Job) -- crescent run --checkpoint, --restarts
-- true if a job lost a node (crescent run --restarts runs the script again)
function M.any_failed() return M.lost_node == true end
return M
