#!/usr/bin/env bash
# crescent repl JOB.lua --nodes 2: from the prompt, run an epoch, read stats,
# switch the policy, read and write a row, save, overwrite, load back, quit;
# then every node process is gone.
set -u
BIN=${CRESCENT_BIN:-./crescent}
tmp=$(mktemp -d)
pid=
cleanup() {
    exec 3>&- 2>/dev/null
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }

cat >"$tmp/model.lua" <<'LUA'
local M = {}
function M.init(ctx, opts) end
function M.epoch(ctx, args)
  local W = ctx.tables.W
  local keys = {}
  for k = ctx.worker, W.keys - 1, ctx.workers do keys[#keys + 1] = k end  -- each key once
  local m = W:pull(keys)
  W:push(keys, m)            -- sgd with lr 0.5: w = w - 0.5 * w
  ctx:clock()
  return { n = #keys }
end
return M
LUA
cat >"$tmp/job.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 1, seed = 3 }
job:table{ name = "W", keys = 10, dim = 3, init = cr.init.uniform(1, 2),
           optimizer = cr.optim.sgd{ lr = 0.5 } }
job:model("model.lua", {})
print("job ready")
LUA

mkfifo "$tmp/in"
(cd "$tmp" && exec "$BIN" repl job.lua --nodes 2 <"$tmp/in" >"$tmp/out" 2>"$tmp/err") &
pid=$!
exec 3>"$tmp/in"
for _ in $(seq 300); do grep -q "job ready" "$tmp/out" 2>/dev/null && break; sleep 0.1; done
grep -q "job ready" "$tmp/out" || fail "job did not start"
nodes=$(ps -o pid= --ppid "$pid" | tr -d ' ')
[ "$(echo "$nodes" | grep -c .)" -eq 2 ] || fail "expected 2 node processes, found: $nodes"

cat >&3 <<'LUA'
before = job.W:get(5)
r = job:epoch{}
"epoch", r.sum.n
after = job.W:get(5)
"halved", math.abs(after[1] - before[1] / 2) < 1e-6
"stats", type(job:stats())
job:policy("ssp", { staleness = 2 })
"epoch2", job:epoch{}.sum.n
job.W:set(5, {1, 2, 3})
"row", job.W:get(5)
job:save("w.ckpt")
job.W:set(5, {0, 0, 0})
"zeroed", job.W:get(5)
job:load("w.ckpt")
"loaded", job.W:get(5)
quit()
LUA
exec 3>&-
for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "the REPL did not exit after quit()"
wait "$pid"; rc=$?; pid=
[ $rc -eq 0 ] || fail "exit status $rc"
grep -qx $'epoch\t10' "$tmp/out" || fail "epoch result"
grep -qx $'halved\ttrue' "$tmp/out" || fail "the epoch did not update W"
grep -qx $'stats\ttable' "$tmp/out" || fail "job:stats()"
grep -qx $'epoch2\t10' "$tmp/out" || fail "epoch after the policy switch"
grep -qx $'row\t{1, 2, 3}' "$tmp/out" || fail "W:set / W:get"
grep -qx $'zeroed\t{0, 0, 0}' "$tmp/out" || fail "W:set to zeros"
grep -qx $'loaded\t{1, 2, 3}' "$tmp/out" || fail "job:load did not restore the row"
grep -qE '^(stdin:|.*stack traceback)' "$tmp/err" && fail "errors at the prompt"
for n in $nodes; do
    for _ in $(seq 50); do kill -0 "$n" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$n" 2>/dev/null && fail "node process $n still running"
done
[ ! -e "$tmp/w.ckpt.tmp" ] || fail "checkpoint temp file left behind"
echo "repl job ok"
