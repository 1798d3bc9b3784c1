#!/usr/bin/env bash
# Failure detection without a child process to wait for: a node joined by
# hand is killed while the job sits at the REPL prompt (no command running).
# The scheduler names it (heartbeat timeout) within 10 s and exits non-zero;
# the surviving node exits too.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
export_cluster_key # nodes started by hand must present the cluster key
port=$(free_port)
mkfifo "$TMP/in"
CRESCENT_SPAWN=0 CRESCENT_LISTEN="tcp://127.0.0.1:$port" "$CRESCENT_BIN" run "$JOBS/repl_job.lua" --repl \
    <"$TMP/in" >"$TMP/out" 2>&1 &
sched=$!
exec 3>"$TMP/in"   # keep the prompt's stdin open
for _ in $(seq 50); do grep -q "waiting for" "$TMP/out" && break; sleep 0.1; done
"$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/n1" 2>&1 &
n1=$!
"$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/n2" 2>&1 &
n2=$!
# A scheduler that died early would make this write to its prompt's fifo
# kill the script with SIGPIPE (exit 141 and an empty log, as happened once
# under the sanitizers); in a subshell that ignores it, the write fails and
# the check below says what the scheduler printed.
( trap '' PIPE; echo 'print("ready", #job:stats().nodes)' >&3 ) 2>/dev/null
for _ in $(seq 100); do grep -q "^ready	2" "$TMP/out" && break; sleep 0.1; done
grep -q "^ready	2" "$TMP/out" || fail "job did not start: $(cat "$TMP/out")"
start=$(date +%s.%N)
kill -9 $n1
wait $sched; rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
exec 3>&-
wait $n2; r2=$?
cat "$TMP/out" "$TMP/n2"
echo "scheduler exit $rc after $took s; other node exit $r2"
[ $r2 -eq 0 ] || fail "the surviving node should get a clean shutdown"
[ $rc -ne 0 ] || fail "scheduler should fail"
grep -Eq "node [01] \(pid $n1, .*\) died: no heartbeat" "$TMP/out" || fail "dead node not named"
[ "$(echo "$took < 10" | bc)" = 1 ] || fail "took $took s"
no_orphans || exit 1
