-- crescent.partition (placeholder: filled in by the partition work).
local core = require "crescent.core"
return setmetatable({}, { __index = core.partition })
