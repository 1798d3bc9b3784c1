#!/usr/bin/env bash
# Level-1 sampling through the parameter server on 1 and 2 nodes: every
# returned row matches its key, marginals pass chi-square, async pulls work,
# and the draws are the same from run to run (seeded).
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for n in 1 2; do
    run_timed "$JOBS/sampling_conform.lua" -- $n 2
    [ $rc -eq 0 ] || fail "nodes=$n: exit status $rc"
    grep -q "ok sampling conform nodes=$n workers=2" "$TMP/out" || fail "nodes=$n: no ok line"
    grep chi2 "$TMP/out" >"$TMP/first"
    # seeded: the same job draws the same keys (the statistics come out the same)
    run_timed "$JOBS/sampling_conform.lua" -- $n 2 >/dev/null
    grep chi2 "$TMP/out" | cmp -s - "$TMP/first" || fail "nodes=$n: a second run drew other keys"
done
no_orphans || exit 1
exit 0
