-- crescent.init_opt: initializers (cr.init) and optimizers (cr.optim) of
-- tables, plain descriptions checked when job:table makes a table. The
-- initializer kinds are the C core's (cr_init_kind, via core.table.init).
local kinds = require("crescent.core").table.init

local M = {}

M.init = {
    zeros = function() return { kind = kinds.zeros } end,
    uniform = function(a, b)
        assert(type(a) == "number" and type(b) == "number", "uniform(a, b): numbers expected")
        return { kind = kinds.uniform, a = a, b = b }
    end,
    -- every value c (uniform(c, c) for the C core; an i32 table's integer start)
    constant = function(c)
        assert(type(c) == "number", "constant(c): number expected")
        return { kind = kinds.uniform, a = c, b = c }
    end,
    normal = function(mean, std)
        assert(type(mean) == "number" and type(std) == "number", "normal(mean, std): numbers expected")
        return { kind = kinds.normal, a = mean, b = std }
    end,
}

local function optimizer(name, allowed)
    return function(o)
        o = o or {}
        for k in pairs(o) do
            if not allowed[k] then error(("%s{}: unknown option '%s'"):format(name, tostring(k)), 2) end
        end
        local d = { name = name, lr = o.lr, eps = o.eps, init = o.init }
        for k, v in pairs(o) do
            if type(v) ~= "number" or v ~= v then error(("%s{}: option '%s' must be a number"):format(name, k), 2) end
            if (name == "ftrl" or name == "dbpg") and k ~= "delta" and (v < 0 or ((k == "lr" or k == "alpha") and v == 0)) then
                error(("%s{}: option '%s' must be %s 0, got %s"):format(name, k,
                    (k == "lr" or k == "alpha") and ">" or ">=", tostring(v)), 2)
            end
            d[k] = v
        end
        -- ftrl's alpha is the rule's learning rate (W:set_lr changes it)
        if o.alpha then d.lr, d.alpha = o.alpha, nil end
        return d
    end
end

M.optim = {
    sgd = optimizer("sgd", { lr = true }),
    adagrad = optimizer("adagrad", { lr = true, eps = true, init = true }),
    add = optimizer("add", {}),
    assign = optimizer("assign", {}),
    -- FTRL-proximal per coordinate (McMahan et al. 2013)
    ftrl = optimizer("ftrl", { alpha = true, beta = true, l1 = true, l2 = true }),
    -- delayed block proximal gradient (thesis ch. 6; src/optim/cr_optim.h):
    -- lr (gamma), l1, l2, delta (KKT filter margin, < 0 off), ada_c and tau
    -- (AdaDelay: lr / (1 + ada_c sqrt(t + tau)); ada_c = 0 off)
    dbpg = optimizer("dbpg", { lr = true, l1 = true, l2 = true, delta = true, ada_c = true, tau = true }),
}

-- ---------- job:table{}'s optimizer (crescent.job) ----------

-- Optimizer options given as fields of job:table{} (the issue 11 contract:
-- job:table{optimizer = "ftrl", alpha = 0.1, l1 = 1, ...}), by rule name.
-- (adagrad's initial accumulator only through cr.optim.adagrad{init=}: a
-- table's `init` is its initializer.)
M.optim_fields = {
    sgd = { "lr" }, adagrad = { "lr", "eps" },
    ftrl = { "alpha", "beta", "l1", "l2" }, dbpg = { "lr", "l1", "l2", "delta", "ada_c", "tau" },
}
M.optim_keys = {}
for _, ks in pairs(M.optim_fields) do for _, k in ipairs(ks) do M.optim_keys[k] = true end end

function M.unknown_option(k) return ("job:table{}: unknown option '%s'"):format(tostring(k)) end

-- k is an option of o's rule given by name (optimizer = "ftrl", l1 = ...).
function M.optim_field(o, k)
    return type(o.optimizer) == "string" and M.optim_keys[k] or false
end

-- job:table{}'s optimizer description (o: its options; optim: cr.optim):
-- o.optimizer (a cr.optim description, or a rule name with the rule's
-- options as fields of o), by default add for an i32 table, sgd{lr = 0.01}
-- otherwise. Raises a one-line message.
function M.table_optimizer(o, optim)
    local opt = o.optimizer or (o.dtype == "i32" and "add") or optim.sgd { lr = 0.01 }
    if type(opt) ~= "string" then return opt end
    if not optim[opt] then
        error(("job:table{}: table '%s': unknown optimizer '%s' (expected sgd, adagrad, add, assign, ftrl or dbpg)")
            :format(tostring(o.name), opt), 0)
    end
    return M.optim_from_fields(o, opt, optim[opt])
end

-- The rule's fields of the C table definition def (l_job.c j_table) from
-- the optimizer description opt.
function M.optim_def(def, opt)
    def.optimizer = opt.name
    def.lr = opt.lr or (opt.name == "ftrl" and 0.1 or opt.name == "dbpg" and 1) or 0.01
    def.eps, def.init_acc, def.l1, def.l2 = opt.eps or 1e-8, opt.init or 0, opt.l1, opt.l2
    def.beta, def.delta, def.ada_c, def.tau = opt.beta or 1, opt.delta or -1, opt.ada_c, opt.tau
end

-- job:table{}'s optimizer from a rule name and the declaration's fields o
-- (make: cr.optim[name]). A field the rule does not take is an error.
function M.optim_from_fields(o, name, make)
    local args = {}
    local allowed = {}
    for _, k in ipairs(M.optim_fields[name] or {}) do allowed[k] = true end
    for k in pairs(M.optim_keys) do
        if o[k] ~= nil then
            if not allowed[k] then
                error(("job:table{}: table '%s': option '%s' is not an option of optimizer %s"):format(o.name, k, name), 0)
            end
            args[k] = o[k]
        end
    end
    return make(args)
end

return M
