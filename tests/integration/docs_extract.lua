-- Extract the examples of a markdown file (used by docs_examples.sh).
-- A fenced block is an example when the line before its opening fence is
--   <!-- doc-test: KIND ARGS... -->
-- KIND: file NAME (save the block as NAME), run ARGS (crescent run BLOCK ARGS),
-- repl ARGS (pipe the block into crescent repl ARGS), sh (bash -e BLOCK),
-- continue NAME ARGS (append the block to the page's file NAME, creating it,
-- then crescent run NAME ARGS: for a script shown in pieces).
-- A line <!-- doc-test-setup: COMMAND --> (no block) runs COMMAND with bash
-- in the page's directory, for what an example needs but a reader has.
--
-- Exhaustive: every ```sh, ```bash and ```lua block must be an example or be
-- listed in docs_skip.lua (with the reason it cannot run here). An untagged
-- block that is not listed is reported as kind "unrun" (a failure), and so
-- is a skip-list entry that names no block of the page (kind "stale").
--
-- Usage: docs_extract.lua DOC OUTDIR REL SKIPLIST (REL: the DOC's name in the
-- skip list, e.g. docs/repl.md). Writes each block to OUTDIR/NNN.block and
-- prints one line per example:
--   LINE KIND ARGS BLOCKFILE, separated by \x1f (args may be empty)
local path, outdir, rel, skipfile = arg[1], arg[2], arg[3] or arg[1], arg[4]
local skips = {}
if skipfile then skips = dofile(skipfile)[rel] or {} end
local used = {}
local runnable = { sh = true, bash = true, lua = true }

local function emit(line, kind, args, file)
  print(string.format("%d\31%s\31%s\31%s", line, kind, args, file))
end

local function first_line(block)
  for _, l in ipairs(block) do
    if l:match("%S") then return (l:gsub("^%s+", ""):gsub("%s+$", "")) end
  end
  return ""
end

-- An untagged block: listed in the skip list (kind skip, args = the reason)
-- or not run (kind unrun).
local function untagged(startline, block)
  local first = first_line(block)
  for i, s in ipairs(skips) do
    if s[1] == first then
      used[i] = true
      return emit(startline, "skip", s[2], "-")
    end
  end
  emit(startline, "unrun", first, "-")
end

local f = assert(io.open(path))
local n, lineno, tag, tagline, block, fence, lang, start = 0, 0, nil, nil, nil, nil, nil, nil
for line in f:lines() do
  lineno = lineno + 1
  if block then
    if line:match("^%s*" .. fence .. "%s*$") then
      if tag then
        n = n + 1
        local name = string.format("%s/%03d.block", outdir, n)
        local out = assert(io.open(name, "w"))
        out:write(table.concat(block, "\n"), "\n")
        out:close()
        emit(tagline, tag.kind, tag.args, name)
      elseif runnable[lang] then
        untagged(start, block)
      end
      block, tag = nil, nil
    else
      block[#block + 1] = line
    end
  else
    local setup = line:match("^<!%-%- doc%-test%-setup: (.-)%s*%-%->%s*$")
    if setup then emit(lineno, "setup", setup, "-") end
    local kind, args = line:match("^<!%-%- doc%-test: (%a+)%s*(.-)%s*%-%->%s*$")
    local fc, info = line:match("^%s*(```+)%s*(%S*)")
    if kind then
      tag, tagline = { kind = kind, args = args }, lineno
    elseif fc then
      block, fence, lang, start = {}, fc, info:lower(), lineno
    elseif line:match("%S") then
      if tag then
        io.stderr:write(string.format("%s:%d: doc-test tag not followed by a fenced block\n", path, tagline))
        os.exit(1)
      end
    end
  end
end
if block then
  io.stderr:write(string.format("%s:%d: unterminated fenced block\n", path, start))
  os.exit(1)
end
for i, s in ipairs(skips) do
  if not used[i] then emit(0, "stale", s[1], "-") end
end
