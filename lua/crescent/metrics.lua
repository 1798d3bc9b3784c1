-- crescent.metrics: the metrics file (one JSON object per line, appended by
-- job:log; rewritten by job:load to match a restored learning curve) and the
-- JSON text of learning-curve records, through lua-cjson.
--
-- Objects are written with their keys sorted and numbers as %.17g (so a
-- float reads back as the same double; cjson itself stops at 14 digits);
-- NaN and infinities become null. Strings are escaped by cjson.
local has_cjson, cjson = pcall(require, "cjson")
if not has_cjson then
    error("crescent needs lua-cjson (Debian package lua-cjson; `make deps` installs it): " .. tostring(cjson), 0)
end
local core = require "crescent.core"
local home = require "crescent.home"

local M = {}

local decoder = cjson.new()
decoder.decode_invalid_numbers(false) -- NaN, Infinity, hex: not JSON
decoder.decode_max_depth(64)

local encode
-- cjson 2.1.0 writes "/" as "\/" (valid, but paths read badly); a raw "/"
-- never appears in its output, so every "\/" is such an escape.
local function text(v)
    return (cjson.encode(v):gsub("\\/", "/"))
end

local function number(v)
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    if math.type(v) == "integer" then return tostring(v) end
    return ("%.17g"):format(v)
end

local function object(v)
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    local out = {}
    for i, k in ipairs(keys) do
        local x = v[k]
        if x == nil then x = v[tonumber(k)] end
        out[i] = text(k) .. ":" .. encode(x)
    end
    return "{" .. table.concat(out, ",") .. "}"
end

-- One JSON text for v (numbers, strings, booleans, tables: a sequence or an
-- empty table is an array, any other table an object; anything else null).
encode = function(v)
    local t = type(v)
    if t == "number" then return number(v) end
    if t == "string" then return text(v) end
    if t == "boolean" then return tostring(v) end
    if t ~= "table" then return "null" end
    if #v > 0 or next(v) == nil then
        local out = {}
        for i = 1, #v do out[i] = encode(v[i]) end
        return "[" .. table.concat(out, ",") .. "]"
    end
    return object(v)
end
M.encode = encode

-- null -> nil, recursively (cjson gives a sentinel).
local function strip_null(v)
    if v == cjson.null then return nil end
    if type(v) == "table" then
        for k, x in pairs(v) do v[k] = strip_null(x) end
    end
    return v
end

-- Decode one JSON text: the value (null becomes nil), or nil and a message
-- naming the byte offset ("... at byte N").
function M.decode(s)
    local ok, v = pcall(decoder.decode, s)
    if not ok then return nil, (tostring(v):gsub("at character (%d+)", "at byte %1")) end
    return strip_null(v)
end

-- The learning curve as text: one JSON line per record, as in the metrics file.
function M.curve_text(curve)
    local out = {}
    for i, rec in ipairs(curve) do out[i] = encode(rec) .. "\n" end
    return table.concat(out)
end

-- Append one record to the metrics file, whole or not at all: a failed
-- write (a full disk, /dev/full) leaves the file as it was, without a
-- partial last line, and raises "metrics file PATH: cannot write: reason".
function M.append(path, rec)
    local ok, err = core.table.append_whole(path, encode(rec) .. "\n")
    if not ok then error("metrics file " .. err, 0) end
end

-- Refuse to replace anything but a regular file (or nothing): a symlink,
-- device, fifo or directory at path is left alone and named in the error.
function M.check_target(path)
    local kind, err = core.table.target_kind(path)
    if not kind then error("metrics file " .. err, 0) end
    if kind ~= "file" and kind ~= "missing" then
        error(("metrics file %s: is a %s, not a regular file: not replaced"):format(path, kind), 0)
    end
end

-- Copy to f the lines of the file at path before its first record of an
-- epoch >= before, one line at a time (nothing without before or file).
local function copy_before(f, path, before)
    local old = before and io.open(path, "rb")
    if not old then return true end
    for line in old:lines() do
        local rec = M.decode(line)
        if type(rec) == "table" and type(rec.epoch) == "number" and rec.epoch >= before then break end
        local ok, err = f:write(line, "\n")
        if not ok then old:close() return nil, err end
    end
    old:close()
    return true
end

-- Replace the metrics file's content with text (written to PATH.tmp,
-- flushed, renamed), so that its lines continue where a saved run's stopped.
-- before (an epoch or nil): text is a curve that starts at that epoch
-- (crescent.epoch keeps the last records only), so the file's lines of the
-- epochs before it are kept ahead of text.
function M.rewrite(path, text, before)
    M.check_target(path)
    local tmp = path .. ".tmp"
    M.check_target(tmp)
    local f, err = io.open(tmp, "wb")
    if not f then error("cannot rewrite metrics file: " .. err, 0) end
    local ok, werr = copy_before(f, path, before)
    if ok then ok, werr = f:write(text) end
    if ok then ok, werr = f:flush() end
    local cok, cerr = f:close()
    if not ok or not cok then
        os.remove(tmp)
        error(("cannot rewrite metrics file %s: %s"):format(path, tostring(werr or cerr)), 0)
    end
    local rok, rerr = os.rename(tmp, path)
    if not rok then os.remove(tmp) error("cannot rewrite metrics file: " .. tostring(rerr), 0) end
end

return M
