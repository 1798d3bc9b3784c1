#!/usr/bin/env bash
# A node killed (kill -9) while job:save writes: crescent run ends naming
# the dead node, the checkpoint saved before is intact, and no PATH.tmp is
# left behind (the lost node ends the process from the scheduler's thread,
# past the save's own cleanup).
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cat >"$TMP/save.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 1, seed = 7 }
job:table{ name = "A", keys = 200000, dim = 20, init = cr.init.normal(0, 0.1) }
job:save(arg[1])
print("first save done")
io.stdout:flush()
for _ = 1, 1000 do job:save(arg[1]) end
print("not reached")
LUA
ck="$TMP/a.ckpt"
"$CRESCENT_BIN" run "$TMP/save.lua" -- "$ck" >"$TMP/out" 2>&1 &
sched=$!
for _ in $(seq 600); do grep -q "first save done" "$TMP/out" && [ -e "$ck.tmp" ] && break; sleep 0.05; done
[ -e "$ck.tmp" ] || { kill "$sched"; fail "no save in progress: $(cat "$TMP/out")"; }
victim=$(our_nodes | head -1)
kill -9 "$victim"
wait "$sched"
rc=$?
cat "$TMP/out"
[ $rc -ne 0 ] || fail "expected a non-zero exit"
grep -Eq "node [0-9] \(pid $victim.*died" "$TMP/out" || fail "dead node not named"
grep -q "not reached" "$TMP/out" && fail "the job went on"
[ ! -e "$ck.tmp" ] || fail "$ck.tmp left behind ($(stat -c %s "$ck.tmp") bytes)"
"$CRESCENT_BIN" ckpt "$ck" >"$TMP/check" 2>&1 || { cat "$TMP/check"; fail "the earlier checkpoint is damaged"; }
no_orphans || exit 1
