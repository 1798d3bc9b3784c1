#!/usr/bin/env bash
# A model script's runtime error: worker id, script and line reach the user,
# exit status is non-zero, every node is shut down. An early error cancels
# the other workers' long epoch (20 s of steps) instead of waiting for it.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for nodes in 2 1; do
    timeout 60 "$CRESCENT_BIN" run "$JOBS/fail.lua" --nodes $nodes -- 1 >"$TMP/out" 2>&1
    rc=$?
    cat "$TMP/out"
    [ $rc -eq 1 ] || fail "exit status $rc, expected 1"
    grep -q "worker 1 (node [01]): tests/models/count.lua:35: attempt to index a nil value" "$TMP/out" \
        || fail "message must name worker, script and line"
    grep -q "not reached" "$TMP/out" && fail "job went on after the error"
done
for nodes in 2 1; do
    run_timed "$JOBS/fail_early.lua" --nodes $nodes -- 400
    [ $rc -eq 1 ] || fail "exit status $rc, expected 1"
    grep -q "worker 1 (node [01]): tests/models/count.lua:[0-9]*: early failure on purpose" "$TMP/out" \
        || fail "the first error, not a cancellation, must be reported"
    grep -q "cancelled" "$TMP/out" && fail "a cancelled worker's answer was shown"
    [ "$ms" -lt 8000 ] || fail "the error took $ms ms to end a 20 s epoch: not cancelled"
done
no_orphans || exit 1
