#!/usr/bin/env bash
# A model script's runtime error: worker id, script and line reach the user,
# exit status is non-zero, every node is shut down.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for nodes in 2 1; do
    timeout 60 "$CRESCENT_BIN" run "$JOBS/fail.lua" --nodes $nodes -- 1 >"$TMP/out" 2>&1
    rc=$?
    cat "$TMP/out"
    [ $rc -eq 1 ] || fail "exit status $rc, expected 1"
    grep -q "worker 1 (node [01]): tests/models/count.lua:33: attempt to index a nil value" "$TMP/out" \
        || fail "message must name worker, script and line"
    grep -q "not reached" "$TMP/out" && fail "job went on after the error"
done
no_orphans || exit 1
