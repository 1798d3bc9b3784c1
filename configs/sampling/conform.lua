-- L1 CONFORM (NuPS 4.4, independent sampling): every sample is an
-- independent draw from the distribution. prepare_sample draws the keys
-- and starts fetching the rows of keys held on other nodes at once;
-- pull_sample waits only for rows that have not arrived yet. No options.
return function(opts)
    for k in pairs(opts) do
        error(("conform: unknown option '%s' (conform takes none)"):format(tostring(k)), 0)
    end
    return { level = "conform" }
end
