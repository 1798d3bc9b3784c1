-- crescent.restart: what `crescent run --checkpoint PATH [--checkpoint-every K]
-- [--restarts N]` changes in the Job class, installed by crescent.job last.
--
-- Every K finished epochs (or at the first epoch end S seconds after the
-- last save, --checkpoint-every Ss) the job is saved to PATH (job:save: written
-- aside, then renamed, so PATH always holds the last complete checkpoint).
-- When a node dies, `crescent run` runs the job script again, at most N
-- times; in the new run the first job:epoch loads PATH, unless the script
-- loaded a checkpoint itself (cr.script.resume, whose path defaults to
-- PATH, or job:load). After such an automatic load, the script's first
-- calls of job:epoch, as many as the checkpoint's epochs, only return
-- (nothing is trained, nothing is logged): a script that counts its
-- epochs with a for loop and one that runs `while job.epochs < E` both
-- train exactly the epochs that were not saved.
local core = require "crescent.core"

local M = {}

local function strip(e)
    return (tostring(e):gsub("^[^\n]-crescent/restart%.lua:%d+: ", ""))
end

-- The checkpoint settings of the command line (crescent run), or nil.
function M.settings(ov)
    if not (ov and ov.checkpoint) then return nil end
    return { path = ov.checkpoint, every = ov.checkpoint_every or 1, seconds = ov.checkpoint_seconds,
             last = core.util.now() }
end

local function exists(path)
    local f = io.open(path, "rb")
    if f then f:close() end
    return f ~= nil
end

function M.install(Job)
    local load, epoch, log = Job.load, Job.epoch, Job.log
    function Job:load(...)
        local r = table.pack(pcall(load, self, ...))
        if not r[1] then error(strip(r[2]), 2) end
        self._loaded = true
        return table.unpack(r, 2, r.n)
    end

    function Job:epoch(args)
        local ck = self._ck
        if not ck then return epoch(self, args) end -- a tail call: errors name the caller's line
        if not self._started then
            self._started = true
            if not self._loaded and exists(ck.path) then
                local ok, e = pcall(load, self, ck.path)
                if not ok then error(strip(e), 2) end
                self._loaded, self._replay = true, self.epochs
                io.stderr:write(("crescent: resumed from %s after epoch %d\n"):format(ck.path, self.epochs))
            end
        end
        if (self._replay or 0) > 0 then -- an epoch the checkpoint holds: the script repeats its loop
            self._replay, self._replaying = self._replay - 1, true
            return { seconds = 0, results = {}, sum = {}, items = 0, messages = 0, bytes_remote = 0,
                     bytes_local = 0, replayed = true }
        end
        self._replaying = false
        local ok, r = pcall(epoch, self, args)
        if not ok then error(strip(r), 2) end
        local now = core.util.now()
        if (ck.seconds and now - ck.last >= ck.seconds) or (not ck.seconds and self.epochs % ck.every == 0) then
            ck.last = now
            local oks, e = pcall(Job.save, self, ck.path)
            if not oks then error(strip(e), 2) end
        end
        return r
    end

    -- A replayed epoch's records are in the metrics file already.
    function Job:log(t)
        if self._replaying then return end
        return log(self, t)
    end
end

return M
