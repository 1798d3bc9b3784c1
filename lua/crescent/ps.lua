-- crescent.ps: the job API in one table, as `require "crescent"` exports it
-- (cr.job, cr.policy, cr.init, cr.optim, cr.kernels, ...). Each part lives in
-- a module of its own:
--   crescent.home        home directory, reading files
--   crescent.initializers  initializers (cr.init)
--   crescent.optimizers    update rules (cr.optim), read from the C rules
--   crescent.policy      consistency policies: names, sources, checking
--   crescent.job         Job (crescent.epoch: call/epoch/stats,
--                        crescent.checkpoint: save/load)
--   crescent.table       Table (scheduler side)
--   crescent.metrics     metrics file and JSON (lua-cjson)
-- Setting `quiet` here (require("crescent.ps").quiet = true) hides the
-- progress bars of job:epoch.
local core = require "crescent.core"
local home = require "crescent.home"
local initializers = require "crescent.initializers"
local optimizers = require "crescent.optimizers"
local policy = require "crescent.policy"
local job = require "crescent.job"
local metrics = require "crescent.metrics"

local M = {
    home = home.dir,
    init = initializers,
    optim = optimizers.optim,
    kernels = core.kernels,
    job = job.new,
    current = job.current,
    close_all = job.close_all,
    policy = policy.new,
    parse_policy = policy.parse,
    json = metrics.encode,
    json_decode = metrics.decode,
}

return setmetatable(M, {
    __index = function(_, k) if k == "quiet" then return job.quiet end end,
    __newindex = function(t, k, v)
        if k == "quiet" then job.quiet = v else rawset(t, k, v) end
    end,
})
