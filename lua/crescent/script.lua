-- crescent.script: what the example job scripts (examples/*.lua) share.
--
-- script.options(me, argv, opt, accept): parse the script's own options (the
-- words after "--" on the crescent command line: name=value, --name=value or
-- --name value) into opt, which holds the defaults. accept[name] is "number"
-- (converted with tonumber) or "string"; any other name is refused:
--   examples/mf.lua: unknown option 'epoch'
--   examples/mf.lua: option lr needs a number, got 'fast'
-- Errors carry no position (the script's name is in the message). Returns
-- opt and the set of names given.
--
-- script.hot_keys(counts): the NuPS heuristic (section 3.4) over the keys of
-- several tables together: counts[t][k + 1] is the expected number of
-- accesses of key k of table t; returns hot[t] = the keys whose count exceeds
-- 100 times the mean over all keys of all tables (0-based, ascending), for
-- manage = { replicate = hot[t], relocate = "rest" }.
--
-- script.check_manage(me, name), script.manage(name, tables, counts): the
-- examples' manage= option (docs/management.md): classic, relocate,
-- replicate, hot (hot_keys above over the tables together), auto or nups
-- (decision scripts; counts[t] gives table t its expected frequencies).
-- script.census(tables): "E:repl=0,reloc=12,classic=116638 R:...", the
-- keys of each table in each technique now.
local M = {}

M.MANAGES = { "auto", "nups", "classic", "relocate", "replicate", "hot" }

function M.check_manage(me, name)
  for _, m in ipairs(M.MANAGES) do if m == name then return end end
  error(("%s: unknown manage '%s' (%s)"):format(me, name, table.concat(M.MANAGES, ", ")), 0)
end

-- Returns hot (hot_keys' answer) for manage=hot.
function M.manage(name, tables, counts)
  if name == "hot" then
    local hot = M.hot_keys(counts)
    for t, T in ipairs(tables) do T:manage { replicate = hot[t], relocate = "rest" } end
    return hot
  end
  for t, T in ipairs(tables) do
    if (name == "auto" or name == "nups") and counts and counts[t] then T:frequencies(counts[t]) end
    if name ~= "classic" then T:manage(name) end
  end
end

function M.census(tables)
  local out = {}
  for _, T in ipairs(tables) do
    local r, l, c = T:census()
    out[#out + 1] = ("%s:repl=%d,reloc=%d,classic=%d"):format(T.name, r, l, c)
  end
  return table.concat(out, " ")
end

function M.options(me, argv, opt, accept)
  local given, i = {}, 1
  while i <= #argv do
    local a = argv[i]
    local k, v = a:match("^%-%-([%w_]+)=(.*)$")
    if not k then k, v = a:match("^([%w_]+)=(.*)$") end
    if not k then
      k = a:match("^%-%-([%w_]+)$")
      if not k then error(me .. ": unexpected argument '" .. a .. "'", 0) end
      i = i + 1
      v = argv[i]
      if v == nil then error(me .. ": option --" .. k .. " needs a value", 0) end
    end
    if not accept[k] then error(me .. ": unknown option '" .. k .. "'", 0) end
    if accept[k] == "number" then
      local n = tonumber(v)
      if not n then error(("%s: option %s needs a number, got '%s'"):format(me, k, v), 0) end
      v = n
    end
    opt[k], given[k] = v, true
    i = i + 1
  end
  return opt, given
end

function M.hot_keys(counts)
  local total, n = 0, 0
  for _, c in ipairs(counts) do
    for k = 1, #c do total = total + c[k] end
    n = n + #c
  end
  local limit, hot = 100 * total / math.max(n, 1), {}
  for t, c in ipairs(counts) do
    hot[t] = {}
    for k = 1, #c do
      if c[k] > limit then hot[t][#hot[t] + 1] = k - 1 end
    end
  end
  return hot
end

-- script.resume(job, path, say, name): a job script's `checkpoint=` option
-- (examples/mf.lua, kge.lua, word2vec.lua): if the file at path exists, load
-- it (job:load, docs/checkpoints.md) and say so (unless name is nil);
-- true if it did. The caller's loop then runs from job.epochs + 1 and saves
-- after every epoch. Without a path, the run's --checkpoint (crescent run).
function M.resume(job, path, say, name)
  path = path or (job._ck and job._ck.path)
  local f = path and io.open(path, "rb")
  if not f then return false end
  f:close()
  job:load(path)
  if name then say(("%s: resumed from %s after epoch %d"):format(name, path, job.epochs)) end
  return true
end

-- script.traffic(job): the traffic and access counters of all nodes
-- (job:stats(), docs/management.md), summed: keys_remote, bytes_remote,
-- reloc_bytes, sync_bytes, rows_in, remote, forwarded, shared, replica,
-- local (keys served at their home on the worker's node), skipped
-- (localize calls for keys not managed by relocation). The
-- examples' "manage result" line reports their change over the epochs.
function M.traffic(job)
  local t = { keys_remote = 0, bytes_remote = 0, reloc_bytes = 0, sync_bytes = 0, rows_in = 0, remote = 0, forwarded = 0,
              shared = 0, replica = 0, ["local"] = 0, skipped = 0 }
  for _, n in ipairs(job:stats().nodes) do
    local a, rl, rp = n.access or {}, n.relocation or {}, n.replica or {}
    t.bytes_remote, t.keys_remote = t.bytes_remote + (n.bytes_remote or 0), t.keys_remote + (n.keys_remote or 0)
    t.reloc_bytes, t.rows_in = t.reloc_bytes + (rl.bytes or 0), t.rows_in + (rl.rows_in or 0)
    t.sync_bytes = t.sync_bytes + (rp.bytes_sent or 0)
    t.remote, t.forwarded, t.shared = t.remote + (a.remote or 0), t.forwarded + (a.forwarded or 0), t.shared + (a.shared or 0)
    t.replica = t.replica + (rp.reads or 0) + (rp.updates or 0)
    t["local"], t.skipped = t["local"] + (a["local"] or 0), t.skipped + (rl.skipped or 0)
  end
  return t
end

return M
