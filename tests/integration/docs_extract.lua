-- Extract the tagged examples of a markdown file (used by docs_examples.sh).
-- A fenced block is an example when the line before its opening fence is
--   <!-- doc-test: KIND ARGS... -->
-- KIND: file NAME (save the block as NAME), run ARGS (crescent run BLOCK ARGS),
-- repl ARGS (pipe the block into crescent repl ARGS), sh (bash -e BLOCK).
-- A line <!-- doc-test-setup: COMMAND --> (no block) runs COMMAND with bash
-- in the page's directory, for what an example needs but a reader has.
-- Writes each block to OUTDIR/NNN.block and prints one line per example:
--   LINE KIND ARGS BLOCKFILE, separated by \x1f (args may be empty)
local path, outdir = arg[1], arg[2]
local f = assert(io.open(path))
local n, lineno, tag, tagline, block, fence = 0, 0, nil, nil, nil, nil
for line in f:lines() do
  lineno = lineno + 1
  if block then
    if line:match("^%s*" .. fence .. "%s*$") then
      n = n + 1
      local name = string.format("%s/%03d.block", outdir, n)
      local out = assert(io.open(name, "w"))
      out:write(table.concat(block, "\n"), "\n")
      out:close()
      print(string.format("%d\31%s\31%s\31%s", tagline, tag.kind, tag.args, name))
      block, tag = nil, nil
    else
      block[#block + 1] = line
    end
  else
    local setup = line:match("^<!%-%- doc%-test%-setup: (.-)%s*%-%->%s*$")
    if setup then print(string.format("%d\31setup\31%s\31-", lineno, setup)) end
    local kind, args = line:match("^<!%-%- doc%-test: (%a+)%s*(.-)%s*%-%->%s*$")
    local fc = line:match("^%s*(```+)")
    if kind then
      tag, tagline = { kind = kind, args = args }, lineno
    elseif fc and tag then
      block, fence = {}, fc
    elseif line:match("%S") then
      if tag then
        io.stderr:write(string.format("%s:%d: doc-test tag not followed by a fenced block\n", path, tagline))
        os.exit(1)
      end
    end
  end
end
if block then
  io.stderr:write(string.format("%s:%d: unterminated fenced block\n", path, tagline))
  os.exit(1)
end
