#!/usr/bin/env bash
# Replication (docs/management.md, "What a worker sees"): a pull of a
# replicated key reads the node's replica, so a worker reads its own writes
# at once; that holds for rows drawn through the sampling API as well
# (pull_sample, synchronous and asynchronous), on keys this node owns and on
# keys of the other node, with every key replicated and with a mix.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for manage in replicate hot; do
    run_timed "$JOBS/repl_sample.lua" -- 2 "$manage"
    [ "$rc" -eq 0 ] || fail "manage=$manage: exit $rc"
    grep -q "^ok nodes=2 manage=$manage checked=[1-9]" "$TMP/out" || fail "manage=$manage: no ok line"
done
no_orphans || exit 1
exit 0
