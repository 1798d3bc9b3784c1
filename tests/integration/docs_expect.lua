-- docs_expect.lua BLOCK OUTPUT: every "--> text" comment of an example must
-- appear as a line of its output, in the same order (used by docs_examples.sh).
local block, output = arg[1], arg[2]
local want = {}
for line in io.lines(block) do
  local e = line:match("%-%-> (.-)%s*$")
  if e then want[#want + 1] = e end
end
local i = 1
for line in io.lines(output) do
  if want[i] and line:gsub("%s+$", "") == want[i] then i = i + 1 end
end
if want[i] then
  io.stderr:write(("expected output line not found (in order): %s\n"):format(want[i]))
  os.exit(1)
end
