-- crescent.epoch: running the model on every worker (job:call, job:epoch)
-- and reading the job's counters (job:stats). Installed into the Job class
-- by crescent.job.
local core = require "crescent.core"
local cps = core.ps

local M = {}

local function sums(results)
    local sum = {}
    for _, r in ipairs(results) do
        if type(r) == "table" then
            for k, v in pairs(r) do
                if type(v) == "number" then sum[k] = (sum[k] or 0) + v end
            end
        end
    end
    return sum
end

local function traffic(stats)
    local t = { messages = 0, bytes_remote = 0, bytes_local = 0 }
    for _, n in ipairs(stats.nodes) do
        t.messages = t.messages + n.messages_remote
        t.bytes_remote = t.bytes_remote + n.bytes_remote
        t.bytes_local = t.bytes_local + n.bytes_local
    end
    return t
end

local function finite(x)
    return x == x and x ~= math.huge and x ~= -math.huge
end

-- job.curve keeps the last CURVE_MAX records. One per epoch for ever grew
-- the scheduler by about 0.4 KB an epoch, and every checkpoint with it,
-- whose metadata values stop at 16 MiB: job:save failed after about 80,000
-- epochs of examples/mf.lua (25 ms each). The metrics file keeps them all.
M.CURVE_MAX = 10000

local function add_record(curve, rec)
    local n = #curve + 1
    curve[n] = rec
    local over = n - M.CURVE_MAX
    if over > 0 then
        table.move(curve, over + 1, n, 1)
        for i = n - over + 1, n do curve[i] = nil end
    end
end

-- job:call(name, args) -> {results = {per worker}, sum = {...}}
local function call(self, name, args)
    self:_check()
    self:_need_workers("call", 2)
    local ok, s = pcall(cps.serialize, args or {})
    if not ok then error("job:call: arguments " .. s, 2) end
    local results = self:_guard(self.rt.call, name, s)
    return { results = results, sum = sums(results) }
end

-- job:epoch(args) -> {seconds=, results=, sum=, messages=, bytes_remote=, bytes_local=}
-- args.total (optional): items expected, for the progress bar (stderr;
-- require("crescent.ps").quiet = true hides it). A loss that is NaN or
-- infinite (the model diverged) raises, naming the epoch.
local function epoch(self, args, quiet)
    self:_check()
    args = args or {}
    local ok, s = pcall(cps.serialize, args)
    if not ok then error("job:epoch: arguments " .. s, 2) end
    local before = traffic(self:stats())
    local items = 0
    local bar = (not quiet) and cps.progress(("epoch %d"):format(self.epochs + 1),
                                             math.tointeger(args.total) or 0) or nil
    local t0 = core.util.now()
    local results
    ok, results = pcall(self._guard, self, self.rt.call, "epoch", s, function(n)
        items = items + n
        if bar then bar:add(n) end
    end)
    self.epochs = self.epochs + 1 -- it ran (a failed one too): the next one gets the next number
    if bar then bar:done() end
    if not ok then error(results, 0) end
    local secs = core.util.now() - t0
    local after = traffic(self:stats())
    local sum = sums(results)
    if sum.loss ~= nil and not finite(sum.loss) then
        error(("job:epoch: epoch %d: the loss is %s (the model diverged: lower the learning rate)")
            :format(self.epochs, tostring(sum.loss)), 2)
    end
    add_record(self.curve, { epoch = self.epochs, loss = sum.loss, seconds = secs })
    -- Tables managed by a decision script (manage = "auto"...) decide
    -- again from the accesses of this epoch (crescent.table, docs/management.md).
    for _, t in ipairs(self.tables) do
        if t.decider then t:_redecide(self.epochs) end
    end
    return { seconds = secs, results = results, sum = sum, items = items,
             messages = after.messages - before.messages,
             bytes_remote = after.bytes_remote - before.bytes_remote,
             bytes_local = after.bytes_local - before.bytes_local }
end

-- job:stats() -> {workers = {{worker=, node=, clock=, wait=, max_gap=, pulls=, pushes=}, ...},
--                 nodes = {{node=, messages_remote=, bytes_remote=, messages_local=, bytes_local=,
--                           pulls=, pushes=, ...}, ...}, max_gap = largest over workers, policy = name}
-- A worker's max_gap is the largest my_clock - min_clock (slowest active
-- worker) at the moments it was let past a clock: the staleness it actually
-- ran with (0 under bsp, <= s under ssp). wait: seconds spent at clocks and
-- barriers. Counters are totals since the job started.
local function stats(self)
    self:_check()
    local per_node = self:_guard(self.rt.stats)
    table.sort(per_node, function(a, b) return a.node < b.node end)
    local st = { nodes = {}, workers = {}, max_gap = 0, policy = self.policy_name }
    for _, n in ipairs(per_node) do
        for _, w in ipairs(n.workers) do
            st.workers[#st.workers + 1] = w
            if w.max_gap > st.max_gap then st.max_gap = w.max_gap end
        end
        n.workers = nil
        st.nodes[#st.nodes + 1] = n
    end
    table.sort(st.workers, function(a, b) return a.worker < b.worker end)
    return st
end

-- Add call, epoch and stats to Job; settings.quiet is read at each epoch.
function M.install(Job, settings)
    Job.call, Job.stats = call, stats
    function Job:epoch(args)
        return epoch(self, args, settings.quiet)
    end
end

return M
