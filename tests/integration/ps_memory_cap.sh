#!/usr/bin/env bash
# cr.job{memory_mb = N}: the job's cap on every worker's Lua state, set once
# for the job so that a runaway model script fails with its own line instead
# of taking the node's memory. A growing table in a model script stops at the job's
# cap with the script's line; a model option memory_mb overrides it; a bad
# value is refused by name.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for nodes in 1 2; do
    timeout 120 "$CRESCENT_BIN" run "$JOBS/memory_job.lua" $nodes >"$TMP/out" 2>&1
    rc=$?
    cat "$TMP/out"
    [ $rc -eq 0 ] || fail "nodes=$nodes: exit status $rc, expected 0"
    grep -q "^bad: .*memory_mb must be an integer in \[1, 1048576\]" "$TMP/out" || fail "memory_mb = 0 must be refused"
    grep -q "^job cap: worker [0-9] (node [01]): tests/models/hostile.lua:[0-9]*: model script exceeded 24 MB" "$TMP/out" \
        || fail "nodes=$nodes: the job's memory_mb must cap the workers"
    grep -q "^model cap: .*model script exceeded 40 MB" "$TMP/out" || fail "nodes=$nodes: the model's memory_mb must win"
done
no_orphans || exit 1
