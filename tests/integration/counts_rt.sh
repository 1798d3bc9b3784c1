#!/usr/bin/env bash
# Counting accesses and the per-key relocation set through the job
# object's rt calls (J:count, J:counts, J:manage's 4th argument): exact
# counts per node, the access counters (direct and sampling causes), classic keys of a mixed table not
# moved, keys leaving the set home with their values, bad lists refused.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
run_timed "$JOBS/counts_rt.lua"
[ "$rc" -eq 0 ] || fail "counts_rt: exit $rc"
grep -q "^ok counts " "$TMP/out" || fail "no ok line"
run_timed "$JOBS/counts_sampling.lua"
[ "$rc" -eq 0 ] || fail "counts_sampling: exit $rc"
grep -q "^ok counts sampling" "$TMP/out" || fail "no ok line (sampling)"
no_orphans || exit 1
exit 0
