-- crescent.manage: the runner of decision scripts (sandboxed), its strict
-- check of what decide returns, and keeping the previous choice, saying
-- why, when a script fails or returns garbage.
local manage = require "crescent.manage"
local files = require "spec_files"

local CTX = { table = "E", keys = 100, nodes = 2 }

describe("crescent.manage runner", function()
  local dir, path
  setup(function() dir, path = files.tmpdir() end)
  teardown(function() files.remove_dir(dir) end)

  -- A user's script whose decide returns what `body` computes from input.
  local function script(name, body)
    local p = path(name .. ".lua")
    files.write(p, "return function(opts)\n  local x = opts.x\n  return function(input)\n" .. body
      .. "\n  end\nend\n")
    return p
  end

  it("describes scripts as names, name:opts, {name, opts} or paths", function()
    assert.are.same({ "auto", { hot = 50, rest = "classic" } }, { manage.describe("auto:hot=50,rest=classic") })
    assert.are.same({ "nups", { cap = 3 } }, { manage.describe({ "nups", cap = 3 }) })
    assert.are.same({ "a/b.lua", {} }, { manage.describe("a/b.lua") })
    assert.is_true(manage.is_script("auto"))
    assert.is_true(manage.is_script("nups:hot=3"))
    assert.is_true(manage.is_script({ "auto", cap = 1 }))
    assert.is_false(manage.is_script("relocate"))
    assert.is_false(manage.is_script({ replicate = { 1 }, relocate = "rest" }))
  end)

  it("runs a user's script and applies a valid choice (keys sorted)", function()
    local p = script("ok", "return { replicate = { 7, 3, input.keys - 1 }, relocate = 'rest' }")
    local d = manage.new(p, { x = 1 }, CTX)
    local c, why = d:decide {}
    assert.is_nil(why)
    assert.are.same({ replicate = { 3, 7, 99 }, relocate = "rest" }, c)
    assert.are.same(c, d.choice)
  end)

  it("gives the script the current choice and its replicated keys", function()
    local p = script("echo", "if input.current == 'classic' then return { replicate = { 5 }, classic = 'rest' } end\n"
      .. "    assert(input.replicated[1] == 5 and input.table == 'E' and input.nodes == 2)\n"
      .. "    return 'relocate'")
    local d = manage.new(p, nil, CTX)
    assert.are.same({ replicate = { 5 }, classic = "rest" }, (d:decide {}))
    assert.are.equal("relocate", (d:decide {}))
  end)

  it("takes the three-way form: replicated, relocated, classic the rest", function()
    local d = manage.new(script("three", "return { replicate = { 9, 2 }, relocate = { 50, 7 }, classic = 'rest' }"),
      nil, CTX)
    local c, why = d:decide {}
    assert.is_nil(why)
    assert.are.same({ replicate = { 2, 9 }, relocate = { 7, 50 }, classic = "rest" }, c)
    assert.are.equal("2 replicated, 2 relocated, classic the rest", manage.label(c))
    assert.is_true(manage.same(c, { replicate = { 2, 9 }, relocate = { 7, 50 }, classic = "rest" }))
    assert.is_false(manage.same(c, { replicate = { 2, 9 }, relocate = { 7 }, classic = "rest" }))
    local d2 = manage.new(script("three2", "if input.relocated[1] then return 'x' end\n"
      .. "    return { relocate = { 3 }, classic = 'rest' }"), nil, CTX)
    assert.are.same({ replicate = {}, relocate = { 3 }, classic = "rest" }, (d2:decide {}))
    -- the script sees the relocated keys of the current choice
    local _, why2 = d2:decide {}
    assert.matches("decide returned 'x'", why2, 1, true)
    local d3 = manage.new(script("three3", "return { replicate = {}, relocate = {}, classic = 'rest' }"), nil, CTX)
    assert.are.equal("classic", (d3:decide {}))
  end)

  it("turns an empty replicate list into the rest's technique", function()
    local d = manage.new(script("empty", "return { replicate = {}, classic = 'rest' }"), nil, CTX)
    assert.are.equal("classic", (d:decide {}))
  end)

  it("keeps the previous choice and says why when decide errors (script and line)", function()
    local p = script("boom", "if input.epoch == 2 then error('no counts for ' .. input.table) end\n"
      .. "    return 'relocate'")
    local d = manage.new(p, nil, CTX)
    assert.are.equal("relocate", (d:decide { epoch = 1 }))
    local c, why = d:decide { epoch = 2 }
    assert.are.equal("relocate", c)
    assert.are.equal("manage E: " .. p .. ":4: no counts for E; keeping the previous choice (relocate)", why)
  end)

  it("keeps the previous choice on garbage, naming what is wrong", function()
    local cases = {
      { "return 42", "decide returned 42 (a technique name or {replicate = keys, relocate = keys|\"rest\", classic = \"rest\"})" },
      { "return 'hot'", "decide returned 'hot' (a technique name or {replicate = keys, relocate = keys|\"rest\", classic = \"rest\"})" },
      { "return 'sideways'", "decide returned 'sideways' (a technique name or {replicate = keys, relocate = keys|\"rest\", classic = \"rest\"})" },
      { "return { replicate = { 1, 100 } }", "decide replicate[2] = 100 out of range [0, 100)" },
      { "return { replicate = { -1 } }", "decide replicate[1] = -1 out of range [0, 100)" },
      { "return { replicate = { 1, 2, 1 } }", "decide replicate[3] = 1 repeats replicate[1]" },
      { "return { replicate = { 1.5 } }", "decide replicate[1] = 1.5 is not an integer key" },
      { "return { replicate = { print } }", "decide replicate[1] = <function> is not an integer key" },
      { "return { replicate = { 1 }, relocate = 'all' }", "decide relocate = must be \"rest\" or a list of keys (got all)" },
      { "return { replicate = { 1 }, classic = 3 }", "decide classic = must be \"rest\" (got 3)" },
      { "return { relocate = { 1, 100 }, classic = 'rest' }", "decide relocate[2] = 100 out of range [0, 100)" },
      { "return { relocate = { 4, 4 }, classic = 'rest' }", "decide relocate[2] = 4 repeats relocate[1]" },
      { "return { replicate = { 3 }, relocate = { 4, 3 }, classic = 'rest' }", "decide relocate[2] = 3 is replicated too" },
      { "return { relocate = { 4 } }", "decide relocate = keys needs classic = \"rest\"" },
      { "return { relocate = { 4 }, classic = 'rest', copies = 2 }",
        "decide returned a table with the unknown field 'copies' (replicate, relocate, classic)" },
      { "return { replicate = { 1 }, relocate = 'rest', classic = 'rest' }",
        "decide only one of classic, relocate may be \"rest\"" },
      { "return { replicate = 3 }", "decide replicate = must be a list of keys (got 3)" },
      { "return { replicate = { 1, x = 2 } }", "decide replicate = must be a list (it has the field x)" },
      { "return { relocate = 'rest' }", "decide returned a table without replicate = keys" },
      { "return { replicate = {}, hot = 1 }", "decide returned a table with the unknown field 'hot' (replicate, relocate, classic)" },
    }
    for i, case in ipairs(cases) do
      local p = script("garbage" .. i, case[1])
      local d = manage.new(p, nil, { table = "E", keys = 100, nodes = 2, initial = "classic" })
      local c, why = d:decide {}
      assert.are.equal("classic", c)
      assert.are.equal(("manage E: %s: %s; keeping the previous choice (classic)"):format(p, case[2]), why)
    end
  end)

  it("enforces the cap on the replicated set", function()
    local p = script("big", "local l = {} for k = 0, 9 do l[k + 1] = k end return { replicate = l }")
    local d = manage.new(p, nil, { table = "E", keys = 100, nodes = 2, cap = 5 })
    local c, why = d:decide {}
    assert.are.equal("classic", c)
    assert.are.equal("manage E: " .. p .. ": decide replicate = has 10 keys, more than the cap 5; "
      .. "keeping the previous choice (classic)", why)
    local all = manage.new(script("all", "return 'replicate'"), nil, { table = "E", keys = 100, nodes = 2, cap = 5 })
    local _, why2 = all:decide {}
    assert.matches("returned 'replicate' for 100 keys, more than the cap 5", why2, 1, true)
  end)

  it("runs scripts sandboxed: no io, os.exit or require, a time limit", function()
    for i, body in ipairs { "io.open('/etc/passwd')", "os.exit(3)", "require('os')" } do
      local p = script("escape" .. i, body .. " return 'relocate'")
      local d = manage.new(p, nil, CTX)
      local c, why = d:decide {}
      assert.are.equal("classic", c)
      assert.matches("^manage E: " .. p:gsub("%p", "%%%0") .. ":4: ", why)
      assert.matches("keeping the previous choice (classic)", why, 1, true)
    end
    local p = script("spin", "while true do end")
    local t0 = os.time()
    local c, why = manage.new(p, nil, CTX):decide {}
    assert.are.equal("classic", c)
    assert.matches("management script ran longer than 5 s", why, 1, true)
    assert.is_true(os.time() - t0 < 30)
  end)

  it("runs the example of docs/management.md", function()
    local doc = files.read((os.getenv("CRESCENT_ROOT") or ".") .. "/docs/management.md")
    local src = doc:match("```lua\n(%-%- top32%.lua.-)```")
    assert.is_truthy(src)
    local p = path("top32.lua")
    files.write(p, src)
    local d = manage.new(p, { n = 2 }, CTX)
    assert.are.equal("classic", (d:decide {}))
    local top = { { key = 9, count = 5000 }, { key = 4, count = 3000 }, { key = 1, count = 2000 },
                  { key = 2, count = 500 } }
    assert.are.same({ replicate = { 4, 9 }, relocate = "rest" },
      (d:decide { observed = { total = 20000, top = top, bound = 0, floor = 0 } }))
    assert.are.equal("relocate", (d:decide { observed = { total = 20000, top = { top[4] }, bound = 0, floor = 0 } }))
  end)

  it("offers every script the NuPS rule as manage.hot_keys (scripts cannot require)", function()
    local top = { { key = 9, count = 5000 }, { key = 4, count = 3000 }, { key = 1, count = 2000 },
                  { key = 2, count = 500 } }
    local obs = { observed = { total = 20000, top = top, bound = 0, floor = 0 } }
    -- mean 200 per key: hot = 10 puts the line at 2000, which key 1 does not exceed
    local p = path("hot.lua")
    files.write(p, "return function(opts)\n  local cap = opts.cap\n  return function(input)\n"
      .. "    return { replicate = manage.hot_keys(input.observed, input.keys, 10, cap), relocate = 'rest' }\n"
      .. "  end\nend\n")
    assert.are.same({ replicate = { 4, 9 }, relocate = "rest" }, (manage.new(p, { cap = 5 }, CTX):decide(obs)))
    assert.are.same({ replicate = { 9 }, relocate = "rest" }, (manage.new(p, { cap = 1 }, CTX):decide(obs)))
  end)

  it("refuses at creation an unknown script, a broken one, an unknown option, by name", function()
    assert.has_error(function() manage.new("nope", nil, CTX) end,
      "manage E: unknown technique 'nope' (classic, relocate, replicate, or a decision script: auto, nups, "
      .. "or the path of a .lua file)")
    local missing = path("missing.lua")
    assert.has_error(function() manage.new(missing, nil, CTX) end,
      "manage E: management script file " .. missing .. ": cannot open: No such file or directory")
    local p = script("opts", "return 'relocate'")
    assert.has_error(function() manage.new(p, { x = 1, y = 2 }, CTX) end,
      "manage E: " .. p .. ": unknown option 'y' (the script never reads it)")
    -- a script that redefines the globals the runner uses is still checked
    local sly = path("sly.lua")
    files.write(sly, "next = function() return nil end\ntype = function() return 'function' end\n"
      .. "return function(opts) return function(input) return 'relocate' end end\n")
    assert.has_error(function() manage.new(sly, { x = 1 }, CTX) end,
      "manage E: " .. sly .. ": unknown option 'x' (the script never reads it)")
    local bad = path("syntax.lua")
    files.write(bad, "return function(opts)\n  return function(input) return end end end\n")
    assert.has_error(function() manage.new(bad, nil, CTX) end)
    local ok, err = pcall(manage.new, bad, nil, CTX)
    assert.is_false(ok)
    assert.matches("^manage E: " .. bad:gsub("%p", "%%%0") .. ":2: ", err)
    local notfn = path("notfn.lua")
    files.write(notfn, "return 3\n")
    assert.has_error(function() manage.new(notfn, nil, CTX) end,
      "manage E: " .. notfn .. ": must return a constructor function(opts) (got number)")
    local nodecide = path("nodecide.lua")
    files.write(nodecide, "return function(opts) return {} end\n")
    assert.has_error(function() manage.new(nodecide, nil, CTX) end,
      "manage E: " .. nodecide .. ": the constructor must return a function decide(input) (got table)")
    assert.has_error(function() manage.new("auto", nil, { table = "E", keys = 0, nodes = 2 }) end,
      "manage.new: ctx = {table = name, keys = n >= 1, nodes = n >= 1} expected")
  end)
end)
