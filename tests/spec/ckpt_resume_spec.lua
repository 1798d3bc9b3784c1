-- job:save / job:load of the resume state (epoch counter, learning curve,
-- learning rates, policy, job.state), version 1 files, damaged metadata.
local cr = require "crescent"
local ps = require "crescent.ps"
ps.quiet = true
local root = os.getenv("CRESCENT_ROOT") or "."
local model = root .. "/tests/models/count.lua"

local files = require "spec_files"
local read, write = files.read, files.write
local dir, path = files.tmpdir()

local function open(o)
  o = o or {}
  local job = cr.job{ nodes = 1, workers = 1, seed = o.seed or 5, policy = o.policy, metrics = o.metrics }
  job:table{ name = "C", keys = 4, dim = 1, optimizer = cr.optim.add() }
  job:model(model, {})
  return job
end

-- with_version(src, dst, v): the file with another version in its header
local with_version = dofile(root .. "/tests/integration/jobs/ckpt_version.lua")

describe("json", function()
  it("decodes what the metrics file holds", function()
    local rec = { epoch = 3, loss = 0.125, name = "a\"b\\c\n", ok = true, list = { 1, 2.5, "x" }, sub = { k = -1e-05 } }
    assert.are.same(rec, ps.json_decode(ps.json(rec)))
    assert.are.same({ a = 1 }, ps.json_decode('{"a":1,"b":null}'))
    for _, bad in ipairs { '{"a":}', '{"a":1', '[1,2', '"x', '{"a":1} x', "", "nul" } do
      local v, err = ps.json_decode(bad)
      assert.is_nil(v, bad)
      assert.truthy(err:find("at byte"), bad)
    end
  end)
end)

describe("job:save and job:load", function()
  it("bring back epochs, curve, learning rates, policy and job.state", function()
    local a = open{ policy = "ssp:staleness=1" }
    for e = 1, 2 do
      a:epoch{ steps = 1 }
      a:log{ epoch = e, loss = 10 / e, lr = 0.5, note = "e" .. e }
    end
    a:log{ what = "not an epoch record" }
    a.state.lr, a.state.prev, a.state.hist = 0.25, 1 / 0, { 1, 2 }
    a.state.text = "a\"b\n\0c while \\ function"
    a.C:set_lr(0.25)
    assert.are.equal(2, #a.curve)
    assert.are.equal(5.0, a.curve[2].loss)
    assert.is_true(a:save(path("a.ckpt")))
    a:close()

    local b = open{ seed = 5, metrics = path("b.jsonl") }
    assert.are.equal("bsp", b.policy_name)
    local ok, note = b:load(path("a.ckpt"))
    assert.is_true(ok)
    assert.is_nil(note)
    assert.are.equal(2, b.epochs)
    assert.are.equal(2, #b.curve)
    assert.are.same({ epoch = 2, loss = 5.0, lr = 0.5, note = "e2", policy = "ssp" },
                    (function() local r = b.curve[2]; r.seconds = nil; return r end)())
    assert.are.same({ lr = 0.25, prev = 1 / 0, hist = { 1, 2 }, text = "a\"b\n\0c while \\ function" }, b.state)
    assert.are.equal(0.25, b.C.lr)
    assert.are.equal("ssp", b.policy_name)
    assert.are.equal(1, b.policy_opts.staleness)
    assert.are.equal("ssp", b:stats().policy)
    assert.are.equal(2, b:stats().workers[1].clock) -- one clock per step, two epochs of one step
    -- the metrics file holds the restored curve, then goes on
    local lines = {}
    for l in read(path("b.jsonl")):gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(2, #lines)
    assert.truthy(lines[2]:find('"epoch":2,', 1, true))
    b:epoch{ steps = 1 }
    b:log{ epoch = b.epochs, loss = 1 }
    assert.are.equal(3, b.epochs)
    assert.are.equal(3, b.curve[3].epoch)
    assert.are.equal(3, b:stats().workers[1].clock)
    assert.has_error(function() b.rt:set_clocks({ 1, 2 }, { 0, 0 }) end,
      "bad argument #1 to 'set_clocks' (1 integers expected)")
    assert.has_error(function() b.rt:set_clocks({ -1 }, { 0 }) end,
      "bad argument #1 to 'set_clocks' (entry 1: non-negative integer expected)")
    b.rt:set_clocks({ 0 }, { 0 }) -- backwards too
    assert.are.equal(0, b:stats().workers[1].clock)
    assert.truthy(read(path("b.jsonl")):match('"epoch":3,[^\n]*\n$'))
    b:close()
  end)

  it("keep the curve to its last CURVE_MAX records; job:load keeps the metrics file's earlier lines", function()
    local ep = require "crescent.epoch"
    local max = ep.CURVE_MAX
    ep.CURVE_MAX = 4
    local ok, err = pcall(function()
      local a = open{ metrics = path("t.jsonl") }
      for e = 1, 10 do
        a:epoch{ steps = 1 }
        a:log{ epoch = e, loss = e }
        assert.is_true(#a.curve <= 4)
      end
      assert.are.same({ 7, 8, 9, 10 }, { a.curve[1].epoch, a.curve[2].epoch, a.curve[3].epoch, a.curve[4].epoch })
      a:save(path("t.ckpt"))
      local saved = read(path("t.jsonl"))
      a:epoch{ steps = 1 }
      a:log{ epoch = 11, loss = 11 }
      a:close()
      local b = open{ metrics = path("t.jsonl") }
      b:load(path("t.ckpt"))
      assert.are.equal(10, b.epochs)
      assert.are.equal(4, #b.curve)
      -- epochs 1 to 10: 1 to 6 as the file had them, 7 to 10 from the curve
      local was, now = {}, {}
      for l in saved:gmatch("[^\n]+") do was[#was + 1] = l end
      for l in read(path("t.jsonl")):gmatch("[^\n]+") do now[#now + 1] = l end
      assert.are.equal(10, #now)
      for e = 1, 10 do
        if e <= 6 then assert.are.equal(was[e], now[e]) end
        assert.truthy(now[e]:find(('"epoch":%d,"loss":%d,'):format(e, e), 1, true), now[e])
      end
      b:close()
    end)
    ep.CURVE_MAX = max
    assert(ok, err)
  end)

  it("says so when the job's seed is not the saved one", function()
    local a = open{ seed = 5 }
    a:save(path("s.ckpt"))
    a:close()
    local b = open{ seed = 6 }
    local ok, note = b:load(path("s.ckpt"))
    assert.is_true(ok)
    assert.are.equal("job:load: note: " .. path("s.ckpt") .. " was saved by a job with seed 5, this job has seed 6: "
      .. "its epochs draw other random orders than the saved run's would have", note)
    b:close()
  end)

  it("loads a version 1 file as tables only", function()
    local a = open()
    a:epoch{ steps = 3 }
    a:save(path("v2.ckpt"))
    a:close()
    with_version(path("v2.ckpt"), path("v1.ckpt"), 1)
    local b = open()
    local ok1, note = b:load(path("v1.ckpt"))
    assert.is_true(ok1)
    assert.are.equal("job:load: note: " .. path("v1.ckpt") .. " is a version 1 checkpoint: tables only (no epoch "
      .. "counter, learning curve, learning rates or clocks); the job keeps its own", note)
    assert.are.equal(0, b.epochs)
    assert.are.equal(0, #b.curve)
    assert.are.same({ 3.0 }, b.C:get(0)) -- the tables did load
    with_version(path("v2.ckpt"), path("v3.ckpt"), 3)
    local ok, err = pcall(b.load, b, path("v3.ckpt"))
    assert.is_false(ok)
    assert.truthy(err:find("v3.ckpt: checkpoint version 3 not supported (this build reads versions 1 to 2)", 1, true))
    b:close()
  end)

  it("refuses bad resume metadata before touching the tables", function()
    local function craft(name, key, value)
      local good = {
        ["crescent.epochs"] = "2", ["crescent.seed"] = "5", ["crescent.policy"] = "bsp",
        ["crescent.policy_opts"] = "{}", ["crescent.curve"] = '{"epoch":1}\n{"epoch":2}\n',
        ["crescent.lr"] = '{["C"]=0.5}', ["crescent.state"] = "{}", ["crescent.clocks"] = "{}",
      }
      good[key] = value
      local w = assert(cr.core.ps.ckpt_writer(path(name)))
      for k, v in pairs(good) do w:meta(k, v) end
      w:table("C", 4, 1, "add", 0)
      w:rows(cr.core.util.matrix{ { 9 }, { 9 }, { 9 }, { 9 } })
      w:commit()
      return path(name)
    end
    local b = open()
    local cases = {
      { "crescent.curve", '{"epoch":1}\n{"epoch":\n', "bad metadata crescent.curve: record 2:" },
      { "crescent.epochs", "-1", "bad metadata crescent.epochs: not a non-negative integer" },
      { "crescent.lr", '{["X"]=1}', "bad metadata crescent.lr: table 'X' is not part of this job" },
      { "crescent.state", "os.exit(3)", "bad metadata crescent.state: cannot deserialize: not plain data" },
      { "crescent.state", "{(function() while true do end end)()}", "bad metadata crescent.state: cannot deserialize: not plain data" },
      { "crescent.state", '{("x"):rep(1e9)}', "bad metadata crescent.state: cannot deserialize: not plain data" },
      { "crescent.state", '{1,', "bad metadata crescent.state: cannot deserialize" },
      { "crescent.clocks", '{{["worker"]=0}}', "bad metadata crescent.clocks: entry 1:" },
      { "crescent.policy", "nope", "unknown consistency policy 'nope'" },
      { "crescent.seed", nil, "metadata crescent.seed missing" },
    }
    for i, c in ipairs(cases) do
      local ok, err = pcall(b.load, b, craft("bad" .. i .. ".ckpt", c[1], c[2]))
      assert.is_false(ok, c[1])
      assert.truthy(err:find(c[3], 1, true), err)
      assert.are.same({ 0.0 }, b.C:get(0))
      assert.are.equal(0, b.epochs)
    end
    assert.is_true(b:load(craft("good.ckpt", "crescent.state",
      '{["s"]="while \\" function",["n"]=1e+300,["m"]=-1.5e-05,["z"]=(0/0),["i"]=(-1/0),["t"]={true,false,nil}}')))
    assert.are.equal('while " function', b.state.s)
    assert.are.equal(-1 / 0, b.state.i)
    assert.are.same({ 9.0 }, b.C:get(0))
    assert.are.equal(2, b.epochs)
    b:close()
  end)

  -- probe defect 3 (Lua half): the metrics rewrite at job:load replaces only
  -- a regular file (or none); a symlink is left alone, and so are the tables.
  it("refuses to rewrite a metrics file that is a symlink, before any row is written", function()
    local a = open()
    a:epoch{ steps = 2 }
    a:log{ epoch = 1, loss = 1 }
    a:save(path("m.ckpt"))
    a:close()
    write(path("victim"), "keep me\n")
    os.remove(path("link.jsonl"))
    assert(os.execute(("ln -s %q %q"):format(path("victim"), path("link.jsonl"))))
    local b = open{ metrics = path("link.jsonl") }
    local ok, err = pcall(b.load, b, path("m.ckpt"))
    assert.is_false(ok)
    assert.truthy(err:find("job:load: metrics file " .. path("link.jsonl") .. ": is a link, not a regular file", 1, true), err)
    assert.are.equal("keep me\n", read(path("victim")))
    assert.are.same({ 0.0 }, b.C:get(0))
    assert.are.equal(0, b.epochs)
    b:close()
    local c = open{ metrics = "/dev/null" }
    local ok2, err2 = pcall(c.load, c, path("m.ckpt"))
    assert.is_false(ok2)
    assert.truthy(err2:find("metrics file /dev/null: is a device", 1, true), err2)
    c:close()
  end)

  -- probe defect 8: a write error on the metrics file is an error naming it
  it("raises on a metrics write error (/dev/full), naming the file", function()
    local f = io.open("/dev/full", "a")
    if not f then return end -- no /dev/full here
    f:close()
    local a = open{ metrics = "/dev/full" }
    a:epoch{ steps = 1 }
    local ok, err = pcall(a.log, a, { epoch = 1, loss = 1 })
    assert.is_false(ok)
    assert.truthy(err:find("job:log: metrics file /dev/full: cannot write:", 1, true), err)
    a:close()
  end)

  it("refuses a job.state that is not plain data, leaving no file", function()
    local a = open()
    a.state.f = print
    local ok, err = pcall(a.save, a, path("f.ckpt"))
    assert.is_false(ok)
    assert.truthy(err:find("job:save: job.state value.f: cannot send a function", 1, true), err)
    assert.is_nil(io.open(path("f.ckpt")))
    assert.is_nil(io.open(path("f.ckpt.tmp")))
    a:close()
  end)
end)

teardown(function() files.remove_dir(dir) end)
