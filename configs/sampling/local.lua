-- L4 LOCAL (NuPS 4.4, local sampling): keys are drawn only among the keys
-- held on the worker's node, from the distribution restricted to them; no
-- row is ever fetched. No guarantee: a key that holds more than 1/nodes of
-- the probability is never seen by the other nodes. A node whose keys all
-- have weight 0 cannot sample (prepare_sample says so). No options.
return function(opts)
    for k in pairs(opts) do
        error(("local: unknown option '%s' (local takes none)"):format(tostring(k)), 0)
    end
    return { level = "local" }
end
