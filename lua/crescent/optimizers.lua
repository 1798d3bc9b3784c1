-- crescent.optimizers: the update rules of tables (cr.optim) and job:table{}'s
-- optimizer. Names, parameters, ranges and defaults are the C rules'
-- (src/optim/cr_optim.c, read through core.optim.rules); nothing of a rule
-- is written here. cr.optim.NAME{params} returns a plain description,
-- {name = NAME, every parameter (defaults filled in)}, which job:table hands
-- to the C core as its optimizer.
local rules = require("crescent.core").optim.rules

local M = { rules = {} }
for _, r in ipairs(rules) do M.rules[r.name] = r end

-- An i32 table's rule when job:table{} names none.
M.i32_default = "add"

-- "sgd, adagrad, ... or dbpg" (keep: which rules, by default all; note:
-- the i32 default is followed by " (the default)")
function M.list(keep, note)
    local names = {}
    for _, r in ipairs(rules) do
        if not keep or keep(r) then
            names[#names + 1] = r.name .. (note and r.name == M.i32_default and " (the default)" or "")
        end
    end
    if #names < 2 then return names[1] or "" end
    return table.concat(names, ", ", 1, #names - 1) .. " or " .. names[#names]
end

-- v is within parameter p's range (a C row's: lo, hi, above = lo excluded)?
local function in_range(p, v)
    if p.lo == nil then return true end
    return (p.above and v > p.lo or not p.above and v >= p.lo) and v <= p.hi
end

-- "> 0", ">= 0", "in [0, 1]": parameter p's range as messages write it
local function bound(p)
    if p.hi ~= math.huge then return ("in %s%.15g, %.15g]"):format(p.above and "(" or "[", p.lo, p.hi) end
    return ("%s %.15g"):format(p.above and ">" or ">=", p.lo)
end

-- cr.optim.NAME: options table -> description; raises at the caller's line.
local function describe(r)
    local by = {}
    for _, p in ipairs(r.params) do by[p.name] = p end
    return function(o)
        o = o or {}
        for k in pairs(o) do
            if not by[k] then error(("%s{}: unknown option '%s'"):format(r.name, tostring(k)), 2) end
        end
        local d = { name = r.name }
        for _, p in ipairs(r.params) do
            local v = o[p.name]
            if v == nil then
                v = p.default
            elseif type(v) ~= "number" or v ~= v then
                error(("%s{}: option '%s' must be a number"):format(r.name, p.name), 2)
            elseif not in_range(p, v) then
                error(("%s{}: option '%s' must be %s, got %s"):format(r.name, p.name, bound(p), tostring(v)), 2)
            end
            d[p.name] = v
        end
        return d
    end
end

M.optim = {}
for _, r in ipairs(rules) do M.optim[r.name] = describe(r) end

-- The learning rate of description d (what W:set_lr changes), or nil for a
-- rule without one.
function M.rate(d)
    local r = M.rules[d.name]
    return r and r.rate and d[r.rate]
end

-- ---------- job:table{}'s optimizer (crescent.job) ----------

-- Rule options given as fields of job:table{} (job:table{optimizer = "ftrl",
-- alpha = 0.1, l1 = 1, ...}), by rule name: every parameter whose name is
-- not a key of job:table{} itself (table_keys; adagrad's `init`, the
-- table's initializer there, only through cr.optim.adagrad{init=}).
local memo = setmetatable({}, { __mode = "k" })
local function fields(table_keys)
    if memo[table_keys] then return memo[table_keys] end
    local f = { any = {} }
    for _, r in ipairs(rules) do
        f[r.name] = {}
        for _, p in ipairs(r.params) do
            if not table_keys[p.name] then f[r.name][p.name], f.any[p.name] = true, true end
        end
    end
    memo[table_keys] = f
    return f
end

-- k is an option of o's rule given by name (optimizer = "ftrl", l1 = ...).
function M.takes(o, k, table_keys)
    return type(o.optimizer) == "string" and fields(table_keys).any[k] or false
end

function M.unknown_option(k) return ("job:table{}: unknown option '%s'"):format(tostring(k)) end

-- job:table{}'s optimizer description (o: its options): o.optimizer (a
-- cr.optim description, or a rule name with the rule's options as fields
-- of o), by default add for an i32 table, sgd otherwise. Raises a one-line
-- message.
function M.table_optimizer(o, table_keys)
    local opt = o.optimizer or (o.dtype == "i32" and M.i32_default) or M.optim.sgd()
    if type(opt) == "table" and M.rules[opt.name] then return opt end
    if type(opt) ~= "string" then error("job:table{}: optimizer must come from cr.optim", 0) end
    if not M.optim[opt] then
        error(("job:table{}: table '%s': unknown optimizer '%s' (expected %s)"):format(tostring(o.name), opt,
            M.list()), 0)
    end
    local f, args = fields(table_keys), {}
    for k in pairs(f.any) do
        if o[k] ~= nil then
            if not f[opt][k] then
                error(("job:table{}: table '%s': option '%s' is not an option of optimizer %s"):format(o.name,
                    k, opt), 0)
            end
            args[k] = o[k]
        end
    end
    return M.optim[opt](args)
end

return M
