-- crescent.table: a job's table as the job script sees it on the scheduler
-- (job.W:get(k), :set(k, row), :set_lr(x)). Placement (which node holds a
-- key, which keys a node holds) is the C tables' (core.table), never
-- recomputed here.
local core = require "crescent.core"
local cps, place, kinds = core.ps, core.table, core.table.init
local cr_ints = core.util.ints
local optimizers = require "crescent.optimizers"

local Table = {}
Table.__index = Table

local M = { Table = Table }

M.dtypes = { f32 = true, i32 = true }

-- job:table{}'s dtype rules (o: its options; init, opt: cr.init and
-- cr.optim descriptions). An i32 table holds exact int32 counts: the rule
-- add or assign, a start at zeros or a constant integer. Raises a message.
function M.check_dtype(o, init, opt)
    local dt = o.dtype
    if dt == nil or dt == "f32" then return end
    if not M.dtypes[dt] then
        error(("job:table{}: table '%s': unknown dtype %s (f32 or i32)"):format(o.name, tostring(dt)), 0)
    end
    if not optimizers.rules[opt.name].i32 then
        local list = optimizers.list(function(r) return r.i32 end, true)
        error(("job:table{}: table '%s': an i32 table takes the optimizer %s, not %s")
            :format(o.name, list, tostring(opt.name)), 0)
    end
    local a = init.a
    if not (init.kind == kinds.zeros or (init.kind == kinds.uniform and a == init.b and math.tointeger(a)
        and a >= -2 ^ 31 and a < 2 ^ 31)) then
        error(("job:table{}: table '%s': an i32 table starts at cr.init.zeros() or cr.init.constant(integer), "
            .. "not a random init"):format(o.name), 0)
    end
end

-- job:table{}'s traffic filters (docs/filters.md): o.filters = { key_cache =
-- bool, zeros = bool, sigmod = threshold >= 0 (0 or false: off),
-- key_cache_bytes = cap of each key cache, half = bool } -> the definition's filter_*
-- fields (all 0 when o.filters is nil: every filter off). opt: the table's
-- cr.optim description. Raises a message.
M.filter_keys = { key_cache = true, zeros = true, sigmod = true, key_cache_bytes = true, half = true }
function M.parse_filters(o, opt)
    local d = { filter_key_cache = 0, filter_zeros = 0, filter_sigmod = 0, filter_key_cache_bytes = 0, filter_half = 0 }
    local f = o.filters
    if f == nil then return d end
    local where = ("job:table{}: table '%s': filters"):format(o.name)
    if type(f) ~= "table" then error(where .. " must be a table {key_cache=, zeros=, sigmod=}", 0) end
    for k in pairs(f) do
        if not M.filter_keys[k] then
            error(("%s: unknown filter '%s' (key_cache, zeros, sigmod, key_cache_bytes, half)"):format(where,
                tostring(k)), 0)
        end
    end
    for _, k in ipairs { "key_cache", "zeros", "half" } do
        if f[k] ~= nil and type(f[k]) ~= "boolean" then error(("%s.%s must be true or false"):format(where, k), 0) end
        d["filter_" .. k] = f[k] and 1 or 0
    end
    local s = f.sigmod
    if s ~= nil and s ~= false then
        if type(s) ~= "number" or s ~= s or s < 0 or s == math.huge then
            error(where .. ".sigmod must be a finite threshold >= 0 (or false)", 0)
        end
        if s > 0 and ((o.dtype or "f32") ~= "f32" or optimizers.rules[opt.name].overwrites) then
            error(where .. (".sigmod needs a float table whose optimizer is not %s"):format(
                optimizers.list(function(r) return r.overwrites end)), 0)
        end
        d.filter_sigmod = s
    end
    if f.half then
        if (o.dtype or "f32") ~= "f32" then error(where .. ".half needs a float table (dtype f32)", 0) end
        if f.zeros or (s and s > 0) then error(where .. ".half goes without the zeros and sigmod filters", 0) end
    end
    local b = f.key_cache_bytes
    if b ~= nil then
        if math.type(b) ~= "integer" or b < 4096 then error(where .. ".key_cache_bytes must be an integer >= 4096", 0) end
        d.filter_key_cache_bytes = b
    end
    return d
end

-- job:table{}'s placement option (o: its options): nil for "range" (the
-- default: keys are their own ids), else a core Placement (checked against
-- the table's keys and the job's nodes; a file is read here, before anything
-- of the job changes). Raises a one-line message naming the table (and the
-- file and line). Management other than classic needs a dense table placed
-- by range.
function M.placement(o, nodes)
    local p = o.placement
    if o.keys == "sparse" and ((o.manage ~= nil and o.manage ~= "classic") or o.frequencies ~= nil) then
        error(("job:table{}: table '%s' is sparse: manage and frequencies need a dense table (keys = N)")
            :format(o.name), 0)
    end
    if p ~= nil and p ~= "range" and o.keys ~= "sparse" and o.manage ~= nil and o.manage ~= "classic" then
        error(("job:table{}: table '%s' has placement %s: manage needs placement range (only classic "
            .. "management works on other placements)"):format(o.name, tostring(p)), 0)
    end
    if o.keys == "sparse" then
        if p ~= nil and p ~= "hash" and p ~= "range" then
            error(("job:table{}: table '%s' is sparse: placement must be \"hash\" (the default) or \"range\", got %s")
                :format(o.name, tostring(p)), 0)
        end
        return nil
    end
    if p == nil or p == "range" then return nil end
    if type(p) ~= "string" or p == "" then
        error(("job:table{}: table '%s': placement must be \"range\", \"hash\" or a placement file's path, got %s")
            :format(o.name, tostring(p)), 0)
    end
    local ok, pl = pcall(place.placement, o.keys, nodes, p, o.name)
    if not ok then error("job:table{}: " .. tostring(pl):gsub("^bad argument.-%((.*)%)$", "%1"), 0) end
    return pl
end

-- A table object for job (created by job:table once the nodes have it);
-- pl: its Placement (nil: range).
function M.new(job, id, o, opt, lr, pl)
    return setmetatable({
        job = job, id = id, name = o.name, keys = o.keys, dim = o.dim, optimizer = opt.name,
        lr = lr, sdim = cps.state_dim(opt.name, o.dim), nodes = job.nodes, dtype = o.dtype or "f32",
        pl = pl, placement = pl and pl:kind() or "range",
        sparse = o.keys == "sparse" or nil,
    }, Table):_sparse_init(o)
end

function Table:_sparse_init(o)
    if self.sparse then self.keys, self.placement = 0, o.placement or "hash" end
    return self
end

-- tostring(job.W): a summary (the REPL prints it)
function Table.__tostring(t)
    return ("table '%s' (%s, dim %d, %s, placement %s, optimizer %s)"):format(t.name,
        t.sparse and "sparse keys" or (t.keys .. " keys"), t.dim, t.dtype, t.placement, t.optimizer)
end

-- Owner node of key k.
function Table:owner(k)
    if self.sparse then return place.sparse_owner(self.placement, self.nodes, k) end
    if self.pl then return self.pl:owner(k) end
    return place.owner(self.keys, self.nodes, k)
end

-- Internal id of key k (the key itself under range placement).
function Table:_id(k)
    return self.pl and self.pl:id(k) or k
end

-- Rows of keys [k, k + n) in key order: values, state (any placement).
function Table:_chunk_rows(k, n)
    if not self.pl then return self:_rows(self:owner(k), k, n) end
    local vs, sts = {}, {}
    for node = 0, self.nodes - 1 do
        local id, c = self.pl:span(k, n, node)
        if c > 0 then vs[node + 1], sts[node + 1] = self:_rows(node, id, c) end
    end
    return self.pl:gather(k, n, vs), self.pl:gather(k, n, sts)
end

-- Visit the keys of a placed table in key order, in chunks of at most
-- `chunk`: f(first_key, count); rows through _chunk_rows / _each_part.
function Table:each_chunk(chunk, f)
    local k = 0
    while k < self.keys do
        local n = math.min(chunk, self.keys - k)
        f(k, n)
        k = k + n
    end
end

-- Rows v, st of keys [k, k + n) (key order) split per node: f(node, first
-- id, values, state) for each node holding some of them.
function Table:_each_part(k, n, v, st, f)
    if not self.pl then return f(self:owner(k), k, v, st) end
    local vs = self.pl:scatter(k, n, v)
    local sts = st and self.pl:scatter(k, n, st) or {}
    for node = 0, self.nodes - 1 do
        if vs[node + 1] then f(node, (self.pl:span(k, n, node)), vs[node + 1], sts[node + 1]) end
    end
end

-- Visit the table's keys in order, in runs of at most `chunk` keys that
-- never cross a node: f(node, first_key, count) for each run.
function Table:each_run(chunk, f)
    for node = 0, self.nodes - 1 do
        local lo, hi = place.range(self.keys, self.nodes, node)
        local k = lo
        while k < hi do
            local n = math.min(chunk, hi - k)
            f(node, k, n)
            k = k + n
        end
    end
end

function Table:_key(k, what)
    if self.sparse then
        if math.type(k) ~= "integer" then
            error(("%s:%s: key %s is not an integer (table '%s' is sparse: any 64-bit integer)")
                :format(self.name, what, tostring(k), self.name), 3)
        end
        return self:owner(k)
    end
    if math.type(k) ~= "integer" or k < 0 or k >= self.keys then
        error(("%s:%s: key %s out of range [0, %d)"):format(self.name, what, tostring(k), self.keys), 3)
    end
    return self:owner(k)
end

-- Rows [k, k + n) of node's part: values (a Matrix of the table's dtype)
-- and optimizer state.
function Table:_rows(node, k, n)
    return self.job:_guard(self.job.rt.get_rows, self.id, node, k, n, self.dim, self.sdim, self.dtype)
end

-- W:get(k) -> Lua table of dim numbers (integers for an i32 table)
function Table:get(k)
    self.job:_check()
    local node = self:_key(k, "get")
    if self.sparse then return self:_keyed(node, { k }):row(1) end
    return self:_rows(node, self:_id(k), 1):row(1)
end

-- A sparse table's rows of keys (a list or Ints, all on node): values, state.
function Table:_keyed(node, keys)
    local ks = type(keys) == "table" and cr_ints(keys) or keys
    return self.job:_guard(self.job.rt.get_keys, self.id, node, ks, self.dim, self.sdim, self.dtype)
end

-- W:set(k, {numbers}): replaces the row (optimizer state kept); an i32
-- table takes integers in the int32 range only.
function Table:set(k, row)
    self.job:_check()
    local node = self:_key(k, "set")
    local what = self.dtype == "i32" and "integers" or "numbers"
    if type(row) ~= "table" or #row ~= self.dim then
        error(("%s:set: row of %d %s expected"):format(self.name, self.dim, what), 2)
    end
    for j = 1, self.dim do
        local x = row[j]
        if type(x) ~= "number" then error(("%s:set: row[%d] is not a number"):format(self.name, j), 2) end
        if self.dtype == "i32" and not (math.tointeger(x) and x >= -2 ^ 31 and x < 2 ^ 31) then
            error(("%s:set: row[%d] = %s is not an int32 (table '%s' holds i32 counts)")
                :format(self.name, j, tostring(x), self.name), 2)
        end
    end
    self:_without_replicas(function()
        if self.sparse then
            local ks = cr_ints{ k }
            local v, st = self:_keyed(node, ks)
            for j = 1, self.dim do v:set(1, j, row[j]) end
            return self.job:_guard(self.job.rt.set_keys, self.id, node, ks, v, st, self.dtype)
        end
        local id = self:_id(k)
        local v, st = self:_rows(node, id, 1)
        for j = 1, self.dim do v:set(1, j, row[j]) end
        self.job:_guard(self.job.rt.set_rows, self.id, node, id, v, st, self.dtype)
    end)
end

-- ---------- techniques per key: crescent.manage_table ----------

local mt = require "crescent.manage_table"
mt.install(Table)
M.parse_manage, M.decider, M.census, M.is_script = mt.parse_manage, mt.decider, mt.census, mt.is_script

-- Run f() with the table's replicas dropped (their values merged into the
-- home rows) and installed again from the home rows afterwards: rows set
-- by the job (W:set, job:load) must reach the replicas.
function Table:_without_replicas(f)
    if not self.manage_repl then return f() end
    self.job:_guard(self.job.rt.manage, self.id, self.manage_mode, nil, self.manage_reloc)
    local ok, err = pcall(f)
    self.job:_guard(self.job.rt.manage, self.id, self.manage_mode, self.manage_repl, self.manage_reloc)
    if not ok then error(err, 0) end
end

-- W:set_lr(x): new learning rate, applied from the next push on
function Table:set_lr(x)
    self.job:_check()
    if type(x) ~= "number" or x < 0 then error(self.name .. ":set_lr: non-negative number expected", 2) end
    self.job:_guard(self.job.rt.set_lr, self.id, x)
    self.lr = x
end

return M
