-- crescent.data (placeholder: filled in by the data work).
local core = require "crescent.core"
return setmetatable({}, { __index = core.data })
