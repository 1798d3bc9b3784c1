-- crescent.manage_choice: the choices a decision script may return
-- (docs/management.md, "Writing a decision script"), checked strictly, and
-- how they compare and read in messages. Used by crescent.manage.
local M = {}

M.techniques = { classic = true, relocate = true, replicate = true }


-- A `replicate =` (or `relocate =`) list -> sorted keys, or nil, what is
-- wrong. taken: keys of the other list (a set), which this one must avoid.
local function check_keys(list, keys, cap, field, taken)
    field = field or "replicate"
    if type(list) ~= "table" then return nil, ("%s = must be a list of keys (got %s)"):format(field, tostring(list)) end
    local n = #list
    for k in pairs(list) do
        if math.type(k) ~= "integer" or k < 1 or k > n then
            return nil, ("%s = must be a list (it has the field %s)"):format(field, tostring(k))
        end
    end
    if n > cap then return nil, ("%s = has %d keys, more than the cap %d"):format(field, n, cap) end
    local out, seen = {}, {}
    for i = 1, n do
        local k = list[i]
        if math.type(k) ~= "integer" then
            return nil, ("%s[%d] = %s is not an integer key"):format(field, i, tostring(k))
        end
        if k < 0 or k >= keys then
            return nil, ("%s[%d] = %d out of range [0, %d)"):format(field, i, k, keys)
        end
        if seen[k] then return nil, ("%s[%d] = %d repeats %s[%d]"):format(field, i, k, field, seen[k]) end
        if taken and taken[k] then return nil, ("%s[%d] = %d is replicated too"):format(field, i, k) end
        seen[k] = i
        out[i] = k
    end
    table.sort(out)
    return out, seen
end

local FORMS = 'a technique name or {replicate = keys, relocate = keys|"rest", classic = "rest"}'

-- decide's output -> a choice for T:manage: a technique name, or
-- {replicate = sorted keys, relocate = "rest"}, {replicate = sorted keys,
-- classic = "rest"} or {replicate = sorted keys, relocate = sorted keys,
-- classic = "rest"} (the three-way form; replicate may be empty there); an
-- empty table is the rest's technique. nil, what is wrong otherwise.
function M.check_choice(out, keys, cap)
    if type(out) == "string" then
        if not M.techniques[out] then
            return nil, ("returned '%s' (%s)"):format(out, FORMS)
        end
        if out == "replicate" and keys > cap then
            return nil, ("returned 'replicate' for %d keys, more than the cap %d"):format(keys, cap)
        end
        return out
    end
    if type(out) ~= "table" then
        return nil, ("returned %s (%s)"):format(tostring(out), FORMS)
    end
    local rest
    for k, v in pairs(out) do
        if k == "relocate" or k == "classic" then
            if v == "rest" then
                if rest then return nil, "only one of classic, relocate may be \"rest\"" end
                rest = k
            elseif k == "classic" then
                return nil, ("classic = must be \"rest\" (got %s)"):format(tostring(v))
            elseif type(v) ~= "table" then
                return nil, ("relocate = must be \"rest\" or a list of keys (got %s)"):format(tostring(v))
            end
        elseif k ~= "replicate" then
            return nil, ("returned a table with the unknown field '%s' (replicate, relocate, classic)"):format(tostring(k))
        end
    end
    local reloc_list = type(out.relocate) == "table" and out.relocate or nil
    if out.replicate == nil and not reloc_list then return nil, "returned a table without replicate = keys" end
    if reloc_list and rest ~= "classic" then return nil, "relocate = keys needs classic = \"rest\"" end
    local list, seen = {}, nil
    if out.replicate ~= nil then
        local err
        list, seen = check_keys(out.replicate, keys, cap, "replicate")
        if not list then return nil, seen end
    end
    rest = rest or "relocate"
    if reloc_list then
        local reloc, err = check_keys(reloc_list, keys, keys, "relocate", seen)
        if not reloc then return nil, err end
        if #reloc > 0 then
            if #list == 0 and #reloc == keys then return "relocate" end
            return { replicate = list, relocate = reloc, classic = "rest" }
        end
    end
    if #list == 0 then return rest end
    return { replicate = list, [rest] = "rest" }
end

-- Are two choices (as check_choice returns them) the same?
function M.same(a, b)
    if type(a) ~= type(b) then return false end
    if type(a) ~= "table" then return a == b end
    for _, f in ipairs { "replicate", "relocate", "classic" } do
        local x, y = a[f], b[f]
        if type(x) ~= type(y) then return false end
        if type(x) == "table" then
            if #x ~= #y then return false end
            for i = 1, #x do if x[i] ~= y[i] then return false end end
        elseif x ~= y then
            return false
        end
    end
    return true
end

-- A choice for messages: "relocate", "12 replicated, relocate the rest",
-- "12 replicated, 40 relocated, classic the rest".
function M.label(c)
    if type(c) == "string" then return c end
    if type(c.relocate) == "table" then
        return ("%d replicated, %d relocated, classic the rest"):format(#c.replicate, #c.relocate)
    end
    return ("%d replicated, %s the rest"):format(#c.replicate, c.classic and "classic" or "relocate")
end

-- r (parse_manage's result) -> the choice as crescent.manage's deciders
-- hold it: a technique name, or {replicate = sorted keys, relocate =
-- sorted keys | "rest", classic = "rest"}.
local function sorted(list)
    local out = {}
    for i = 1, #list do
        local k = list[i]
        if type(list) == "userdata" then k = list:get(i) end
        out[i] = k
    end
    table.sort(out)
    return out
end
function M.of_parsed(r)
    if r.label ~= "mixed" then return r.label end
    local c = { replicate = sorted(r.repl or {}) }
    if r.mode == 1 then c.relocate = "rest"
    else
        c.classic = "rest"
        if r.reloc then c.relocate = sorted(r.reloc) end
    end
    return c
end

return M
