#!/usr/bin/env bash
# Decisions of manage = a script at epoch boundaries take at most
# DECIDE_SHARE (5%) of the scheduler's time (jobs/auto_budget.lua): a slow
# script against short epochs is put off, not run at every boundary.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cd "$CRESCENT_ROOT" || exit 1
run_timed "$JOBS/auto_budget.lua"
[ "$rc" -eq 0 ] || { cat "$TMP/out"; fail "exit $rc"; }
grep -q "^ok auto_budget " "$TMP/out" || fail "no ok line"
grep "^ok auto_budget " "$TMP/out"
no_orphans || exit 1
exit 0
