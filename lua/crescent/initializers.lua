-- crescent.initializers: the initializers of tables (cr.init), plain
-- descriptions checked when job:table makes a table. The kinds are the C
-- core's (cr_init_kind, via core.table.init).
local kinds = require("crescent.core").table.init

return {
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
