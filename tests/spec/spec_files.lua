-- Files for the specs (on LUA_PATH as tests/spec/?.lua; not a spec itself):
-- a fresh temp directory and whole-file read, write and exists.
local M = {}

-- A new empty directory; returns it and path(name) = dir .. "/" .. name.
-- The caller removes it with M.remove_dir in its teardown.
function M.tmpdir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  return dir, function(name) return dir .. "/" .. name end
end

function M.remove_dir(dir) os.execute("rm -rf " .. dir) end

function M.read(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

function M.write(p, s)
  local f = assert(io.open(p, "wb"))
  f:write(s)
  f:close()
end

function M.exists(p)
  local f = io.open(p, "rb")
  if f then f:close() end
  return f ~= nil
end

return M
