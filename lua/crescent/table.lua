-- crescent.table: a job's table as the job script sees it on the scheduler
-- (job.W:get(k), :set(k, row), :set_lr(x)). Placement (which node holds a
-- key, which keys a node holds) is the C tables' (core.table), never
-- recomputed here.
local core = require "crescent.core"
local cps, place = core.ps, core.table

local Table = {}
Table.__index = Table

local M = { Table = Table }

-- A table object for job (created by job:table once the nodes have it).
function M.new(job, id, o, opt, lr)
    return setmetatable({
        job = job, id = id, name = o.name, keys = o.keys, dim = o.dim, optimizer = opt.name,
        lr = lr, sdim = cps.state_dim(opt.name, o.dim), nodes = job.nodes,
    }, Table)
end

-- Owner node of key k.
function Table:owner(k)
    return place.owner(self.keys, self.nodes, k)
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
    if math.type(k) ~= "integer" or k < 0 or k >= self.keys then
        error(("%s:%s: key %s out of range [0, %d)"):format(self.name, what, tostring(k), self.keys), 3)
    end
    return self:owner(k)
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
    for j = 1, self.dim do
        if type(row[j]) ~= "number" then error(("%s:set: row[%d] is not a number"):format(self.name, j), 2) end
    end
    self:_without_replicas(function()
        local v, st = self.job:_guard(self.job.rt.get_rows, self.id, node, k, 1, self.dim, self.sdim)
        for j = 1, self.dim do v:set(1, j, row[j]) end
        self.job:_guard(self.job.rt.set_rows, self.id, node, k, v, st)
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
