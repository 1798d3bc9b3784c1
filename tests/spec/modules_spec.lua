-- The modules ps.lua was split into: placement and initializer kinds from C
-- (core.table), policy checking without the scheduler's globals, JSON through
-- lua-cjson, the current job without a global, and their size.
local cr = require "crescent"
local core = require "crescent.core"
local policy = require "crescent.policy"
local metrics = require "crescent.metrics"
local jobs = require "crescent.job"
require("crescent.ps").quiet = true
local root = os.getenv("CRESCENT_ROOT") or "."

local files = require "spec_files"
local write, exists = files.write, files.exists
local dir, path = files.tmpdir()
teardown(function() files.remove_dir(dir) end)

describe("core.table", function()
  it("places keys by the C rule: node i owns [i*block, min((i+1)*block, keys))", function()
    local T = core.table
    assert.are.equal(4, T.block(10, 3))
    assert.are.same({ 0, 4 }, { T.range(10, 3, 0) })
    assert.are.same({ 8, 10 }, { T.range(10, 3, 2) })
    assert.are.same({ 2, 2 }, { T.range(2, 4, 3) }) -- a node left without keys
    for k = 0, 9 do assert.are.equal(k // 4, T.owner(10, 3, k)) end
    assert.has_error(function() T.owner(10, 3, 10) end)
    assert.has_error(function() T.range(10, 3, 3) end)
    assert.has_error(function() T.block(0, 1) end)
  end)
  it("gives the initializer kinds of cr_table.h, which cr.init uses", function()
    assert.are.same({ zeros = 0, uniform = 1, normal = 2 }, core.table.init)
    assert.are.equal(core.table.init.normal, cr.init.normal(0, 1).kind)
    assert.are.equal(core.table.init.uniform, cr.init.uniform(0, 1).kind)
    assert.are.equal(core.table.init.zeros, cr.init.zeros().kind)
  end)
  it("tells what a write would replace (target_kind, lstat)", function()
    local K = core.table.target_kind
    write(path("f"), "x")
    assert.are.equal("file", K(path("f")))
    assert.are.equal("missing", K(path("nothing")))
    assert.are.equal("directory", K(dir))
    assert.are.equal("device", K("/dev/null"))
    assert(os.execute(("ln -sf %q %q"):format(path("f"), path("l"))))
    assert.are.equal("link", K(path("l")))
    assert(os.execute(("mkfifo %q"):format(path("p"))))
    assert.are.equal("fifo", K(path("p")))
  end)
end)

describe("policy checking on the scheduler", function()
  local function check(src, opts)
    write(path("pol.lua"), src)
    return pcall(policy.check, path("pol.lua"), src, opts or {})
  end
  local OK = "return function(o) return { may_proceed = function() return true end } end"

  it("accepts a plain policy and the shipped ones", function()
    assert.is_true((check(OK)))
    for _, name in ipairs { "bsp", "ssp", "asp" } do
      local p, src = policy.source(name)
      policy.check(p, src, {})
    end
  end)
  it("gives a policy file no os, io, require, bytecode load or debug (probe defect 2)", function()
    local marker = path("ran")
    local ok, err = check(("os.execute('touch %s') " .. OK):format(marker))
    assert.is_false(ok)
    assert.truthy(err:find("^bad policy file: "), err)
    assert.is_false(exists(marker))
    for _, what in ipairs { "io.open('/etc/passwd')", "require('os')", "load('return 1', 'c', 'b')", "debug.getinfo(1)",
                            "getmetatable('').__index.debug.sethook()", "string.dump(print)", "dofile('/dev/null')" } do
      local ok2, err2 = check(what .. "\n" .. OK)
      assert.is_false(ok2, what)
      assert.truthy(err2:find("^bad policy file: "), err2)
    end
    -- nor through the constructor, run with the options
    local ok3 = check("return function(o) os.exit(3) end")
    assert.is_false(ok3)
  end)
  it("stops a policy that loops forever", function()
    local ok, err = check("while true do end")
    assert.is_false(ok)
    assert.truthy(err:find("^bad policy file: .*ran longer than"), err)
    local ok2, err2 = check("return function(o) while true do end end")
    assert.is_false(ok2)
    assert.truthy(err2:find("ran longer than", 1, true), err2)
  end)
  it("keeps the error shapes", function()
    local _, e1 = check("return 42")
    assert.truthy(e1:find("bad policy file " .. path("pol.lua") .. ": must return a constructor function(opts)", 1, true), e1)
    local _, e2 = check("return function(o) return {} end")
    assert.truthy(e2:find("the constructor must return a table with may_proceed", 1, true), e2)
    local _, e3 = check("return function(")
    assert.truthy(e3:find("^bad policy file: "), e3)
  end)
  it("refuses options a shipped policy does not take, bsp and asp included (probe defect 12)", function()
    for _, spec in ipairs { "bsp:staleness=2", "asp:x=1", "ssp:staleness=1,bad=2" } do
      local name, opts = policy.parse(spec)
      local p, src = policy.source(name)
      local ok, err = pcall(policy.check, p, src, opts)
      assert.is_false(ok, spec)
      assert.truthy(err:find("bad policy file: " .. name .. ": unknown option", 1, true), err)
    end
  end)
  it("hands the check to core.sandbox.check_policy", function()
    local seen, real = nil, core.sandbox
    core.sandbox = { check_policy = function(src, chunk, opts)
      seen = { src = src, chunk = chunk, opts = opts }
      if opts.fail then return nil, "model script exceeded 64 MB" end
      return true
    end }
    local ok = check(OK, { a = 1 })
    local ok2, err2 = check(OK, { fail = true })
    core.sandbox = real
    assert.is_true(ok)
    assert.is_false(ok2)
    assert.are.equal("bad policy file: model script exceeded 64 MB", err2)
    assert.are.equal(path("pol.lua"), seen.chunk)
    assert.are.equal(OK, seen.src)
  end)
end)

describe("metrics JSON (lua-cjson)", function()
  it("writes sorted keys, %.17g numbers, null for NaN and infinities", function()
    assert.are.equal('{"a":1,"b":0.10000000000000001,"c":null,"d":null,"e":[],"f":"x/y \\"q\\"\\t","g":[1,true]}',
      metrics.encode { b = 0.1, a = 1, c = 0 / 0, d = 1 / 0, e = {}, f = 'x/y "q"\t', g = { 1, true } })
  end)
  it("reads back what it writes, null as nil, and names the byte of an error", function()
    local rec = { epoch = 3, loss = 1 / 3, note = "a\"b\\c\n\1", list = { 1, 2.5, "x" } }
    assert.are.same(rec, metrics.decode(metrics.encode(rec)))
    assert.are.same({ a = 1 }, metrics.decode('{"a":1,"b":null}'))
    local v, err = metrics.decode('{"a":NaN}')
    assert.is_nil(v)
    assert.truthy(err:find("at byte"), err)
  end)
  it("refuses to rewrite anything but a regular file", function()
    write(path("target"), "old\n")
    assert(os.execute(("ln -sf %q %q"):format(path("target"), path("m.jsonl"))))
    local ok, err = pcall(metrics.rewrite, path("m.jsonl"), "new\n")
    assert.is_false(ok)
    assert.truthy(err:find("is a link, not a regular file", 1, true), err)
    local f = assert(io.open(path("target"))); assert.are.equal("old\n", f:read("a")); f:close()
    metrics.rewrite(path("plain.jsonl"), "new\n")
    f = assert(io.open(path("plain.jsonl"))); assert.are.equal("new\n", f:read("a")); f:close()
  end)
end)

describe("the current job", function()
  it("is found without a global (the REPL sets its own `job`: repl_job_global.sh)", function()
    local model = root .. "/tests/models/count.lua"
    local job = cr.job{ nodes = 1, workers = 1 }
    job:table{ name = "C", keys = 2, dim = 1, optimizer = cr.optim.add() }
    job:model(model, {})
    assert.is_nil(rawget(_G, "job"))
    assert.are.equal(job, jobs.current())
    assert.are.equal(job, cr.current())
    job:close()
    assert.is_nil(jobs.current())
  end)
end)

describe("lua/crescent", function()
  it("has no module over 300 lines", function()
    local p = io.popen("ls " .. root .. "/lua/crescent/*.lua")
    local n = 0
    for file in p:lines() do
      local lines = 0
      for _ in io.lines(file) do lines = lines + 1 end
      assert.is_true(lines <= 300, file .. ": " .. lines .. " lines")
      n = n + 1
    end
    p:close()
    assert.is_true(n >= 8)
  end)
  it("exports the job API as before", function()
    for _, k in ipairs { "job", "policy", "init", "optim", "kernels", "data", "eval", "partition", "core" } do
      assert.is_not_nil(cr[k], k)
    end
    local ps = require "crescent.ps"
    for _, k in ipairs { "job", "policy", "parse_policy", "json", "json_decode", "close_all", "home" } do
      assert.is_not_nil(ps[k], k)
    end
  end)
end)
