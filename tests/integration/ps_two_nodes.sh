#!/usr/bin/env bash
# Two node processes + scheduler on loopback: a tiny model pushes/pulls a
# table; values, remote traffic and a clean exit (no orphans) are checked.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
out=$(timeout 60 "$CRESCENT_BIN" run "$CRESCENT_ROOT/tests/integration/jobs/count.lua" --nodes 2 --workers 2 -- 5 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "exit status $rc"; exit 1; }
echo "$out" | grep -q "ok nodes=2 workers=4" || exit 1
msgs=$(echo "$out" | sed -n 's/.*messages=\([0-9]*\).*/\1/p')
[ "${msgs:-0}" -gt 0 ] || { echo "expected remote messages between 2 nodes"; exit 1; }
# single-process mode: no remote messages at all
out1=$(timeout 60 "$CRESCENT_BIN" run "$CRESCENT_ROOT/tests/integration/jobs/count.lua" --nodes 1 --workers 2 -- 3 2>&1) || { echo "$out1"; exit 1; }
echo "$out1" | grep -q "ok nodes=1 workers=2 messages=0" || { echo "$out1"; exit 1; }
no_orphans || exit 1
exit 0
