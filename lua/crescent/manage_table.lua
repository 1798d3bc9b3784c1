-- crescent.manage_table: the technique per key of a job's table
-- (docs/management.md): parsing manage= specs (technique names, the per-key
-- forms, decision scripts), applying them on the nodes, and the life of a
-- decision script (manage = "auto"...): counting on, a decision at the
-- start from expected frequencies, one at every epoch boundary from the
-- window's counts, the previous choice kept when a script fails. Its
-- methods are installed into crescent.table's Table.
local core = require "crescent.core"
local manage = require "crescent.manage"

local Table = {}
local choices = require "crescent.manage_choice"
local M = {}


local TECH = { classic = 0, relocate = 1 }

-- The keys of a `replicate =` / `relocate =` list, checked: integers in
-- [0, keys), none twice, none in `taken` (the other list's keys, a set).
-- Returns the list (as given) and the set of its keys.
local function key_list(self, what, field, list, taken)
    if type(list) ~= "table" and type(list) ~= "userdata" then
        error(("%s: %s = must be a list of keys"):format(what, field), 0)
    end
    local set = {}
    for i = 1, #list do
        local k = list[i]
        if type(list) == "userdata" then k = list:get(i) end
        if math.type(k) ~= "integer" or k < 0 or k >= self.keys then
            error(("%s: %s = key %s (position %d) out of range [0, %d) of table '%s'"):format(
                what, field, tostring(k), i, self.keys, self.name), 0)
        end
        if set[k] then
            error(("%s: %s = key %d (position %d) is listed twice"):format(what, field, k, i), 0)
        end
        if taken and taken[k] then
            error(("%s: key %d is in both replicate = and relocate ="):format(what, k), 0)
        end
        set[k] = true
    end
    return list, set
end

-- A decision script's name ("auto", "nups:hot=50", "./mine.lua", {"auto",
-- hot = 50}) rather than a technique or a per-key table?
local is_script = manage.is_script
M.is_script = is_script

-- manage spec -> {mode = 0 classic | 1 relocate (the rest's technique),
-- repl = replicated keys or nil, reloc = relocated keys or nil (mode 0
-- only), label}, or {script = spec} for a decision script (checked by
-- crescent.manage when it is loaded). Raises "what: ..." on a spec it
-- cannot honour. Forms: "classic", "relocate", "replicate", a script, or
-- {replicate = keys, relocate = keys | "rest", classic = "rest"} with
-- exactly one "rest" (a `replicate =` list alone: the rest is classic).
function M.parse_manage(self, spec, what)
    if is_script(spec) then return { script = spec } end
    if type(spec) == "string" then
        if spec == "replicate" then
            local all = {}
            for k = 0, self.keys - 1 do all[k + 1] = k end
            return { mode = 0, repl = all, label = spec }
        end
        return { mode = TECH[spec], label = spec }
    end
    if type(spec) ~= "table" then
        error(("%s: a technique name, a decision script or {replicate = keys, relocate = \"rest\"} expected, got %s")
            :format(what, type(spec)), 0)
    end
    local rest
    for k, v in pairs(spec) do
        if k ~= "replicate" and TECH[k] == nil then
            error(("%s: unknown field '%s' (replicate = keys, relocate = keys|\"rest\", classic = \"rest\")"):format(
                what, tostring(k)), 0)
        end
        if v == "rest" then
            if k == "replicate" then error(("%s: replicate = must be a list of keys"):format(what), 0) end
            if rest then error(("%s: only one of classic, relocate may be \"rest\""):format(what), 0) end
            rest = k
        elseif type(v) == "string" or (k == "classic") then
            error(("%s: %s = must be %s"):format(what, k, k == "classic" and "\"rest\"" or "\"rest\" or a list of keys"), 0)
        end
    end
    local repl, rset, reloc
    if spec.replicate ~= nil then repl, rset = key_list(self, what, "replicate", spec.replicate) end
    if spec.relocate ~= nil and spec.relocate ~= "rest" then
        if rest ~= "classic" then
            error(("%s: relocate = keys needs classic = \"rest\""):format(what), 0)
        end
        reloc = key_list(self, what, "relocate", spec.relocate, rset)
    end
    if not repl and not reloc then
        error(("%s: a table must give replicate = keys or relocate = keys"):format(what), 0)
    end
    if reloc and #reloc == 0 then reloc = nil end
    local label = "mixed"
    return { mode = rest == "relocate" and 1 or 0, repl = repl, reloc = reloc, label = label }
end

-- How many keys of the table each technique has under r (parse_manage's
-- result): replicated, relocated, classic.
function M.census(self, r)
    local nr = r.repl and #r.repl or 0
    local nl = r.reloc and #r.reloc or 0
    if r.mode == 1 then return nr, self.keys - nr, 0 end
    return nr, nl, self.keys - nr - nl
end

-- Apply r (parse_manage's result, not a script) on every node.
function Table:_apply(r)
    self.job:_guard(self.job.rt.manage, self.id, r.mode, r.repl, r.reloc)
    self.manage_label, self.manage_mode, self.manage_repl, self.manage_reloc = r.label, r.mode, r.repl, r.reloc
    self.manage_census = { M.census(self, r) }
end

-- Stop counting accesses (a script is dropped).
local function stop_counting(self)
    if self.counting then
        self.counting = nil
        if self.job.rt.count then self.job:_guard(self.job.rt.count, self.id, false) end
    end
    self.decider, self.count_state, self.manage_script = nil, nil, nil
end

-- A decider for spec (a decision script) on this table; errors as
-- "what: ..." (crescent.manage names the script, and its line).
function M.decider(self, spec, what, initial)
    local ok, d = pcall(manage.new, spec, nil, { table = self.name, keys = self.keys, nodes = self.nodes,
        initial = initial or "classic" })
    if not ok then
        local msg, pre = tostring(d), ("manage %s: "):format(self.name)
        if msg:sub(1, #pre) == pre then msg = msg:sub(#pre + 1) end
        error(("%s: %s"):format(what, msg), 0)
    end
    return d
end

-- Apply a decider's choice; nil, why when the nodes refuse it.
local function apply_choice(self, c)
    local ok, r = pcall(M.parse_manage, self, c, ("manage %s"):format(self.name))
    if ok then ok, r = pcall(self._apply, self, r) end
    if not ok then return nil, tostring(r) end
    self.choice = c
    return true
end

local function say(self, why)
    self.manage_why = why
    if why then io.stderr:write(why, "\n") end
end

-- One decision of the table's script: obs = {epoch, observed}; the
-- table's expected frequencies are added; applied when it changed the
-- choice. A failing script (or a choice the nodes refuse) keeps the
-- previous choice; the line saying why goes to stderr (and into
-- self.manage_why).
function Table:_decide(obs)
    local d = self.decider
    local prev = d.choice
    obs.expected = self.expected
    local t0 = core.util.now()
    local choice, why = d:decide(obs)
    self.decide_seconds = core.util.now() - t0
    if not why and not manage.same(choice, self.choice) then
        local ok, err = apply_choice(self, choice)
        if not ok then
            d.choice = prev
            why = ("manage %s: %s: %s; keeping the previous choice (%s)"):format(self.name, d.shown, err,
                manage.label(prev))
        end
    end
    say(self, why)
    return d.choice, why
end

-- The share of the scheduler's time a table's decisions may take: the
-- scheduler shares the machine with the nodes, so a decision that costs
-- more than this share of the time since the last one is put off to a
-- later epoch boundary (the counts are cumulative: the window then spans
-- several epochs). MF's 20 ms epochs against a 0.1 s decision on a
-- 20,000-key table made every epoch 20% slower before this.
M.DECIDE_SHARE = 0.05

-- At an epoch boundary (crescent.epoch): read the nodes' counts, take the
-- window since the last decision and decide from it, unless the last
-- decision's cost exceeds DECIDE_SHARE of the time since it. On one node
-- (nothing counted) nothing changes.
function Table:_redecide(epoch)
    if not self.decider or not self.counting then return end
    local start = core.util.now()
    if self.decide_cost and self.decide_cost > M.DECIDE_SHARE * (start - self.decided_at) then
        self.decisions_put_off = (self.decisions_put_off or 0) + 1
        return
    end
    local c, why = self:_redecide_now(epoch)
    self.redecisions = (self.redecisions or 0) + 1
    collectgarbage() -- the decision's garbage is collected now, not during the next epoch
    self.decided_at = core.util.now()
    self.decide_cost = self.decided_at - start
    return c, why
end

function Table:_redecide_now(epoch)
    local ok, parts = pcall(self.job._guard, self.job, self.job.rt.counts, self.id)
    local t0 = core.util.now()
    local obs, state
    local c = self.decider.choice
    local watch = type(c) == "table" and type(c.relocate) == "table" and c.relocate or nil
    if ok then obs, state = manage.window(parts, self.count_state, nil, self.keys, watch) end
    if not obs then
        say(self, ("manage %s: %s; keeping the previous choice (%s)"):format(self.name,
            tostring(ok and state or parts), manage.label(self.decider.choice)))
        return
    end
    self.count_state = state
    local read = core.util.now() - t0
    local c, why = self:_decide { epoch = epoch, observed = obs }
    self.decide_seconds = self.decide_seconds + read
    return c, why
end

-- Expected frequencies for the table's script (job:table's `frequencies
-- =`, or the weights of a sampling distribution declared on it): kept for
-- later decisions; decides now when a script manages the table and has not
-- decided from counts yet.
function Table:_expect(w, what)
    local list = w
    if type(w) == "userdata" then
        list = {}
        if w.rows then
            local n = 0
            for i = 1, w:rows() do for j = 1, w:cols() do n = n + 1; list[n] = w:get(i, j) end end
        else
            for i = 1, #w do list[i] = w:get(i) end
        end
    end
    local e, err = manage.expected(list, self.keys, manage.CAP)
    if not e then error(("%s: %s"):format(what, err), 0) end
    self.expected = e
    if self.decider and not self.count_state then self:_decide { epoch = self.job.epochs } end
end

-- W:frequencies(w): the expected accesses of each key (w[k + 1]; a list,
-- an Ints or a Matrix) for the table's decision script (manage = "auto",
-- "nups"...): it decides again from them, unless it decides from counts
-- already. Replaces job:table's `frequencies =` and a distribution's weights.
function Table:frequencies(w)
    self.job:_check()
    local ok, err = pcall(self._expect, self, w, self.name .. ":frequencies")
    if not ok then error(err, 2) end
end

-- W:manage(spec): the technique per key, between epochs ("classic",
-- "relocate", "replicate", {replicate = keys, relocate = keys | "rest",
-- classic = "rest"}, or a decision script: "auto", "nups:hot=50",
-- "./mine.lua", {"auto", hot = 50}). Every node applies it before it
-- answers, so no worker is mid-call. A script turns counting on (2 nodes
-- or more), decides now (from expected frequencies if the table has them)
-- and again at every epoch boundary from the accesses of the epoch.
function Table:manage(spec)
    self.job:_check()
    local ok, err = pcall(self._manage, self, spec, self.name .. ":manage")
    if not ok then error(err, 2) end
end

function Table:_manage(spec, what, d)
    local r = M.parse_manage(self, spec, what)
    if r.script then
        d = d or M.decider(self, spec, what, self.choice)
        stop_counting(self)
        self.decider, self.manage_script = d, d.shown
        if self.nodes > 1 and self.job.rt.count then
            self.job:_guard(self.job.rt.count, self.id, true)
            self.counting = true
        end
        self:_decide { epoch = self.job.epochs }
        return
    end
    stop_counting(self)
    self:_apply(r)
    self.choice = choices.of_parsed(r)
end

-- The keys of each technique now: replicated, relocated, classic.
function Table:census()
    return table.unpack(self.manage_census or { 0, 0, self.keys })
end


-- Add the methods above to crescent.table's Table class.
function M.install(T)
    for k, f in pairs(Table) do T[k] = f end
end

return M
