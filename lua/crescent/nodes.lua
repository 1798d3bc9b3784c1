-- crescent.nodes: where a job's nodes come from, for cr.job{} (crescent.job).
-- Locally, crescent run starts them (spawn); by hand (--external-nodes,
-- CRESCENT_SPAWN=0, spawn = false) the scheduler waits for them on listen;
-- under a cluster launcher (crescent run's overrides: world, listen,
-- local_nodes) rank 0 starts one and the other ranks join, and after a
-- restart there (rejoin) the job goes on with the ranks that came back.
local home = require "crescent.home"

local M = {}

-- The start options of the job's runtime (crescent.core.ps.start) for the
-- script's cr.job{} options o and the command line's overrides ov (nil
-- outside crescent run), with nodes, workers and seed as picked. Raises,
-- at the caller's caller's line, when the script's nodes are not the
-- launcher's world.
function M.start_options(o, ov, nodes, workers, seed)
    local world = ov and ov.world
    if world then -- started by a cluster launcher: its world is the job's nodes
        if o.nodes ~= nil and o.nodes ~= world then
            error(("cr.job{nodes = %s}: the launcher (%s) started %d node(s); give nodes = %d or leave it out")
                :format(tostring(o.nodes), ov.launcher, world, world), 3)
        end
        nodes = world
    end
    local spawn = o.spawn
    if ov and ov.spawn ~= nil then spawn = ov.spawn end
    if spawn == nil then spawn = true end
    local env_spawn = os.getenv("CRESCENT_SPAWN")
    if env_spawn then spawn = env_spawn ~= "0" end
    if ov and (ov.world or ov.external) then spawn = false end
    local exe
    if not ov then exe = os.getenv("CRESCENT_BIN") or (home.dir .. "/crescent") end
    return {
        nodes = nodes, workers = workers, seed = seed,
        listen = ov and ov.listen or os.getenv("CRESCENT_LISTEN") or o.listen, spawn = spawn and 1 or 0, exe = exe,
        local_nodes = ov and ov.local_nodes or 0,
        -- a restart under a launcher: the ranks still alive rejoin within rejoin seconds
        min_nodes = ov and ov.rejoin and 1 or 0,
        -- crescent run ends at a lost node, unless it restarts the job (--restarts)
        exit_on_death = ov and not ov.restarts and 1 or 0, timeout = o.timeout,
        join_timeout = ov and ov.rejoin or o.join_timeout,
    }
end

return M
