-- crescent.ps (placeholder: filled in by the ps work).
local core = require "crescent.core"
return setmetatable({}, { __index = core.ps })
