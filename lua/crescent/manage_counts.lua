-- crescent.manage_counts: what the scheduler gives decision scripts
-- (crescent.manage, docs/management.md) about the accesses to a
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

-- Keys one node dominates, from per-node window sketches: for each key,
-- each node's estimate; the node with the largest is the key's dominant
-- node. Listed when, counting conservatively (the dominant node's count
-- less its error bound, against the other nodes' estimates, which never
-- undercount), that node made at least half of the key's accesses:
-- {key =, node = (0-based), home = the key's home node, count = that lower
-- bound, others = the upper bound of the other nodes' accesses}, by key.
-- O(keys x nodes) estimates.
function M.dominant(wins, keys)
    local out, n = {}, #wins
    if n < 2 then return out end
    local owner = core.table.owner
    local bounds, est = {}, {}
    for i = 1, n do bounds[i], est[i] = wins[i]:bound(), wins[i].estimate end
    local w1, w2, e1, e2 = wins[1], wins[2], est[1], est[2]
    for k = 0, keys - 1 do
        local best, bi, all
        if n == 2 then
            local a, b = e1(w1, k), e2(w2, k)
            all = a + b
            if a >= b then best, bi = a, 1 else best, bi = b, 2 end
        else
            best, bi, all = -1, 0, 0
            for i = 1, n do
                local x = est[i](wins[i], k)
                all = all + x
                if x > best then best, bi = x, i end
            end
        end
        local lo, others = best - bounds[bi], all - best
        if lo > 0 and lo >= others then
            out[#out + 1] = { key = k, node = bi - 1, home = owner(keys, n, k), count = lo, others = others }
        end
    end
    return out
end

-- The same for the keys of a list (the keys relocated now), whatever
-- their counts: {key =, node =, home =, count =, others =}, in list order
-- (count may be 0 or less: not seen).
function M.per_node(wins, keys, list)
    local out, n = {}, #wins
    local owner = core.table.owner
    for i, k in ipairs(list) do
        local best, bi, all = -1, 1, 0
        for j = 1, n do
            local x = wins[j]:estimate(k)
            all = all + x
            if x > best then best, bi = x, j end
        end
        out[i] = { key = k, node = bi - 1, home = owner(keys, n, k), count = best - wins[bi]:bound(), others = all - best }
    end
    return out
end

-- One window from the nodes' answers (parts: serialised sketches, one per
-- node, each cumulative since counting began) and prev, what this
-- returned last time (nil at first: the window is everything counted) ->
-- observed (with `nodes`: per node {total =, bound =} of its window, and
-- `dominant`: M.dominant of the windows), the state to pass next time; or
-- nil, a message naming the node. keys: the table's (without it, no
-- `dominant` list); watch: keys to give `watched` for (M.per_node).
function M.window(parts, prev, floor, keys, watch)
    if prev and #prev ~= #parts then
        return nil, ("counts: %d nodes answered, %d before"):format(#parts, #prev)
    end
    local now, wins, sum = {}, {}, nil
    for i, bytes in ipairs(parts) do
        local sk, err = core.sketch.read(bytes)
        if not sk then return nil, ("counts of node %d: %s"):format(i - 1, err) end
        now[i] = sk
        local win = sk
        if prev then
            win = sk:clone()
            local ok, e = pcall(win.sub, win, prev[i])
            if not ok then return nil, ("counts of node %d: %s"):format(i - 1, e) end
        end
        wins[i] = win
        if sum then
            local ok, e = pcall(sum.merge, sum, win)
            if not ok then return nil, ("counts of node %d: %s"):format(i - 1, e) end
        else
            sum = win:clone()
        end
    end
    if not sum then return nil, "no counts" end
    local obs = M.observed(sum, floor)
    obs.nodes = {}
    for i, w in ipairs(wins) do obs.nodes[i] = { total = w:total(), bound = w:bound() } end
    obs.dominant = keys and M.dominant(wins, keys) or {}
    obs.watched = (keys and watch) and M.per_node(wins, keys, watch) or {}
    return obs, now
end

return M
