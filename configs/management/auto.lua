-- "auto": choose per key between replication, relocation and classic from
-- the accesses observed since the last decision, at every epoch boundary
-- (docs/management.md, "The automatic choice").
--
--  * replicate a key accessed far above the mean from several nodes: its
--    count, less the counting error bound, exceeds `hot` times the mean
--    count per key of the table (a key already replicated stays so while
--    its count exceeds `keep` x that line: no flapping at the line). At
--    most `cap` keys, the most accessed first.
--  * relocate a key that ONE node uses: that node made at least `share` of
--    the key's accesses and at least `least` of them, counted
--    conservatively (its count less its error bound, against the other
--    nodes' estimates, which never undercount), so the noise of a
--    count-min sketch in the tail never looks local. Not when that node is
--    the key's home (it is served there through shared memory as a classic
--    key: nothing to move). A key already relocated stays so unless the
--    window shows it shared (seen `least` times, its one node under
--    `stay`): a change that takes keys out of the relocated set brings
--    every moved key of the table home. A hot key one node uses is
--    relocated, not replicated.
--  * classic for the rest (keys used from several nodes, and keys too
--    rarely used to tell): they stay at their home, where a remote access
--    is one round trip and nothing moves.
--
-- Before anything is observed (or with fewer than `min` accesses in the
-- window): the NuPS heuristic from the expected frequencies if the table
-- has them (hot keys replicated, the rest `rest`), else the current
-- choice. On one node: classic.
--   hot   = factor over the mean count (default 100, as NuPS)
--   keep  = share of the hot line under which a replicated key goes back
--           (default 0.5; 1 = no hysteresis)
--   cap   = most keys replicated (default 1024: the candidates a sketch keeps)
--   min   = fewest accesses in a window to decide from (default 1000)
--   share = least share of a key's accesses its one node must make for
--           relocation (default 0.9; in [0.5, 1])
--   least = fewest accesses (from that node, in the window) for relocation
--           (default 16: a pull and a push count 2 or 3 accesses per use,
--           so about 6 uses; a key two nodes use evenly shows all of 6
--           uses from one of them with probability 2 x 2^-6 = 3%, and
--           90% of them with about that too)
--   stay  = share under which a relocated key seen `least` times goes back
--           to classic (default 0.7; in [0.5, share]; = share: no hysteresis)
--   rest  = the technique of the other keys: "classic" (default) or
--           "relocate" (then every key that is not replicated is relocated,
--           as NuPS does; share and least are not used)
--   worth = least share of the window's accesses the replicated and
--           relocated keys must make together for the table to leave
--           plain classic (default 0: any key is enough). A table with any
--           key replicated or relocated is routed key by key (a stripe lock
--           per key, replica syncs, no traffic filters), which a handful of
--           keys making a small share of the accesses may not pay for where
--           a remote access is cheap (loopback); on a network, where each
--           remote access saved is worth a round trip, they usually do,
--           hence the default. A table that left classic stays out while
--           they make at least half of `worth`. rest = relocate ignores it.
local KNOWN = { hot = true, keep = true, cap = true, min = true, share = true, least = true, stay = true,
                rest = true, worth = true }
local NAMES = "hot, keep, cap, min, share, least, stay, rest, worth"

local function number(opts, k, dflt, lo, hi, int)
    local v = opts[k]
    if v == nil then return dflt end
    if type(v) ~= "number" or v ~= v or v < lo or v > hi or (int and math.type(v) ~= "integer") then
        error(("auto: %s must be %s in [%s, %s] (got %s)"):format(k, int and "an integer" or "a number",
            tostring(lo), tostring(hi), tostring(v)), 0)
    end
    return v
end

local function by_count(a, b)
    if a.count ~= b.count then return a.count > b.count end
    return a.key < b.key
end

return function(opts)
    for k in pairs(opts) do
        if not KNOWN[k] then
            error(("auto: unknown option '%s' (options: %s)"):format(tostring(k), NAMES), 0)
        end
    end
    local hot = number(opts, "hot", 100, 1e-9, math.huge)
    local keep = number(opts, "keep", 0.5, 0, 1)
    local cap = number(opts, "cap", 1024, 0, math.maxinteger, true)
    local min = number(opts, "min", 1000, 0, math.maxinteger, true)
    local share = number(opts, "share", 0.9, 0.5, 1)
    local least = number(opts, "least", 16, 1, math.huge)
    local stay = number(opts, "stay", math.min(0.7, share), 0.5, share)
    local worth = number(opts, "worth", 0, 0, 1)
    local rest = opts.rest or "classic"
    if rest ~= "relocate" and rest ~= "classic" then
        error(("auto: rest must be classic or relocate (got %s)"):format(tostring(rest)), 0)
    end

    return function(input)
        if input.nodes == 1 then return "classic" end
        local cap2 = math.min(cap, input.cap)
        local obs = input.observed
        if not obs or obs.total < min then
            if input.expected then
                return { replicate = manage.hot_keys(input.expected, input.keys, hot, cap2), [rest] = "rest" }
            end
            return input.current
        end

        -- Locality: keys one node uses (observed.dominant lists the keys
        -- whose dominant node makes at least half of their accesses,
        -- conservatively), unless that node is their home (there they are
        -- served through shared memory as classic keys: nothing to move).
        -- A relocated key (observed.watched) stays unless the window shows
        -- it shared: seen `least` times, its one node under `stay`. Taking
        -- a key out of the relocated set brings every moved key home, so
        -- the set changes only on evidence.
        local single = {} -- key -> its accesses in the window (an estimate)
        if rest == "classic" then
            for _, d in ipairs(obs.dominant or {}) do
                if d.node ~= d.home and d.count >= least and d.count >= share * (d.count + d.others) then
                    single[d.key] = d.count + d.others
                end
            end
            for _, d in ipairs(obs.watched or {}) do
                local seen = math.max(d.count, 0) + d.others
                if not (seen >= least and d.count < stay * seen) then single[d.key] = seen end
            end
        end

        -- Hot keys, from the merged counts.
        local mean = obs.total / input.keys
        local up, down = hot * mean, keep * hot * mean
        local was, listed = {}, {}
        for _, k in ipairs(input.replicated) do was[k] = true end
        local pick = {}
        for _, h in ipairs(obs.top) do
            listed[h.key] = true
            if not single[h.key] and ((was[h.key] and h.count > down) or h.count - (obs.bound or 0) > up) then
                pick[#pick + 1] = h
            end
        end
        -- A replicated key missing from the list was cut at obs.floor: if
        -- that is above the line it must fall under, its count is unknown,
        -- so it stays.
        if (obs.floor or 0) > down then
            for k in pairs(was) do
                if not listed[k] and not single[k] then pick[#pick + 1] = { key = k, count = obs.floor } end
            end
        end
        table.sort(pick, by_count)
        local repl, taken = {}, {}
        for i = 1, math.min(#pick, cap2) do repl[i] = pick[i].key; taken[repl[i]] = true end
        if rest == "relocate" then return { replicate = repl, relocate = "rest" } end

        local reloc, covered = {}, 0
        for i = 1, #repl do covered = covered + pick[i].count end
        for k, c in pairs(single) do
            if not taken[k] then reloc[#reloc + 1] = k; covered = covered + c end
        end
        table.sort(reloc)
        -- Worth leaving plain classic? (hysteresis: a table already out
        -- stays out while its keys make half of `worth`)
        local out = input.current ~= "classic"
        if covered < (out and worth / 2 or worth) * obs.total then return "classic" end
        return { replicate = repl, relocate = reloc, classic = "rest" }
    end
end
