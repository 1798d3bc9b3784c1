-- Integration job (tests/integration/auto_errors.sh): a decision script
-- (jobs/bad_rule.lua) that errors or returns garbage at the epoch
-- boundaries. The job must keep the previous choice, say why in one line
-- naming the script, and go on: every key ends equal to its adds.
-- Args: mode (bad_rule.lua's), nodes.
local cr = require "crescent"
-- decide at every epoch boundary, however short the epochs (docs/management.md, "When it decides")
require("crescent.manage_table").DECIDE_SHARE = math.huge
local manage = require "crescent.manage"
local mode, nodes = arg[1], tonumber(arg[2]) or 2
local job = cr.job{ nodes = nodes, workers = 1, seed = 3 }
local K = 40
local rule = os.getenv("CRESCENT_ROOT") .. "/tests/integration/jobs/bad_rule.lua"
local C = job:table{ name = "C", keys = K, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add(),
                     manage = { rule, mode = mode } }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count_reloc.lua", {})
local first = { replicate = { 1 }, relocate = { 5, 6 }, classic = "rest" }
assert(manage.same(C.choice, first), "the script's first choice is applied")
local want = {}
for k = 1, K do want[k] = 0 end
for round = 1, 2 do
    local r = job:epoch{ steps = 40, batch = 6, round = round }
    for _, w in ipairs(r.results) do for k = 1, K do want[k] = want[k] + w.adds[k] end end
    if mode == "ok" then
        assert(C.manage_why == nil, tostring(C.manage_why))
        assert(manage.same(C.choice, { replicate = { 2 }, relocate = { 7 }, classic = "rest" }), "changed")
    else
        assert(C.manage_why and C.manage_why:find("keeping the previous choice (1 replicated, 2 relocated, "
            .. "classic the rest)", 1, true), tostring(C.manage_why))
        assert(manage.same(C.choice, first), "round " .. round .. ": the previous choice stays")
    end
    local r_, l_, c_ = C:census()
    assert(r_ + l_ + c_ == K)
end
C:get(0) -- brings the moved keys home; then the rows in runs (one replica settle each)
C:each_run(K, function(node, lo, n)
    local v = job:_guard(job.rt.get_rows, C.id, node, lo, n, C.dim, C.sdim)
    for i = 1, n do
        local k = lo + i - 1
        assert(v:get(i, 1) == want[k + 1], ("key %d = %s, expected %d"):format(k, tostring(v:get(i, 1)), want[k + 1]))
    end
end)
print(("ok auto_bad mode=%s nodes=%d"):format(mode, nodes))
job:close()
