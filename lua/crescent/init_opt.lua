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

return M
