-- crescent.repl: the Lua half of the scheduler's prompt (src/lua/l_repl.c
-- reads lines, compiles and runs them, and calls these). Loaded once per
-- prompt session with require, so nothing here is recompiled per line.
--   show(...)      print results: plain tables as Lua literals
--   complete(text) tab-completion candidates for text
--   sync_job()     keep the global `job` on the current job
local M = {}

local fmt, MAXN, MAXD = string.format, 40, 3
local show

-- A table printed as a literal: no __tostring of its own (plain tables, and
-- objects such as job.W, which are read through raw access).
local function plain(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  return not (type(mt) == "table" and rawget(mt, "__tostring"))
end

local function key(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
  return "[" .. show(k, MAXD, {}) .. "]"
end

-- v as a literal: bounded depth and length, cycles marked, floats with 7
-- significant digits (rows are float32).
function show(v, d, seen)
  if type(v) == "string" then return fmt("%q", v) end
  if math.type(v) == "float" then return fmt("%.7g", v) end
  if not plain(v) then return tostring(v) end
  if seen[v] then return "<cycle>" end
  if d >= MAXD then return "{...}" end
  seen[v] = true
  local parts, n = {}, rawlen(v)
  for i = 1, math.min(n, MAXN) do parts[#parts + 1] = show(rawget(v, i), d + 1, seen) end
  local keys = {}
  for k in next, v do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    if #parts >= MAXN then break end
    parts[#parts + 1] = key(k) .. " = " .. show(rawget(v, k), d + 1, seen)
  end
  local more = n + #keys - #parts
  if more > 0 then parts[#parts + 1] = fmt("... (%d more)", more) end
  seen[v] = nil
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- Print the results of a line with the global print: plain tables as
-- literals, everything else as print shows it.
function M.show(...)
  local out, n = {}, select("#", ...)
  for i = 1, n do
    local v = select(i, ...)
    out[i] = plain(v) and show(v, 0, {}) or v
  end
  print(table.unpack(out, 1, n))
end

local KW = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
  "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while" }

-- Completions of text: globals, fields after "a.b." and methods after
-- "a.b:" (tables and the __index tables of their metatables, which covers
-- userdata such as job.W and strings). Resolving the path indexes values,
-- as typing it would; the C side ignores errors.
function M.complete(text)
  local path, sep, part = text:match("^(.-)([.:]?)([%w_]*)$")
  local obj, out, seen = _G, {}, {}
  if sep == "" and path ~= "" then return out end
  for name in path:gmatch("[^.:]+") do
    if not name:match("^[%a_][%w_]*$") or type(obj) ~= "table" and type(obj) ~= "userdata" then return out end
    obj = obj[name]
    if obj == nil then return out end
  end
  local function add(t, depth)
    if type(t) ~= "table" or depth > 4 then return end
    for k, v in next, t do
      if type(k) == "string" and not seen[k] and k:match("^[%a_][%w_]*$") and k:sub(1, #part) == part
          and (sep ~= ":" or type(v) == "function") then
        seen[k] = true
        out[#out + 1] = path .. sep .. k
      end
    end
    local mt = getmetatable(t)
    if type(mt) == "table" then add(rawget(mt, "__index"), depth + 1) end
  end
  if type(obj) == "table" then add(obj, 0)
  else
    local mt = getmetatable(obj)
    if type(mt) == "table" then add(rawget(mt, "__index"), 0) end
  end
  if path == "" then
    for _, k in ipairs(KW) do if k:sub(1, #part) == part then out[#out + 1] = k end end
  end
  table.sort(out)
  return out
end

-- The job the prompt last offered as `job` (weak: a closed job may go).
local offered = setmetatable({}, { __mode = "v" })

-- Before each line: when require("crescent.job").current() has changed
-- since the last line, offer it as the global `job` (a job opened at the
-- prompt or by the job script); when it became nil, clear `job` if it
-- still holds the job offered before. A value the user gave `job` stays
-- until the current job changes. Without a crescent.job module (or one
-- without current) nothing happens: the library sets `job` itself.
function M.sync_job()
  local mod = package.loaded["crescent.job"]
  if type(mod) ~= "table" or type(mod.current) ~= "function" then return end
  local cur = mod.current()
  if cur == offered.job then return end
  if cur ~= nil then rawset(_G, "job", cur)
  elseif rawget(_G, "job") == offered.job then rawset(_G, "job", nil) end
  offered.job = cur
end

return M
