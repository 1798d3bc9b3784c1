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
        return { name = name, lr = o.lr, eps = o.eps, init = o.init }
    end
end

M.optim = {
    sgd = optimizer("sgd", { lr = true }),
    adagrad = optimizer("adagrad", { lr = true, eps = true, init = true }),
    add = optimizer("add", {}),
    assign = optimizer("assign", {}),
}

return M
