-- crescent.data: dataset readers and writers.
--
-- Every function here raises on failure with a one-line message that names
-- the data file and line ("train.mmc:17: column 2001 out of range 1..2000"),
-- positioned at the caller's line (error(msg, 2)). The C functions underneath
-- (crescent.core.data) return nil, msg instead; use them directly to handle
-- failures without pcall.
local core = require "crescent.core"
local C = core.data

local M = {}

local function wrap(name)
  local f = C[name]
  return function(...)
    local r, msg = f(...)
    if r == nil then error(msg, 2) end
    return r
  end
end

for name in pairs(C) do M[name] = wrap(name) end

return M
