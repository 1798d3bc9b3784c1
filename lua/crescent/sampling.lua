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
local M = {}

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

-- Add distribution (and the scheme methods) to Job.
function M.install(Job)
    Job.distribution = distribution
end

return M
