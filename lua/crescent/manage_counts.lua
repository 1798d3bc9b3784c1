-- crescent.manage_counts: what the scheduler gives decision scripts
-- (crescent.manage, docs/management-auto.md) about the accesses to a
-- table, observed or expected, in one shape: {total, top = {{key =, count
-- =}, ...} largest first, floor (top holds the keys counted above it),
-- bound (the error of a count), exact, seen}.
local core = require "crescent.core"

local M = {}

-- A core.sketch (one window, all nodes) -> the `observed` table a script
-- reads: the candidates whose count exceeds floor (default 0), largest first.
function M.observed(sk, floor)
    floor = floor or 0
    return { total = sk:total(), top = sk:heavy(floor), floor = floor, bound = sk:bound(),
             seen = sk:distinct(), exact = sk:exact() }
end

-- Expected frequencies (a list, key k at [k + 1], finite, >= 0) -> the
-- same shape as observed: total, floor = the mean, top = the keys above the
-- mean, largest first, at most cap (copying all K into the sandbox would
-- take seconds for millions of keys). nil, what is wrong on a bad list.
function M.expected(w, keys, cap)
    if type(w) ~= "table" or #w ~= keys then
        return nil, ("expected frequencies: %s entries for %d keys"):format(
            type(w) == "table" and tostring(#w) or type(w), keys)
    end
    local sum = 0
    for i = 1, keys do
        local x = w[i]
        if type(x) ~= "number" or x < 0 or x ~= x or x == math.huge then
            return nil, ("expected frequencies: entry %d (key %d) is %s"):format(i, i - 1, tostring(x))
        end
        sum = sum + x
    end
    local top, mean = {}, sum / keys
    for i = 1, keys do if w[i] > mean then top[#top + 1] = { key = i - 1, count = w[i] } end end
    table.sort(top, function(a, b) return a.count > b.count or (a.count == b.count and a.key < b.key) end)
    for i = #top, cap + 1, -1 do top[i] = nil end
    return { total = sum, floor = mean, top = top, bound = 0, exact = true }
end

-- One window from the nodes' answers (parts: serialised sketches, one per
-- node) and prev, the sum this returned last time (nil at first) ->
-- observed, the new sum; or nil, a message naming the node.
function M.window(parts, prev, floor)
    local sum
    for i, bytes in ipairs(parts) do
        local sk, err = core.sketch.read(bytes)
        if not sk then return nil, ("counts of node %d: %s"):format(i - 1, err) end
        if sum then
            local ok, e = pcall(sum.merge, sum, sk)
            if not ok then return nil, ("counts of node %d: %s"):format(i - 1, e) end
        else
            sum = sk
        end
    end
    if not sum then return nil, "no counts" end
    local win = sum:clone()
    if prev then
        local ok, e = pcall(win.sub, win, prev)
        if not ok then return nil, ("counts: %s"):format(e) end
    end
    return M.observed(win, floor), sum
end

return M
