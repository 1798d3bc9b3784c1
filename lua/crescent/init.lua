-- crescent: the Lua half of the library. `require "crescent"` works from the
-- crescent binary (crescent.core is preloaded) and from plain lua5.4/busted
-- (crescent.core is build/lua/crescent/core.so on LUA_CPATH).
local core = require "crescent.core"

local M = { core = core, version = core.version }
M.data = require "crescent.data"
M.eval = require "crescent.eval"
M.partition = require "crescent.partition"
M.script = require "crescent.script"
-- job, table, policy, init, optim, kernels
for k, v in pairs(require "crescent.ps") do M[k] = v end
return M
