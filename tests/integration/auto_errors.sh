#!/usr/bin/env bash
# A decision script that errors or returns garbage at an epoch boundary
# (jobs/bad_rule.lua, run by jobs/auto_bad.lua): the job keeps the previous
# choice, says why in one line naming the script (and line), finishes with
# exit 0 and every key equal to its adds. A valid script's change applies.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cd "$CRESCENT_ROOT" || exit 1
keep="; keeping the previous choice (1 replicated, 2 relocated, classic the rest)"
expect() { # mode, message
    run_timed "$JOBS/auto_bad.lua" -- "$1"
    [ "$rc" -eq 0 ] || fail "$1: exit $rc"
    grep -q "^ok auto_bad mode=$1 " "$TMP/out" || fail "$1: no ok line"
    [ "$(grep -cF -- "manage C: $2$keep" "$TMP/out")" -eq 2 ] || fail "$1: expected '$2' once per epoch"
}
expect error "tests/integration/jobs/bad_rule.lua:8: attempt to index a nil value (field 'nothing')"
expect range "tests/integration/jobs/bad_rule.lua: decide relocate[2] = 40 out of range [0, 40)"
forms='a technique name or {replicate = keys, relocate = keys|"rest", classic = "rest"}'
expect technique "tests/integration/jobs/bad_rule.lua: decide returned 'sideways' ($forms)"
expect number "tests/integration/jobs/bad_rule.lua: decide returned 42 ($forms)"
expect overlap "tests/integration/jobs/bad_rule.lua: decide relocate[1] = 5 is replicated too"
run_timed "$JOBS/auto_bad.lua" -- ok 3
[ "$rc" -eq 0 ] && grep -q "^ok auto_bad mode=ok nodes=3" "$TMP/out" || fail "a valid change on 3 nodes"
grep -q "keeping the previous choice" "$TMP/out" && fail "a valid script said it kept its choice"
no_orphans || exit 1
exit 0
