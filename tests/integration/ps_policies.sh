#!/usr/bin/env bash
# Consistency policies with one slow worker: the largest clock gap stays 0
# under bsp, at most s under ssp, grows under asp; job:policy switches a
# running job; a user-written policy file from another directory works.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
gap() { sed -n "s/^$1 policy=[^ ]* max_gap=\([0-9]*\).*/\1/p" "$TMP/out"; }
run() { timeout 60 "$CRESCENT_BIN" run "$JOBS/policy.lua" "$@" >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "run $*"; }; cat "$TMP/out"; }
run --policy bsp
[ "$(gap epoch1)" = 0 ] || fail "bsp gap $(gap epoch1)"
run --policy ssp:staleness=2
g=$(gap epoch1); [ "$g" -le 2 ] && [ "$g" -ge 1 ] || fail "ssp gap $g"
run --policy asp
[ "$(gap epoch1)" -gt 4 ] || fail "asp gap $(gap epoch1) should grow"
run --policy bsp -- asp   # bsp first, then job:policy("asp")
[ "$(gap epoch1)" = 0 ] || fail "before the switch"
[ "$(gap epoch2)" -gt 4 ] || fail "after switching to asp the gap should grow"
mkdir -p "$TMP/elsewhere"
cat >"$TMP/elsewhere/lag1.lua" <<'POL'
-- user policy: at most `lag` clocks ahead of the slowest worker
return function(opts)
    return { may_proceed = function(c, min_clock, clocks) return c - min_clock <= opts.lag end }
end
POL
run --policy "$TMP/elsewhere/lag1.lua:lag=1"
g=$(gap epoch1); [ "$g" = 1 ] || fail "user policy gap $g"
no_orphans || exit 1
