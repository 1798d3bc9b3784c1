-- crescent.eval (placeholder: filled in by the eval work).
local core = require "crescent.core"
return setmetatable({}, { __index = core.eval })
