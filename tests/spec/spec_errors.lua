-- Error checks for the specs (on LUA_PATH as tests/spec/?.lua; not a spec
-- itself): the message a call raises, and a plain-text search in it.
local M = {}

-- The message f(...) raises; fails the test if it does not raise.
function M.err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end

-- Fails unless got contains want (plain text, no patterns).
function M.has(want, got)
  assert(got:find(want, 1, true), ("expected %q in %q"):format(want, got))
end

return M
