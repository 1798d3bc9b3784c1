-- crescent.checkpoint: job:save and job:load (tables, and the resume state
-- of version 2 files, see docs/checkpoints.md). Installed into the Job class
-- by crescent.job.
local core = require "crescent.core"
local policy = require "crescent.policy"
local metrics = require "crescent.metrics"
local cps, place = core.ps, core.table

local M = {}

local CHUNK = 16384 -- rows per transfer: memory stays bounded whatever the table size

-- The job's resume state, as checkpoint metadata: what job:load needs so
-- that the next job:epoch() is the one the saving run would have run next.
local function resume_meta(self)
    local lr, clocks = {}, {}
    for _, t in ipairs(self.tables) do lr[t.name] = t.lr end
    for _, w in ipairs(self:stats().workers) do
        clocks[#clocks + 1] = { worker = w.worker, clock = w.clock, barriers = w.barriers }
    end
    local ok, state = pcall(cps.serialize, self.state)
    if not ok then error("job.state " .. state, 0) end
    return {
        { "crescent.nodes", tostring(self.nodes) },
        { "crescent.workers", tostring(self.workers) },
        { "crescent.seed", tostring(self.seed) },
        { "crescent.policy", tostring(self.policy_name) },
        { "crescent.policy_opts", cps.serialize(self.policy_opts or {}) },
        { "crescent.epochs", tostring(self.epochs) },
        { "crescent.curve", metrics.curve_text(self.curve) },
        { "crescent.lr", cps.serialize(lr) },
        { "crescent.clocks", cps.serialize(clocks) },
        { "crescent.state", state },
    }
end

-- A sparse table: the rows each node stores (their count from the nodes'
-- stats first: the file's table header gives it), each row's key in the
-- first two state columns (ps/cr_ckpt.h, CR_CKPT_SPARSE).
local function save_sparse(self, w, t)
    local total = 0
    for _, n in ipairs(self:stats().nodes) do total = total + ((n.sparse or {})[t.name] or { rows = 0 }).rows end
    w:table(t.name, total, t.dim, t.optimizer, t.sdim + 2, t.dtype, true)
    for node = 0, self.nodes - 1 do
        local cursor = 0
        repeat
            local keys, v, st, nxt = self:_guard(self.rt.dump, t.id, node, cursor, CHUNK, t.dim, t.sdim, t.dtype)
            if #keys > 0 then w:rows(v, place.keyed_state(keys, st)) end
            cursor = nxt
        until cursor < 0
    end
end

-- job:save(path): every table (values and optimizer state), gathered node by
-- node in key order, and the job's resume state (epoch counter, learning
-- curve, learning rates, seed, policy, clocks, job.state) into one
-- checkpoint file (written to path.tmp, fsync'd, renamed). Returns true, or
-- raises.
function M.save(self, path)
    self:_check()
    if type(path) ~= "string" then error("job:save(path): path expected", 2) end
    local okm, meta = pcall(resume_meta, self)
    if not okm then error("job:save: " .. meta, 2) end
    local w, err = cps.ckpt_writer(path)
    if not w then error("job:save: " .. err, 2) end
    local ok, e = pcall(function()
        for _, kv in ipairs(meta) do w:meta(kv[1], kv[2]) end
        for _, t in ipairs(self.tables) do
            if t.sparse then
                save_sparse(self, w, t)
            else
            w:table(t.name, t.keys, t.dim, t.optimizer, t.sdim, t.dtype)
            if t.pl then -- rows by key, whatever the placement
                t:each_chunk(CHUNK, function(k, n) w:rows(t:_chunk_rows(k, n)) end)
            else
                t:each_run(CHUNK, function(node, k, n) w:rows(t:_rows(node, k, n)) end)
            end
            end
        end
        w:commit()
    end)
    if not ok then
        w:abort()
        -- a writer's error (a full disk) is positioned at this file's line: name the caller's instead
        e = tostring(e):gsub("^[^\n]-crescent/checkpoint%.lua:%d+: ", "")
        error(e:find("^job:save") and e or "job:save: " .. e, 2)
    end
    return true
end

-- A sparse table's rows (r at its table: info.keys of them stored): each
-- chunk split by the node of each key; rows_of(t, node, keys, values, state).
local function load_sparse(r, t, rows_of, stored)
    local left = stored
    while left > 0 do
        local n = math.min(CHUNK, left)
        local v, ks = r:rows(n, t.dim, t.sdim + 2, t.dtype)
        for i, part in pairs(place.sparse_parts(t.placement, t.nodes, v, ks)) do
            rows_of(t, i - 1, part[1], part[2], part[3])
        end
        left = left - n
    end
end

-- Every table of the file, checked against the job's; rows_of(t, node, k,
-- values, state) gets the rows in runs that never cross a node of this job.
local function each_table(path, r, tables, rows_of)
    while true do
        local info = r:next_table()
        if not info then return end
        local t = tables[info.name]
        if not t then error(("%s: table '%s' is not part of this job"):format(path, info.name), 0) end
        if info.sparse ~= (t.sparse or false) then
            error(("%s: table '%s' is %s in the file, the job's is %s"):format(path, info.name,
                info.sparse and "sparse" or "dense", t.sparse and "sparse" or "dense"), 0)
        end
        local stored = info.keys
        if t.sparse then
            if info.dim ~= t.dim then
                error(("%s: table '%s' has dim %d, the job's has %d"):format(path, info.name, info.dim, t.dim), 0)
            end
            info.keys, info.state_dim = t.keys, info.state_dim - 2
        end
        if info.keys ~= t.keys or info.dim ~= t.dim then
            error(("%s: table '%s' has %d keys x dim %d, the job's has %d x %d"):format(
                path, info.name, info.keys, info.dim, t.keys, t.dim), 0)
        end
        if info.dtype ~= t.dtype then
            error(("%s: table '%s' holds %s values, the job's is dtype %s"):format(
                path, info.name, info.dtype, t.dtype), 0)
        end
        if info.state_dim ~= t.sdim then
            error(("%s: table '%s' was saved with optimizer %s, the job uses %s"):format(
                path, info.name, info.optimizer, t.optimizer), 0)
        end
        if t.sparse then
            load_sparse(r, t, rows_of, stored)
        elseif t.pl then
            t:each_chunk(CHUNK, function(k, n)
                local v, st = r:rows(n, t.dim, t.sdim, t.dtype)
                t:_each_part(k, n, v, st, function(node, id, pv, pst) rows_of(t, node, id, pv, pst) end)
            end)
        else
            t:each_run(CHUNK, function(node, k, n)
                local v, st = r:rows(n, t.dim, t.sdim, t.dtype)
                rows_of(t, node, k, v, st)
            end)
        end
    end
end

-- The learning curve's text -> records; raises through bad(key, why).
local function read_curve(text, bad)
    local curve, n = {}, 0
    for line in text:gmatch("[^\n]+") do
        n = n + 1
        local rec, err = metrics.decode(line)
        if type(rec) ~= "table" then bad("crescent.curve", ("record %d: %s"):format(n, err or "object expected")) end
        curve[n] = rec
    end
    return curve
end

local function check_resume(res, tables, bad)
    for name, lr in pairs(res.lr) do
        if not tables[name] then bad("crescent.lr", ("table '%s' is not part of this job"):format(name)) end
        if type(lr) ~= "number" or lr < 0 then bad("crescent.lr", ("table '%s': bad learning rate"):format(name)) end
    end
    for i, w in ipairs(res.clocks) do
        if type(w) ~= "table" or math.type(w.worker) ~= "integer" or math.type(w.clock) ~= "integer"
            or math.type(w.barriers) ~= "integer" or w.clock < 0 or w.barriers < 0 then
            bad("crescent.clocks", ("entry %d: {worker=, clock=, barriers=} expected"):format(i))
        end
    end
end

-- Read and check the resume state of a version 2 file (before anything is
-- changed): a table of what resume() applies. Raises "path: ..." naming
-- the bad key.
local function read_resume(path, r, tables)
    local function get(key)
        local v = r:meta(key)
        if v == nil then error(("%s: metadata %s missing"):format(path, key), 0) end
        return v
    end
    local function bad(key, why) error(("%s: bad metadata %s: %s"):format(path, key, why), 0) end
    local function int(key)
        local v = math.tointeger(tonumber(get(key)))
        if not v or v < 0 then bad(key, "not a non-negative integer") end
        return v
    end
    local function data(key, want)
        -- deserialize evaluates only plain literals (no names: it cannot loop or call)
        local ok, v = pcall(cps.deserialize, get(key))
        if not ok then bad(key, v) end
        if type(v) ~= want then bad(key, want .. " expected") end
        return v
    end
    local res = { epochs = int("crescent.epochs"), seed = int("crescent.seed"),
                  lr = data("crescent.lr", "table"), state = data("crescent.state", "table"),
                  clocks = data("crescent.clocks", "table"), policy = get("crescent.policy"),
                  policy_opts = data("crescent.policy_opts", "table"), text = get("crescent.curve") }
    res.curve = read_curve(res.text, bad)
    check_resume(res, tables, bad)
    local ppath, psrc = policy.source(res.policy)
    policy.check(ppath, psrc, res.policy_opts)
    res.policy_path, res.policy_src = ppath, psrc
    return res
end

-- Workers' clocks and barrier counts as saved: worker i gets saved worker
-- i's, and a worker the saving job did not have gets the largest saved ones
-- (clocks only matter relative to each other, and are level between epochs).
local function set_clocks(self, saved)
    local by, top_c, top_b = {}, 0, 0
    for _, w in ipairs(saved) do
        by[w.worker] = w
        top_c, top_b = math.max(top_c, w.clock), math.max(top_b, w.barriers)
    end
    local c, b = {}, {}
    for i = 1, self.nodes * self.workers do
        local w = by[i - 1]
        c[i], b[i] = w and w.clock or top_c, w and w.barriers or top_b
    end
    self:_guard(self.rt.set_clocks, c, b)
end

-- Apply a checked resume state. Returns a note (seed mismatch) or nil.
local function resume(self, path, res)
    for name, lr in pairs(res.lr) do
        local t = self.tables[name]
        if t.lr ~= lr then t:set_lr(lr) end
    end
    if res.policy ~= self.policy_name or cps.serialize(res.policy_opts) ~= cps.serialize(self.policy_opts or {}) then
        self:_send_policy(res.policy, res.policy_opts, res.policy_path, res.policy_src)
    end
    set_clocks(self, res.clocks)
    self.epochs, self.curve, self.state = res.epochs, res.curve, res.state
    local first = res.curve[1] and res.curve[1].epoch -- past 1: the curve was trimmed (crescent.epoch)
    if self.metrics then metrics.rewrite(self.metrics, res.text, type(first) == "number" and first > 1 and first or nil) end
    if res.seed ~= self.seed then
        return ("job:load: note: %s was saved by a job with seed %d, this job has seed %d: "
            .. "its epochs draw other random orders than the saved run's would have"):format(path, res.seed, self.seed)
    end
end

-- job:load(path): tables, then (version 2 files) the resume state: epoch
-- counter, learning curve (and the metrics file, rewritten to match it; a
-- metrics path that is not a regular file is refused), learning rates,
-- policy, job.state. The file is read twice: the first pass checks every
-- table against the job before any row is written, so a mismatch in a later
-- table leaves the job as it was. Returns true (and a note, also printed on
-- stderr, for a version 1 file, tables only, or a job seed that differs from
-- the saved one), or raises.
function M.load(self, path)
    self:_check()
    if type(path) ~= "string" then error("job:load(path): path expected", 2) end
    local apply = function(t, node, k, v, st) -- k: the first id, or a sparse table's keys
        local set = t.sparse and self.rt.set_keys or self.rt.set_rows
        self:_guard(set, t.id, node, k, v, t.sdim > 0 and st or nil, t.dtype)
    end
    local res, version
    for _, rows_of in ipairs { function() end, apply } do
        local r, err = cps.ckpt_reader(path)
        if not r then error("job:load: " .. err, 2) end
        local ok, e = pcall(function()
            if rows_of ~= apply then
                version = r:version()
                if version >= 2 then res = read_resume(path, r, self.tables) end
                if res and self.metrics then -- refused before any row is written
                    local okc, ce = pcall(metrics.check_target, self.metrics)
                    if not okc then error("job:load: " .. ce, 0) end
                end
            end
            each_table(path, r, self.tables, rows_of)
        end)
        r:close()
        if not ok then error(e, 2) end
    end
    local note
    if res then
        local ok, e = pcall(resume, self, path, res)
        if not ok then error("job:load: " .. e, 2) end
        if not e then return true end
        note = e
    else
        note = ("job:load: note: %s is a version %d checkpoint: tables only (no epoch counter, "
            .. "learning curve, learning rates or clocks); the job keeps its own"):format(path, version)
    end
    io.stderr:write(note, "\n")
    return true, note
end

function M.install(Job)
    Job.save, Job.load = M.save, M.load
end

return M
