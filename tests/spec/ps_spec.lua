-- crescent.ps: the job API in one process (--nodes 1: in-process node, no
-- sockets) and with two spawned node processes.
local cr = require "crescent"
local ps = require "crescent.ps"
ps.quiet = true
local root = os.getenv("CRESCENT_ROOT") or "."
local model = root .. "/tests/models/sandbox.lua"

describe("crescent.ps serialization", function()
  local core = cr.core.ps
  it("round-trips plain data", function()
    local v = { 1, 2.5, "a\"b\n\0c", true, { x = -1, [10] = 1 / 0 }, n = -(1 / 0), big = math.maxinteger }
    assert.are.same(v, core.deserialize(core.serialize(v)))
    assert.is_true(math.type(core.deserialize(core.serialize(3))) == "integer")
    assert.is_true(math.type(core.deserialize(core.serialize(3.0))) == "float")
  end)
  it("round-trips awkward numbers and strings", function()
    local v = { 1e-300, -2.5e300, 0.1, -0.0, math.mininteger, "true", "os.exit()", "[[x]]", "\\\"", ["k-1"] = "--" }
    assert.are.same(v, core.deserialize(core.serialize(v)))
    local nan = core.deserialize(core.serialize(0 / 0))
    assert.is_true(nan ~= nan)
  end)
  it("evaluates only plain literals: no names, so no loop, call or method", function()
    for _, code in ipairs { "os.exit(3)", "{(function() while true do end end)()}", '{("x"):rep(1e9)}',
                            "x", "{a=b}", "{a==1}", "[[long]]", "'single'", "{1} -- [[\nfoo]]" } do
      assert.has_error(function() core.deserialize(code) end,
        "cannot deserialize: not plain data (only literals of numbers, strings, booleans and tables)")
    end
    assert.are.same({ true, false, nil, -1, 2 }, core.deserialize("{true,false,nil,-1,(2)}"))
    assert.are.same({ node = 1, ["x y"] = { wait = 0.5 } }, core.deserialize('{node = 1, ["x y"] = {wait=0.5}}'))
  end)
  it("refuses functions and userdata, naming the field", function()
    assert.has_error(function() core.serialize{ data = { f = print } } end,
      "value.data.f: cannot send a function (plain data only)")
  end)
  it("parses policy specs", function()
    local name, opts = ps.parse_policy("ssp:staleness=2,mode=x")
    assert.are.equal("ssp", name)
    assert.are.same({ staleness = 2, mode = "x" }, opts)
    assert.has_error(function() ps.parse_policy("ssp:oops") end)
  end)
end)

describe("a one-node job", function()
  local job
  setup(function()
    job = cr.job{ nodes = 1, workers = 2, seed = 5, policy = { "ssp", staleness = 1 } }
    job:table{ name = "T", keys = 7, dim = 2, init = cr.init.uniform(0, 1), optimizer = cr.optim.assign() }
    job:model(model, {})
  end)
  teardown(function() job:close() end)

  it("registers the job and its tables, setting no global", function()
    assert.is_nil(rawget(_G, "job"))
    assert.are.equal(job, require("crescent.job").current())
    assert.are.equal(job.tables.T, job.T)
  end)
  it("sandboxes workers", function()
    local r = job:call("probe", { echo = "hi" }).results
    assert.are.equal(2, #r)
    for i, w in ipairs(r) do
      assert.is_false(w.io); assert.is_false(w.os_execute); assert.is_false(w.debug)
      assert.is_false(w.require); assert.is_false(w.loadfile); assert.is_true(w.binary_load)
      assert.is_true(w.cr_util); assert.is_true(w.kernels); assert.is_true(w.undefined)
      assert.are.equal(("0/1/%d/2/2"):format(i - 1), w.ctx)
      assert.are.equal(2, w.dim); assert.are.equal(7, w.keys)
      assert.are.equal(0, w.lo); assert.are.equal(7, w.hi); assert.are.equal(0, w.owner_last)
      assert.truthy(tostring(w.owner_huge):find("owner: key 9223372036854775807 out of range [0, 7)", 1, true))
      assert.are.equal("hi", w.echo)
    end
  end)
  it("reports a worker's error with worker, script and line; the job stays usable", function()
    local j2 = cr.job{ nodes = 1, workers = 1 }
    j2:table{ name = "T", keys = 3, dim = 1 }
    j2:model(model, {})
    local ok, err = pcall(j2.call, j2, "io_open", {})
    assert.is_false(ok)
    assert.truthy(err:find("worker 0 (node 0): tests/models/sandbox.lua:24: undefined global 'io'", 1, true), err)
    assert.are.equal(1, #j2:stats().workers)
    local ok2, err2 = pcall(j2.call, j2, "nosuch", {})
    assert.is_false(ok2)
    assert.truthy(err2:find("worker 0 (node 0): the model has no function 'nosuch'", 1, true), err2)
    assert.is_true(j2:call("probe", {}).results[1].cr_util)
    j2:close()
    assert.has_error(function() j2:stats() end, "the job is closed")
  end)
  it("gives every command the job's tables, even after a model dropped ctx.tables", function()
    job:call("drop_tables", {})
    local r = job:call("probe", {}).results
    assert.are.equal(2, #r)
    assert.are.equal(7, r[1].keys)
  end)
  it("reads and writes rows from the scheduler; pull keeps key order and duplicates", function()
    local before = job.T:get(3)
    assert.are.equal(2, #before)
    assert.is_true(before[1] >= 0 and before[1] < 1)
    job.T:set(3, { 5, 6 })
    job.T:set(1, { -1, -2 })
    local rows = job:call("rows", {}).results[1]
    assert.are.same({ { 5, 6 }, { -1, -2 }, { 5, 6 } }, rows)
  end)
  it("completes async requests in any order; a pull sees an earlier push", function()
    local r = job:call("async", {}).results[1]
    assert.are.same({ 9, 9 }, r.rb)
    assert.is_true(r.push)
    assert.is_false(r.twice)
  end)
  it("after a wait cut short (Ctrl-C), the next command gets its own answers", function()
    local ok, err = pcall(job.rt.call, job.rt, "slow", "{}", function() error("interrupted!") end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("interrupted!", 1, true))
    local r = job:call("probe", { echo = "next" }).results
    assert.are.equal(2, #r)
    assert.are.equal("next", r[1].echo)
    assert.are.equal("next", r[2].echo)
  end)
  it("meets at barriers", function()
    local r = job:call("barrier", {}).results
    assert.is_true(r[2].waited > 0.1, "worker 1 waited for the slow worker 0")
  end)
  it("rejects bad arguments at the caller's line", function()
    assert.has_error(function() job:table{ name = "X", keys = 0, dim = 1 } end,
      "job:table{}: keys must be a positive integer")
    assert.has_error(function() job:table{ name = "X", keys = 1, dim = 1, lr = 3 } end,
      "job:table{}: unknown option 'lr'")
    assert.has_error(function() job.T:get(7) end, "T:get: key 7 out of range [0, 7)")
    assert.has_error(function() cr.optim.sgd{ rate = 1 } end)
  end)
  it("initializes identically whatever the node count", function()
    local j2 = cr.job{ nodes = 2, workers = 0, seed = 5 }
    j2:table{ name = "T", keys = 7, dim = 2, init = cr.init.uniform(0, 1) }
    local j1 = cr.job{ nodes = 1, workers = 0, seed = 5 }
    j1:table{ name = "T", keys = 7, dim = 2, init = cr.init.uniform(0, 1) }
    for k = 0, 6 do assert.are.same(j1.T:get(k), j2.T:get(k)) end
    j2:close(); j1:close()
  end)
end)

describe("a two-node job (spawned node processes)", function()
  it("moves rows between nodes, compressed on request, with the same values", function()
    local job = cr.job{ nodes = 2, workers = 1 }
    job:table{ name = "P", keys = 20000, dim = 8, optimizer = cr.optim.add() }
    job:table{ name = "Z", keys = 20000, dim = 8, optimizer = cr.optim.add(), compress = true }
    job:model(model, {})
    local r1 = job:call("fill", { table = "P" })
    local s1 = job:stats()
    local r2 = job:call("fill", { table = "Z" })
    local s2 = job:stats()
    for _, w in ipairs(r2.results) do assert.is_true(w.last >= 19999) end -- sees its own push
    assert.are.same(job.P:get(12345), job.Z:get(12345))
    assert.are.equal(2 * 12345, job.Z:get(12345)[1])
    for i, n in ipairs(s1.nodes) do
      assert.are.equal(i - 1, n.node)
      assert.is_true(n.pulls >= 1 and n.pushes >= 1, "pulls and pushes counted")
      assert.is_true(n.messages_remote >= 2 and n.bytes_local > 0 and n.keys_remote > 0)
    end
    assert.are.equal(2, #s1.workers)
    local plain = s1.nodes[1].bytes_remote + s1.nodes[2].bytes_remote
    local zipped = s2.nodes[1].bytes_remote + s2.nodes[2].bytes_remote - plain
    assert.is_true(zipped < plain * 0.75, ("compressed %d bytes vs %d plain"):format(zipped, plain))
    job:close()
  end)
end)
