-- crescent.manage_job: what the technique per key (crescent.manage_table,
-- docs/management.md) changes in the Job class, installed by crescent.job
-- after checkpoint and sampling: job:load around replicated keys, and a
-- sampling distribution's weights as expected frequencies.
local M = {}

function M.install(Job)
    -- job:load sets rows at their homes: replicated keys are dropped first
    -- and installed again from the loaded rows.
    local load = Job.load
    function Job:load(...)
        local repl = {}
        for _, t in ipairs(self.tables) do if t.manage_repl then repl[#repl + 1] = t end end
        if #repl == 0 then return load(self, ...) end -- a tail call: load's errors name the caller's line
        for _, t in ipairs(repl) do self:_guard(self.rt.manage, t.id, t.manage_mode, nil, t.manage_reloc) end
        local r = table.pack(pcall(load, self, ...))
        for _, t in ipairs(repl) do self:_guard(self.rt.manage, t.id, t.manage_mode, t.manage_repl, t.manage_reloc) end
        if not r[1] then error(r[2], 2) end
        return table.unpack(r, 2, r.n)
    end

    -- A distribution with weights gives its table's decision script
    -- (manage = "auto", "nups"...) the expected access frequencies, unless
    -- the table has some (`frequencies =`): the script decides again.
    local distribution = Job.distribution
    function Job:distribution(o)
        local okd, errd = pcall(distribution, self, o)
        if not okd then -- its errors name this file's line: name the caller's instead
            error((tostring(errd):gsub("^[^\n]-crescent/manage_job%.lua:%d+: ", "")), 2)
        end
        local t = self.tables[o.table]
        if o.kind == "weights" and t and not t.expected then
            local ok, err = pcall(t._expect, t, o.weights, ("job:distribution{}: '%s'"):format(o.name))
            if not ok then io.stderr:write(tostring(err), "\n") end
        end
    end
end

return M
