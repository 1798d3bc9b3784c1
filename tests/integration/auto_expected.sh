#!/usr/bin/env bash
# Decision scripts decide at creation from expected frequencies
# (docs/management.md, "When it decides"): job:table's frequencies, a
# sampling distribution's weights declared later, T:frequencies; nups
# without frequencies relocates everything; on 1 node auto is classic.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
run_timed "$JOBS/auto_expected.lua" -- 2
[ "$rc" -eq 0 ] || fail "2 nodes: exit $rc"
for want in "A 2,0,998" "B 0,0,1000" "N 0,1000,0" "M 2,0,998" "B after distribution 2,0,998" \
    "B after flat frequencies 0,0,1000"; do
    grep -qx "$want" "$TMP/out" || fail "expected the line '$want'"
done
run_timed "$JOBS/auto_expected.lua" -- 1
[ "$rc" -eq 0 ] || fail "1 node: exit $rc"
for want in "A 0,0,1000" "N 0,0,1000" "B after distribution 0,0,1000"; do
    grep -qx "$want" "$TMP/out" || fail "1 node: expected the line '$want'"
done
no_orphans || exit 1
exit 0
