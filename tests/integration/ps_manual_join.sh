#!/usr/bin/env bash
# `crescent node --scheduler` joins a scheduler that waits for external
# nodes (CRESCENT_SPAWN=0, CRESCENT_LISTEN); the job runs and all exit 0.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
export_cluster_key # nodes started by hand must present the cluster key
port=$(free_port)
CRESCENT_SPAWN=0 CRESCENT_LISTEN="tcp://127.0.0.1:$port" timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" \
    --nodes 2 --workers 2 -- 4 >"$TMP/out" 2>&1 &
sched=$!
for _ in $(seq 50); do grep -q "waiting for 2 node" "$TMP/out" && break; sleep 0.1; done
grep -q "waiting for 2 node(s) on tcp://127.0.0.1:$port" "$TMP/out" || fail "scheduler did not listen: $(cat "$TMP/out")"
timeout 60 "$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" --bind "tcp://127.0.0.1:*" >"$TMP/n1" 2>&1 &
n1=$!
timeout 60 "$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/n2" 2>&1 &
n2=$!
wait $sched; rc=$?
wait $n1; r1=$?
wait $n2; r2=$?
cat "$TMP/out" "$TMP/n1" "$TMP/n2"
[ $rc -eq 0 ] || fail "scheduler exit $rc"
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] || fail "nodes exit $r1 $r2"
grep -q "ok nodes=2 workers=4" "$TMP/out" || fail "job result"
no_orphans || exit 1
