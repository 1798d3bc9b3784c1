-- Integration job (tests/integration/table_i32.sh): an i32 count table
-- (dtype = "i32", rule add) that every worker adds +1 to. Args: nodes,
-- manage (classic | relocate | replicate | mixed: 5 keys replicated, the
-- rest relocated | auto), rounds, dir. Every key must end equal
-- to its number of adds exactly, a key pre-set to 2^24 too (float32 would
-- round 2^24 + 1 away), read by the job (C:get) and by the workers (pulls),
-- and after a checkpoint round trip.
local cr = require "crescent"
local nodes, manage, rounds = tonumber(arg[1]) or 2, arg[2] or "classic", tonumber(arg[3]) or 2
local spec = manage == "mixed" and { replicate = { 0, 1, 2, 3, 17 }, relocate = "rest" } or manage
local dir = arg[4] or os.getenv("TMPDIR") or "/tmp"
local job = cr.job{ nodes = nodes, workers = 2, seed = 5 }
local K = 40
local C = job:table{ name = "C", keys = K, dim = 2, dtype = "i32", manage = spec }
assert(C.dtype == "i32" and C.optimizer == "add", "i32 defaults: dtype and optimizer add")
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count_i32.lua", {})
local BIG = 1 << 24
local want = {}
for k = 1, K do want[k] = 0 end
C:set(3, { BIG, -BIG })
want[4] = BIG
local row = C:get(3)
assert(row[1] == BIG and row[2] == -BIG and math.type(row[1]) == "integer", "C:set/C:get of 2^24")
local adds = 0
for round = 1, rounds do
    local r = job:call("epoch", { steps = 60, batch = 6, round = round, localize = manage == "relocate" or manage == "mixed" })
    for _, w in ipairs(r.results) do
        for k = 1, K do want[k] = want[k] + w.adds[k]; adds = adds + w.adds[k] end
    end
    -- replicas lag the other nodes' adds by a sync round or two: C:get
    -- settles them (every node's replicas then hold every add)
    if manage == "replicate" or manage == "mixed" then C:get(0) end
    local rd = job:call("read_all", {})
    for _, w in ipairs(rd.results) do
        for k = 1, K do
            assert(w.values[k] == want[k], ("round %d: worker read key %d = %s, expected %d"):format(
                round, k - 1, tostring(w.values[k]), want[k]))
        end
    end
end
local function check(when)
    for k = 0, K - 1 do
        local v = C:get(k)
        local second = k == 3 and want[k + 1] - 2 * BIG or want[k + 1]
        assert(v[1] == want[k + 1] and v[2] == second,
               ("%s: key %d = %s, %s, expected %d, %d"):format(when, k, tostring(v[1]), tostring(v[2]), want[k + 1], second))
    end
end
check("after the epochs")
-- keys away again (relocate), then saved: every row comes home exactly
local last = job:call("epoch", { steps = 5, batch = 6, round = 9, localize = manage == "relocate" or manage == "mixed" })
for _, w in ipairs(last.results) do
    for k = 1, K do want[k] = want[k] + w.adds[k]; adds = adds + w.adds[k] end
end
local path = dir .. "/count_i32.ckpt"
job:save(path)
C:set(3, { 0, 0 })
job:load(path)
check("after a checkpoint round trip")
assert(want[4] > BIG, "the 2^24 key was counted")
if manage == "auto" and nodes > 1 then
    -- hot keys (as auto_expected.lua's A and M): decision scripts treat
    -- an i32 table as an f32 one
    local w = {}
    for k = 1, 1000 do w[k] = 1 end
    w[4], w[8] = 1e6, 5e5
    local census = {}
    for _, spec in ipairs { "auto", "nups:rest=classic" } do
        for _, dt in ipairs { "f32", "i32" } do
            local T = job:table{ name = dt .. spec:sub(1, 4), keys = 1000, dim = 1, dtype = dt, optimizer = "add",
                                 manage = spec, frequencies = w }
            census[#census + 1] = ("%s %s %s"):format(spec, dt, table.concat({ T:census() }, ","))
        end
    end
    print(table.concat(census, "; "))
    assert(census[1] == "auto f32 2,0,998" and census[2] == "auto i32 2,0,998", census[2])
    assert(census[3]:find("f32 2,", 1, true) and census[4]:find("i32 2,", 1, true), census[4])
end
local moved, rupd = 0, 0
for _, nd in ipairs(job:stats().nodes) do moved, rupd = moved + nd.relocation.rows_in, rupd + nd.replica.updates end
print(("ok nodes=%d manage=%s adds=%d key3=%d moved=%d replica_updates=%d"):format(nodes, manage, adds, want[4],
    moved, rupd))
job:close()
