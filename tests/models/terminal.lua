-- Test model: text a model chooses, with terminal control sequences in it
-- (window title, clear screen, a carriage return and a line of its own),
-- through ctx:log (call "log") and error() (call "fail").
local M = {}
local nasty = "A\27]0;pwned\7B\27[2J\27[HC\rD\nscheduler: job finished\194\155E"

function M.init() end

function M.log(ctx)
    ctx:log("log", nasty)
    return { ok = true }
end

function M.fail()
    error(nasty)
end

return M
