-- crescent.data: dataset readers and writers (see docs/data.md).
--
-- Every function here raises on failure with a one-line message positioned
-- at the caller's line: expected failures name the data file and line
-- ("job.lua:12: train.mmc:17: column 2001 out of range 1..2000"), wrong
-- arguments say what is wrong ("job.lua:12: unknown option 'cahce'"). The C
-- functions underneath (crescent.core.data) return nil, msg for expected
-- failures instead; use them directly to handle failures without pcall.
local core = require "crescent.core"
local C = core.data

local M = {}

-- Errors the C function raised carry this file's position (it is the
-- caller of the C function); drop it so error(msg, 2) can put the user's.
local here = "^[^\n]-data%.lua:%d+: "

local function wrap(f)
  return function(...)
    local ok, r, msg = pcall(f, ...)
    if not ok then error((tostring(r):gsub(here, "", 1)), 2) end
    if r == nil then error(msg, 2) end
    return r
  end
end

for name, f in pairs(C) do M[name] = wrap(f) end

return M
