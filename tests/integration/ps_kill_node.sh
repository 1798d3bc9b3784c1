#!/usr/bin/env bash
# A node killed mid-epoch: the scheduler names it within 10 s, exits
# non-zero, and no node process is left behind.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
"$CRESCENT_BIN" run "$JOBS/long.lua" -- 60 >"$TMP/out" 2>&1 &
sched=$!
for _ in $(seq 50); do [ "$(our_nodes | wc -l)" -ge 2 ] && grep -q "job running" "$TMP/out" && break; sleep 0.1; done
[ "$(our_nodes | wc -l)" -ge 2 ] || fail "nodes did not start: $(cat "$TMP/out")"
victim=$(our_nodes | head -1)
start=$(date +%s.%N)
kill -9 "$victim"
wait "$sched"
rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
cat "$TMP/out"
echo "scheduler exited with $rc after $took s"
[ $rc -ne 0 ] || fail "expected a non-zero exit"
grep -Eq "node [0-9] \(pid $victim.*died" "$TMP/out" || fail "dead node not named"
[ "$(echo "$took < 10" | bc)" = 1 ] || fail "took $took s"
grep -q finished "$TMP/out" && fail "job claims to have finished"
no_orphans || exit 1
