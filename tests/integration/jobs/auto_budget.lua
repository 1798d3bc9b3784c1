-- Integration job (tests/integration/auto_budget.sh): decisions at epoch
-- boundaries stay within DECIDE_SHARE of the scheduler's time. A script
-- that costs ~40 ms against epochs of a few ms is put off (the counts keep
-- accumulating); with the share lifted it decides at every boundary.
local cr = require "crescent"
local mt = require "crescent.manage_table"
local job = cr.job{ nodes = 2, workers = 1, seed = 3 }
local rule = os.getenv("CRESCENT_ROOT") .. "/tests/integration/jobs/slow_rule.lua"
local C = job:table{ name = "C", keys = 40, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add(),
                     manage = { rule, ms = 40 } }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count_reloc.lua", {})
local t0 = cr.core.util.now()
for round = 1, 12 do job:epoch{ steps = 2, batch = 4, round = round } end
local secs = cr.core.util.now() - t0
local n, off = C.redecisions or 0, C.decisions_put_off or 0
assert(n + off == 12, ("12 boundaries: %d decisions, %d put off"):format(n, off))
-- each decision costs >= 40 ms; they may take 5% of the time, after the first
assert(n >= 1 and n <= 1 + math.ceil(0.05 * secs / 0.04) + 1,
       ("%d decisions in %.2f s (put off %d)"):format(n, secs, off))
mt.DECIDE_SHARE = math.huge
for round = 13, 16 do job:epoch{ steps = 2, batch = 4, round = round } end
assert(C.redecisions == n + 4, ("with the share lifted: %d decisions, want %d"):format(C.redecisions, n + 4))
print(("ok auto_budget decisions=%d put_off=%d seconds=%.2f"):format(n, off, secs))
job:close()
