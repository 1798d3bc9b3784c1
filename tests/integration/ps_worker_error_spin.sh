#!/usr/bin/env bash
# Probe defect 4: worker 0 raises an error while worker 1 loops in pure Lua
# without ever reaching a clock, barrier, progress or sleep. The error (with
# worker, script and line) is printed within seconds, the other worker is
# cancelled, and if it does not stop within the grace period (10 s) its node
# is ended: the job exits non-zero instead of hanging.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for nodes in 2 1; do
    t0=$(date +%s%N)
    timeout 60 "$CRESCENT_BIN" run "$JOBS/spin_error.lua" -- $nodes >"$TMP/out" 2>&1 &
    pid=$!
    shown=""
    for _ in $(seq 50); do  # the error must be on the screen within 5 s
        grep -q "worker 0 (node 0): .*tests/models/quiet.lua:10: failure on purpose" "$TMP/out" && { shown=1; break; }
        sleep 0.1
    done
    wait $pid
    rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    cat "$TMP/out"; echo "nodes=$nodes: exit $rc after $ms ms"
    [ -n "$shown" ] || fail "the worker's error was not shown within 5 s"
    [ $rc -ne 0 ] || fail "exit status 0 after a worker error"
    [ $rc -ne 124 ] || fail "the job hung (killed by timeout)"
    [ "$ms" -lt 25000 ] || fail "the job took $ms ms to end (grace period 10 s)"
    grep -q "not reached" "$TMP/out" && fail "job went on after the error"
done
no_orphans || exit 1
echo "worker error with a spinning worker ok"
