-- Rewrite a checkpoint with another format version in its header (and a
-- footer crc that matches): how a version 1 file written before the resume
-- state existed looks. As a script: crescent run ckpt_version.lua SRC DST V.
-- As a module (dofile): returns with_version(src, dst, v).

-- crc32 (zlib's)
local function crc32(s)
  local crc = 0xffffffff
  for i = 1, #s do
    crc = crc ~ s:byte(i)
    for _ = 1, 8 do crc = (crc >> 1) ~ (0xedb88320 & -(crc & 1)) end
  end
  return crc ~ 0xffffffff
end

local function with_version(src, dst, v)
  local f = assert(io.open(src, "rb"))
  local s = f:read("a")
  f:close()
  local body = s:sub(1, 8) .. string.pack("<I4", v) .. s:sub(13, #s - 16)
  f = assert(io.open(dst, "wb"))
  f:write(body, string.pack("<I8I4", #body, crc32(body)), "CKND")
  f:close()
end

if arg and arg[0] and arg[0]:match("ckpt_version%.lua$") and arg[3] then
  with_version(arg[1], arg[2], math.tointeger(tonumber(arg[3])))
end
return with_version
