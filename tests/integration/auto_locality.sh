#!/usr/bin/env bash
# manage = "auto" (docs/management.md, "The automatic choice"): the
# locality model (tests/models/locality.lua) on 2 nodes: after one epoch
# auto relocates the keys one node uses, replicates the keys every worker
# hammers and keeps the shared and spread keys classic; the second epoch
# crosses nodes 3x less. Then the counting model under auto switching
# techniques at every epoch on 2 and 3 nodes: every key ends equal to its
# adds (jobs/auto_locality.lua checks it all).
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
run_timed "$JOBS/auto_locality.lua" -- 2 2 0
[ "$rc" -eq 0 ] || fail "locality on 2 nodes: exit $rc"
grep -q "^ok auto nodes=2 rounds=2 " "$TMP/out" || fail "no ok line (locality)"
for nodes in 2 3; do
    run_timed "$JOBS/auto_locality.lua" -- "$nodes" 3 1
    [ "$rc" -eq 0 ] || fail "switching techniques on $nodes nodes: exit $rc"
    grep -q "^ok auto nodes=$nodes rounds=3 " "$TMP/out" || fail "no ok line on $nodes nodes"
done
no_orphans || exit 1
exit 0
