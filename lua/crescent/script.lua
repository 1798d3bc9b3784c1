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
local M = {}

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

-- script.traffic(job): the traffic and access counters of all nodes
-- (job:stats(), docs/management.md), summed: keys_remote, bytes_remote,
-- reloc_bytes, sync_bytes, rows_in, remote, forwarded, shared, replica. The
-- examples' "manage result" line reports their change over the epochs.
function M.traffic(job)
  local t = { keys_remote = 0, bytes_remote = 0, reloc_bytes = 0, sync_bytes = 0, rows_in = 0, remote = 0, forwarded = 0,
              shared = 0, replica = 0 }
  for _, n in ipairs(job:stats().nodes) do
    local a, rl, rp = n.access or {}, n.relocation or {}, n.replica or {}
    t.bytes_remote, t.keys_remote = t.bytes_remote + (n.bytes_remote or 0), t.keys_remote + (n.keys_remote or 0)
    t.reloc_bytes, t.rows_in = t.reloc_bytes + (rl.bytes or 0), t.rows_in + (rl.rows_in or 0)
    t.sync_bytes = t.sync_bytes + (rp.bytes_sent or 0)
    t.remote, t.forwarded, t.shared = t.remote + (a.remote or 0), t.forwarded + (a.forwarded or 0), t.shared + (a.shared or 0)
    t.replica = t.replica + (rp.reads or 0) + (rp.updates or 0)
  end
  return t
end

return M
