-- crescent.ps: jobs, tables, initializers, optimizers and consistency
-- policies, as seen by a job script on the scheduler. The C half is
-- crescent.core.ps (src/lua/l_ps.c); worker-side code is src/lua/l_worker.c.
local core = require "crescent.core"
local cps = core.ps

local M = {}

-- Directory holding lua/, configs/ (the repository or install root).
local function find_home()
    local p = package.searchpath("crescent.ps", package.path)
    if p then
        local h = p:match("^(.*)/lua/crescent/ps%.lua$")
        if h then return h end
    end
    return os.getenv("CRESCENT_ROOT") or "."
end
M.home = find_home()

-- io.open's "PATH: reason" in the C core's wording: "PATH: cannot open: reason".
local function open_error(path, err)
    local p = path .. ": "
    if err:sub(1, #p) == p then err = err:sub(#p + 1) end
    return p .. "cannot open: " .. err
end

local function read_file(path)
    local f, err = io.open(path, "rb")
    if not f then return nil, open_error(path, err) end
    local s = f:read("a")
    f:close()
    return s
end

local function display(path)
    local h = M.home .. "/"
    if path:sub(1, #h) == h then return path:sub(#h + 1) end
    return path
end

-- Initializers and optimizers: plain descriptions, checked when a table is made.
M.init = {
    zeros = function() return { kind = 0 } end,
    uniform = function(a, b)
        assert(type(a) == "number" and type(b) == "number", "uniform(a, b): numbers expected")
        return { kind = 1, a = a, b = b }
    end,
    normal = function(mean, std)
        assert(type(mean) == "number" and type(std) == "number", "normal(mean, std): numbers expected")
        return { kind = 2, a = mean, b = std }
    end,
}

local function optimizer(name, allowed)
    return function(o)
        o = o or {}
        for k in pairs(o) do
            if not allowed[k] then error(("%s{}: unknown option '%s'"):format(name, tostring(k)), 2) end
        end
        return { name = name, lr = o.lr, eps = o.eps, init = o.init }
    end
end
M.optim = {
    sgd = optimizer("sgd", { lr = true }),
    adagrad = optimizer("adagrad", { lr = true, eps = true, init = true }),
    add = optimizer("add", {}),
    assign = optimizer("assign", {}),
}

M.kernels = core.kernels

-- Policies --------------------------------------------------------------

-- "ssp:staleness=2,x=y" -> "ssp", {staleness = 2, x = "y"}
function M.parse_policy(spec)
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
local function policy_source(name)
    local path = name
    if not (name:find("/", 1, true) or name:match("%.lua$")) then
        path = M.home .. "/configs/consistency/" .. name .. ".lua"
    end
    local src, err = read_file(path)
    if not src then
        error(("unknown consistency policy '%s' (%s)"):format(name, err), 0)
    end
    return path, src
end

-- Load and check a policy the way workers will (so a bad file fails here,
-- with its name, before anything is sent).
local function check_policy(path, src, opts)
    local chunk, err = load(src, "@" .. display(path), "t", setmetatable({}, { __index = _G }))
    if not chunk then error("bad policy file: " .. err, 0) end
    local ok, ctor = pcall(chunk)
    if not ok then error("bad policy file: " .. tostring(ctor), 0) end
    if type(ctor) ~= "function" then
        error(("bad policy file %s: must return a constructor function(opts)"):format(display(path)), 0)
    end
    local ok2, pol = pcall(ctor, opts)
    if not ok2 then error("bad policy file: " .. tostring(pol), 0) end
    if type(pol) ~= "table" or type(pol.may_proceed) ~= "function" then
        error(("bad policy file %s: the constructor must return a table with may_proceed(my_clock, min_clock, clocks)")
            :format(display(path)), 0)
    end
end

-- cr.policy("ssp", {staleness = 2}) -> a policy description for cr.job{consistency = ...}
function M.policy(name, opts)
    return { name = name, opts = opts or {} }
end

local function policy_desc(p)
    if p == nil then return "bsp", {} end
    if type(p) == "string" then return M.parse_policy(p) end
    if type(p) == "table" then
        if p.name then return p.name, p.opts or {} end
        local opts = {}
        for k, v in pairs(p) do if k ~= 1 then opts[k] = v end end
        return p[1], opts
    end
    error("policy must be a name, {name, key = value} or cr.policy(name, opts)", 3)
end

-- JSON (for the metrics file) ---------------------------------------------

local function json(v)
    local t = type(v)
    if t == "number" then
        if v ~= v or v == math.huge or v == -math.huge then return "null" end
        if math.type(v) == "integer" then return tostring(v) end
        return string.format("%.17g", v)
    elseif t == "string" then
        return '"' .. v:gsub('[%c"\\]', function(c)
            return string.format("\\u%04x", c:byte())
        end) .. '"'
    elseif t == "boolean" then
        return tostring(v)
    elseif t == "table" then
        if #v > 0 or next(v) == nil then
            local out = {}
            for i = 1, #v do out[i] = json(v[i]) end
            return "[" .. table.concat(out, ",") .. "]"
        end
        local keys = {}
        for k in pairs(v) do keys[#keys + 1] = tostring(k) end
        table.sort(keys)
        local out = {}
        for _, k in ipairs(keys) do
            local x = v[k]
            if x == nil then x = v[tonumber(k)] end
            out[#out + 1] = json(k) .. ":" .. json(x)
        end
        return "{" .. table.concat(out, ",") .. "}"
    end
    return "null"
end
M.json = json

-- Decode one JSON text (what json() writes: objects, arrays, strings,
-- numbers, true/false/null; null becomes nil). Returns the value, or nil and
-- a message naming the byte offset.
local JSON_ESC = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
local JSON_WORDS = { ["true"] = true, ["false"] = false }

local function json_decode(s)
    local pos = 1
    local function fail(what) error(("%s at byte %d"):format(what, pos), 0) end
    local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
    local value
    local function str()
        local out, i = {}, pos + 1
        while true do
            local c = s:sub(i, i)
            if c == "" then fail("unterminated string") end
            if c == '"' then break end
            if c == "\\" then
                local n = s:sub(i + 1, i + 1)
                if n == "u" then
                    local hex = s:sub(i + 2, i + 5)
                    if not hex:match("^%x%x%x%x$") then fail("bad \\u escape") end
                    out[#out + 1] = utf8.char(tonumber(hex, 16))
                    i = i + 6
                elseif JSON_ESC[n] then
                    out[#out + 1] = JSON_ESC[n]
                    i = i + 2
                else
                    fail("bad escape")
                end
            else
                out[#out + 1] = c
                i = i + 1
            end
        end
        pos = i + 1
        return table.concat(out)
    end
    local function seq(close, item)
        pos = pos + 1
        ws()
        if s:sub(pos, pos) == close then pos = pos + 1 return end
        while true do
            item()
            ws()
            local c = s:sub(pos, pos)
            pos = pos + 1
            if c == close then return end
            if c ~= "," then pos = pos - 1 fail("',' or '" .. close .. "' expected") end
            ws()
        end
    end
    value = function()
        ws()
        local c = s:sub(pos, pos)
        if c == "{" then
            local t = {}
            seq("}", function()
                if s:sub(pos, pos) ~= '"' then fail("key expected") end
                local k = str()
                ws()
                if s:sub(pos, pos) ~= ":" then fail("':' expected") end
                pos = pos + 1
                t[k] = value()
            end)
            return t
        elseif c == "[" then
            local t = {}
            seq("]", function() t[#t + 1] = value() end)
            return t
        elseif c == '"' then
            return str()
        end
        local word = s:match("^%a+", pos)
        if word == "null" or JSON_WORDS[word] ~= nil then
            pos = pos + #word
            return JSON_WORDS[word]
        end
        local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
        if not num or num == "" or not tonumber(num) then fail("value expected") end
        pos = pos + #num
        return math.tointeger(tonumber(num)) or tonumber(num)
    end
    local ok, v = pcall(function()
        local v = value()
        ws()
        if pos <= #s then fail("unexpected data") end
        return v
    end)
    if not ok then return nil, v end
    return v
end
M.json_decode = json_decode

-- Jobs --------------------------------------------------------------------

local Job = {}
Job.__index = Job
local Table = {}
Table.__index = Table

local open_jobs = setmetatable({}, { __mode = "k" })

local job_keys = { nodes = true, workers = true, seed = true, policy = true, consistency = true,
                   metrics = true, listen = true, spawn = true, timeout = true, join_timeout = true }

-- cr.job{nodes=, workers=, seed=, policy= | consistency=, metrics=, listen=, spawn=}
-- Command-line values (crescent run --nodes ...) override the script's.
function M.job(o)
    o = o or {}
    if type(o) ~= "table" then error("cr.job{...}: table expected", 2) end
    for k in pairs(o) do
        if not job_keys[k] then error(("cr.job{}: unknown option '%s'"):format(tostring(k)), 2) end
    end
    local ov = cps.overrides()
    local function pick(k, dflt)
        if ov and ov[k] ~= nil then return ov[k] end
        if o[k] ~= nil then return o[k] end
        return dflt
    end
    local env_listen, env_spawn = os.getenv("CRESCENT_LISTEN"), os.getenv("CRESCENT_SPAWN")
    local nodes, workers, seed = pick("nodes", 1), pick("workers", 1), pick("seed", 1)
    for k, v in pairs { nodes = nodes, workers = workers, seed = seed } do
        if math.type(v) ~= "integer" then error(("cr.job{}: %s must be an integer"):format(k), 2) end
    end
    local pname, popts = policy_desc(pick("policy", o.consistency))
    local ppath, psrc = policy_source(pname)
    check_policy(ppath, psrc, popts)
    local metrics = pick("metrics", nil)
    if metrics ~= nil then -- refuse an unwritable metrics file now, not after the first epoch's work
        if type(metrics) ~= "string" then error("cr.job{}: metrics must be a path", 2) end
        local f, err = io.open(metrics, "a")
        if not f then error(("cr.job{}: metrics file %s"):format(open_error(metrics, err)), 2) end
        f:close()
    end
    local spawn = pick("spawn", true)
    if env_spawn then spawn = env_spawn ~= "0" end
    local exe
    if not ov then exe = os.getenv("CRESCENT_BIN") or (M.home .. "/crescent") end
    local ok, rt = pcall(cps.start, {
        nodes = nodes, workers = workers, seed = seed,
        listen = env_listen or o.listen, spawn = spawn and 1 or 0, exe = exe,
        exit_on_death = ov and 1 or 0, timeout = o.timeout, join_timeout = o.join_timeout,
    })
    if not ok then error(rt, 2) end
    local job = setmetatable({
        rt = rt, nodes = nodes, workers = workers, seed = seed, tables = {}, ntables = 0,
        metrics = metrics, epochs = 0,
        curve = {}, -- one record per finished epoch (job:epoch, then job:log merges into it)
        state = {}, -- the script's own resume state (plain data), saved and restored with the job
    }, Job)
    open_jobs[job] = true
    job:_send_policy(pname, popts, ppath, psrc)
    rawset(_G, "job", job)
    return job
end

function Job:_check()
    if self.rt:closed() then error("the job is closed", 3) end
end

-- Run f(...) on the runtime and re-raise a failure's message as is (it
-- names worker, script and line). A worker's error leaves the job usable
-- (every worker has answered: at a REPL the user can go on); a dead node
-- ends it.
function Job:_guard(f, ...)
    local ok, a, b = pcall(f, self.rt, ...)
    if not ok then
        if self.rt:failed() then self:close() end
        error(a, 0)
    end
    return a, b
end

function Job:_send_policy(name, opts, path, src)
    self.rt:policy(src, display(path), cps.serialize(opts))
    self.policy_name, self.policy_opts = name, opts
end

-- job:policy("ssp", {staleness = 2}) or job:policy("ssp:staleness=2") or a file path.
-- Takes effect at each worker's next clock boundary.
function Job:policy(name, opts)
    self:_check()
    if type(name) ~= "string" then error("job:policy(name, opts): name expected", 2) end
    if opts == nil then name, opts = M.parse_policy(name) end
    local path, src = policy_source(name)
    check_policy(path, src, opts)
    self:_send_policy(name, opts, path, src)
end

local table_keys = { name = true, keys = true, dim = true, init = true, optimizer = true, compress = true }

-- job:table{name=, keys=, dim=, init=cr.init.normal(0, 0.1), optimizer=cr.optim.sgd{lr=}}
function Job:table(o)
    self:_check()
    if type(o) ~= "table" then error("job:table{...}: table expected", 2) end
    for k in pairs(o) do
        if not table_keys[k] then error(("job:table{}: unknown option '%s'"):format(tostring(k)), 2) end
    end
    if type(o.name) ~= "string" or o.name == "" then error("job:table{}: name (string) required", 2) end
    if self.tables[o.name] then error(("job:table{}: table '%s' already exists"):format(o.name), 2) end
    if math.type(o.keys) ~= "integer" or o.keys <= 0 then error("job:table{}: keys must be a positive integer", 2) end
    if math.type(o.dim) ~= "integer" or o.dim <= 0 then error("job:table{}: dim must be a positive integer", 2) end
    local init = o.init or M.init.zeros()
    local opt = o.optimizer or M.optim.sgd { lr = 0.01 }
    if type(init) ~= "table" or not init.kind then error("job:table{}: init must come from cr.init", 2) end
    if type(opt) ~= "table" or not opt.name then error("job:table{}: optimizer must come from cr.optim", 2) end
    local def = {
        name = o.name, keys = o.keys, dim = o.dim, init = init.kind, a = init.a, b = init.b,
        optimizer = opt.name, lr = opt.lr or 0.01, eps = opt.eps or 1e-8, init_acc = opt.init or 0,
        seed = self.seed, compress = o.compress and 1 or 0,
    }
    local id = self.ntables
    -- a node that cannot make its shard (memory) leaves the tables out of
    -- step across nodes: the job cannot go on
    local ok, err = pcall(self.rt.table, self.rt, id, def)
    if not ok then
        self:close()
        error(err, 2)
    end
    self.ntables = id + 1
    local t = setmetatable({
        job = self, id = id, name = o.name, keys = o.keys, dim = o.dim, optimizer = opt.name,
        lr = def.lr, sdim = cps.state_dim(opt.name, o.dim),
        block = (o.keys + self.nodes - 1) // self.nodes,
    }, Table)
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
    local path = name
    if not (name:find("/", 1, true) or name:match("%.lua$")) then
        path = M.home .. "/lua/models/" .. name .. ".lua"
    end
    local src, err = read_file(path)
    if not src then error(("job:model: cannot read model '%s': %s"):format(name, err), 2) end
    local ok, s = pcall(cps.serialize, opts or {})
    if not ok then error("job:model: options " .. s, 2) end
    self.model_name = display(path)
    self:_guard(self.rt.model, src, display(path), s)
end

local function sums(results)
    local sum = {}
    for _, r in ipairs(results) do
        if type(r) == "table" then
            for k, v in pairs(r) do
                if type(v) == "number" then sum[k] = (sum[k] or 0) + v end
            end
        end
    end
    return sum
end

local function traffic(stats)
    local t = { messages = 0, bytes_remote = 0, bytes_local = 0 }
    for _, n in ipairs(stats.nodes) do
        t.messages = t.messages + n.messages_remote
        t.bytes_remote = t.bytes_remote + n.bytes_remote
        t.bytes_local = t.bytes_local + n.bytes_local
    end
    return t
end

-- job:call(name, args) -> {results = {per worker}, sum = {...}}
function Job:call(name, args)
    self:_check()
    local ok, s = pcall(cps.serialize, args or {})
    if not ok then error("job:call: arguments " .. s, 2) end
    local results = self:_guard(self.rt.call, name, s)
    return { results = results, sum = sums(results) }
end

-- job:epoch(args) -> {seconds=, results=, sum=, messages=, bytes_remote=, bytes_local=}
-- args.total (optional): items expected, for the progress bar (stderr; cr.ps quiet = true hides it).
function Job:epoch(args)
    self:_check()
    args = args or {}
    local ok, s = pcall(cps.serialize, args)
    if not ok then error("job:epoch: arguments " .. s, 2) end
    local before = traffic(self:stats())
    local items = 0
    local bar = (not M.quiet) and cps.progress(("epoch %d"):format(self.epochs + 1),
                                               math.tointeger(args.total) or 0) or nil
    local t0 = core.util.now()
    local ok, results = pcall(self._guard, self, self.rt.call, "epoch", s, function(n)
        items = items + n
        if bar then bar:add(n) end
    end)
    if not ok then
        self.epochs = self.epochs + 1 -- it ran, and failed: the next one gets the next number
        if bar then bar:done() end
        error(results, 0)
    end
    local secs = core.util.now() - t0
    if bar then bar:done() end
    local after = traffic(self:stats())
    self.epochs = self.epochs + 1
    local loss = sums(results).loss
    self.curve[#self.curve + 1] = { epoch = self.epochs, loss = loss, seconds = secs }
    local r = { seconds = secs, results = results, sum = sums(results), items = items,
                messages = after.messages - before.messages,
                bytes_remote = after.bytes_remote - before.bytes_remote,
                bytes_local = after.bytes_local - before.bytes_local }
    return r
end

-- job:stats() -> {workers = {{worker=, node=, clock=, wait=, max_gap=, pulls=, pushes=}, ...},
--                 nodes = {{node=, messages_remote=, bytes_remote=, messages_local=, bytes_local=,
--                           pulls=, pushes=, ...}, ...}, max_gap = largest over workers, policy = name}
-- A worker's max_gap is the largest my_clock - min_clock (slowest active
-- worker) at the moments it was let past a clock: the staleness it actually
-- ran with (0 under bsp, <= s under ssp). wait: seconds spent at clocks and
-- barriers. Counters are totals since the job started.
function Job:stats()
    self:_check()
    local per_node = self:_guard(self.rt.stats)
    table.sort(per_node, function(a, b) return a.node < b.node end)
    local st = { nodes = {}, workers = {}, max_gap = 0, policy = self.policy_name }
    for _, n in ipairs(per_node) do
        for _, w in ipairs(n.workers) do
            st.workers[#st.workers + 1] = w
            if w.max_gap > st.max_gap then st.max_gap = w.max_gap end
        end
        n.workers = nil
        st.nodes[#st.nodes + 1] = n
    end
    table.sort(st.workers, function(a, b) return a.worker < b.worker end)
    return st
end

-- job:log{...}: one JSON line in the metrics file (no-op without one). A
-- record whose epoch is the last finished epoch also goes into that epoch's
-- record of the learning curve (job.curve, saved by job:save), file or not.
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
    local f, err = io.open(self.metrics, "a")
    if not f then error(("job:log: metrics file %s"):format(open_error(self.metrics, err)), 2) end
    f:write(json(rec), "\n")
    f:close()
end

-- Checkpoints ---------------------------------------------------------------

local CHUNK = 16384 -- rows per transfer: memory stays bounded whatever the table size

-- The learning curve as text: one JSON line per record, as in the metrics file.
local function curve_text(curve)
    local out = {}
    for i, rec in ipairs(curve) do out[i] = json(rec) .. "\n" end
    return table.concat(out)
end

-- The job's resume state, as checkpoint metadata (version 2, see
-- docs/checkpoints.md): what job:load needs so that the next job:epoch()
-- is the one the saving run would have run next.
function Job:_resume_meta()
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
        { "crescent.curve", curve_text(self.curve) },
        { "crescent.lr", cps.serialize(lr) },
        { "crescent.clocks", cps.serialize(clocks) },
        { "crescent.state", state },
    }
end

-- job:save(path): every table (values and optimizer state), gathered node by
-- node in key order, and the job's resume state (epoch counter, learning
-- curve, learning rates, seed, policy, clocks, job.state) into one
-- checkpoint file (written to path.tmp, fsync'd, renamed). Returns true, or
-- raises.
function Job:save(path)
    self:_check()
    if type(path) ~= "string" then error("job:save(path): path expected", 2) end
    local okm, meta = pcall(self._resume_meta, self)
    if not okm then error("job:save: " .. meta, 2) end
    local w, err = cps.ckpt_writer(path)
    if not w then error("job:save: " .. err, 2) end
    local ok, e = pcall(function()
        for _, kv in ipairs(meta) do w:meta(kv[1], kv[2]) end
        for _, t in ipairs(self.tables) do
            w:table(t.name, t.keys, t.dim, t.optimizer, t.sdim)
            local k = 0
            while k < t.keys do
                local node = k // t.block
                local n = math.min(CHUNK, t.keys - k, (node + 1) * t.block - k)
                local v, st = self:_guard(self.rt.get_rows, t.id, node, k, n, t.dim, t.sdim)
                w:rows(v, st)
                k = k + n
            end
        end
        w:commit()
    end)
    if not ok then
        w:abort()
        error(e, 2)
    end
    return true
end

-- job:load(path): restore the tables saved by job:save, whatever the node
-- count then and now (rows are scattered by key range). Every table in the
-- file must exist in the job with the same keys, dim and optimizer. The file
-- is read twice: the first pass checks every table against the job before
-- any row is written, so a mismatch in a later table leaves the job as it was.
local function each_table(path, r, tables, rows_of)
    while true do
        local info = r:next_table()
        if not info then return end
        local t = tables[info.name]
        if not t then error(("%s: table '%s' is not part of this job"):format(path, info.name), 0) end
        if info.keys ~= t.keys or info.dim ~= t.dim then
            error(("%s: table '%s' has %d keys x dim %d, the job's has %d x %d"):format(
                path, info.name, info.keys, info.dim, t.keys, t.dim), 0)
        end
        if info.state_dim ~= t.sdim then
            error(("%s: table '%s' was saved with optimizer %s, the job uses %s"):format(
                path, info.name, info.optimizer, t.optimizer), 0)
        end
        local k = 0
        while k < t.keys do
            local node = k // t.block
            local n = math.min(CHUNK, t.keys - k, (node + 1) * t.block - k)
            local v, st = r:rows(n, t.dim, t.sdim)
            rows_of(t, node, k, v, st)
            k = k + n
        end
    end
end

-- Read and check the resume state of a version 2 file (before anything is
-- changed): a table of what Job:_resume applies. Raises "path: ..." naming
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
    local res = { epochs = int("crescent.epochs"), seed = int("crescent.seed"), curve = {},
                  lr = data("crescent.lr", "table"), state = data("crescent.state", "table"),
                  clocks = data("crescent.clocks", "table"), policy = get("crescent.policy"),
                  policy_opts = data("crescent.policy_opts", "table"), text = get("crescent.curve") }
    local n = 0
    for line in res.text:gmatch("[^\n]+") do
        n = n + 1
        local rec, err = json_decode(line)
        if type(rec) ~= "table" then bad("crescent.curve", ("record %d: %s"):format(n, err or "object expected")) end
        res.curve[n] = rec
    end
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
    local ppath, psrc = policy_source(res.policy)
    check_policy(ppath, psrc, res.policy_opts)
    res.policy_path, res.policy_src = ppath, psrc
    return res
end

-- Replace the metrics file's content with the restored curve, so that its
-- lines continue where the saved run's stopped (written to .tmp, renamed).
local function rewrite_metrics(file, text)
    local tmp = file .. ".tmp"
    local f, err = io.open(tmp, "wb")
    if not f then error("cannot rewrite metrics file: " .. err, 0) end
    local ok, werr = f:write(text)
    f:close()
    if not ok then os.remove(tmp) error("cannot rewrite metrics file: " .. tostring(werr), 0) end
    local rok, rerr = os.rename(tmp, file)
    if not rok then os.remove(tmp) error("cannot rewrite metrics file: " .. tostring(rerr), 0) end
end

-- Workers' clocks and barrier counts as saved: worker i gets saved worker
-- i's, and a worker the saving job did not have gets the largest saved ones
-- (clocks only matter relative to each other, and are level between epochs).
function Job:_set_clocks(saved)
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

function Job:_resume(path, res)
    for name, lr in pairs(res.lr) do
        local t = self.tables[name]
        if t.lr ~= lr then t:set_lr(lr) end
    end
    if res.policy ~= self.policy_name or cps.serialize(res.policy_opts) ~= cps.serialize(self.policy_opts or {}) then
        self:_send_policy(res.policy, res.policy_opts, res.policy_path, res.policy_src)
    end
    self:_set_clocks(res.clocks)
    self.epochs, self.curve, self.state = res.epochs, res.curve, res.state
    if self.metrics then rewrite_metrics(self.metrics, res.text) end
    if res.seed ~= self.seed then
        return ("job:load: note: %s was saved by a job with seed %d, this job has seed %d: "
            .. "its epochs draw other random orders than the saved run's would have"):format(path, res.seed, self.seed)
    end
end

-- job:load(path): tables, then (version 2 files) the resume state: epoch
-- counter, learning curve (and the metrics file, rewritten to match it),
-- learning rates, policy, job.state. Returns true (and a note, also
-- printed on stderr, for a version 1 file, tables only, or a job seed that
-- differs from the saved one), or raises; a failure before the rows are
-- written leaves the job as it was.
function Job:load(path)
    self:_check()
    if type(path) ~= "string" then error("job:load(path): path expected", 2) end
    local apply = function(t, node, k, v, st)
        self:_guard(self.rt.set_rows, t.id, node, k, v, t.sdim > 0 and st or nil)
    end
    local res, version
    for _, rows_of in ipairs { function() end, apply } do
        local r, err = cps.ckpt_reader(path)
        if not r then error("job:load: " .. err, 2) end
        local ok, e = pcall(function()
            if rows_of ~= apply then
                version = r:version()
                if version >= 2 then res = read_resume(path, r, self.tables) end
            end
            each_table(path, r, self.tables, rows_of)
        end)
        r:close()
        if not ok then error(e, 2) end
    end
    local note
    if res then
        local ok, e = pcall(self._resume, self, path, res)
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

function Job:close()
    if not self.rt:closed() then self.rt:close() end
    open_jobs[self] = nil
    if rawget(_G, "job") == self then rawset(_G, "job", nil) end
end

function M.close_all()
    for j in pairs(open_jobs) do j:close() end
end

-- Tables (scheduler side) -------------------------------------------------

function Table:_key(k, what)
    if math.type(k) ~= "integer" or k < 0 or k >= self.keys then
        error(("%s:%s: key %s out of range [0, %d)"):format(self.name, what, tostring(k), self.keys), 3)
    end
    return k // self.block
end

-- W:get(k) -> Lua table of dim numbers
function Table:get(k)
    self.job:_check()
    local node = self:_key(k, "get")
    local v = self.job:_guard(self.job.rt.get_rows, self.id, node, k, 1, self.dim, self.sdim)
    return v:row(1)
end

-- W:set(k, {numbers}): replaces the row (optimizer state kept)
function Table:set(k, row)
    self.job:_check()
    local node = self:_key(k, "set")
    if type(row) ~= "table" or #row ~= self.dim then
        error(("%s:set: row of %d numbers expected"):format(self.name, self.dim), 2)
    end
    local v, st = self.job:_guard(self.job.rt.get_rows, self.id, node, k, 1, self.dim, self.sdim)
    for j = 1, self.dim do
        if type(row[j]) ~= "number" then error(("%s:set: row[%d] is not a number"):format(self.name, j), 2) end
        v:set(1, j, row[j])
    end
    self.job:_guard(self.job.rt.set_rows, self.id, node, k, v, st)
end

-- W:set_lr(x): new learning rate, applied from the next push on
function Table:set_lr(x)
    self.job:_check()
    if type(x) ~= "number" or x < 0 then error(self.name .. ":set_lr: non-negative number expected", 2) end
    self.job:_guard(self.job.rt.set_lr, self.id, x)
    self.lr = x
end

return M
