#!/usr/bin/env bash
# The scheduler killed: spawned nodes die with it (PDEATHSIG); nodes joined
# by hand notice the silence (heartbeat timeout) and exit on their own.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
# 1. spawned nodes
"$CRESCENT_BIN" run "$JOBS/long.lua" -- 60 >"$TMP/out" 2>&1 &
sched=$!
for _ in $(seq 50); do grep -q "job running" "$TMP/out" && break; sleep 0.1; done
[ "$(our_nodes | wc -l)" -eq 2 ] || fail "nodes did not start: $(cat "$TMP/out")"
kill -9 "$sched"; wait "$sched" 2>/dev/null
no_orphans || fail "spawned nodes outlived the scheduler"
# 2. nodes started by hand (they must present the cluster key)
export_cluster_key
port=$(free_port)
CRESCENT_SPAWN=0 CRESCENT_LISTEN="tcp://127.0.0.1:$port" "$CRESCENT_BIN" run "$JOBS/long.lua" -- 60 >"$TMP/out2" 2>&1 &
sched=$!
for _ in $(seq 50); do grep -q "waiting for" "$TMP/out2" && break; sleep 0.1; done
"$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/n1" 2>&1 &
n1=$!
"$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/n2" 2>&1 &
n2=$!
for _ in $(seq 50); do grep -q "job running" "$TMP/out2" && break; sleep 0.1; done
grep -q "job running" "$TMP/out2" || fail "manual nodes did not join: $(cat "$TMP/out2")"
kill -9 "$sched"; wait "$sched" 2>/dev/null
start=$(date +%s)
wait "$n1"; r1=$?
wait "$n2"; r2=$?
took=$(( $(date +%s) - start ))
cat "$TMP/n1" "$TMP/n2"
echo "nodes exited with $r1 $r2 after ${took}s"
[ $r1 -ne 0 ] && [ $r2 -ne 0 ] || fail "nodes should report the lost scheduler"
[ $took -le 10 ] || fail "nodes took ${took}s"
grep -q "silent" "$TMP/n1" || fail "node message"
no_orphans || exit 1
