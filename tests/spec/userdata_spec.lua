-- The userdata types of crescent.core: every metatable that frees something
-- has __close = __gc, one idempotent function (cr_lmetatable in
-- src/lua/l_util.c), so a to-be-closed variable releases the object at once,
-- the collector's later pass does nothing more, and methods of a released
-- object refuse it instead of reading freed memory.
local cr = require "crescent"
local tables = require "crescent.table"

describe("crescent userdata metatables", function()
  it("give every type with a __gc the same function as __close", function()
    local names = {}
    for k, mt in pairs(debug.getregistry()) do
      if type(k) == "string" and k:match("^crescent%.") and type(mt) == "table" and rawget(mt, "__gc") then
        assert.are.equal(rawget(mt, "__gc"), rawget(mt, "__close"), k .. ": __close is not its __gc")
        names[k] = true
      end
    end
    for _, k in ipairs { "crescent.Job", "crescent.Placement", "crescent.Progress", "crescent.ReallocResult",
                         "crescent.Dict", "crescent.Sketch", "crescent.CkptReader", "crescent.Cache" } do
      assert.is_true(names[k], k .. " not registered with a __gc")
    end
  end)

  it("release a Placement when its <close> variable goes out of scope, once", function()
    local kept
    do
      local p <close> = tables.placement({ name = "W", keys = 10, placement = "hash" }, 2)
      assert.are.equal("hash", p:kind())
      kept = p
    end
    assert.has_error(function() kept:kind() end, "placement already freed")
    kept = nil
    collectgarbage()
    collectgarbage()
  end)

  it("finish a progress bar when its <close> variable goes out of scope", function()
    local kept
    do
      local p <close> = cr.core.ps.progress("closing", 0)
      p:add(1)
      kept = p
    end
    kept:add(1) -- done: a no-op, not a crash
    kept:done()
  end)
end)
