#!/usr/bin/env bash
# Relocation (docs/management.md): the counting model on 2 and 3 nodes
# while workers on different nodes localize the same keys back and forth.
# Every key must end equal to its number of adds (read by the workers while
# keys are away, by the job after a checkpoint round trip and a technique
# switch); every pull after the same worker's (unwaited) push must see it.
# A classic table sends no relocation message.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for nodes in 2 3; do
    run_timed "$JOBS/reloc_count.lua" -- "$nodes" 3 "$TMP"
    [ "$rc" -eq 0 ] || fail "counting model on $nodes nodes: exit $rc"
    grep -q "^ok nodes=$nodes " "$TMP/out" || fail "no ok line on $nodes nodes"
    moved=$(sed -n 's/.*moved=\([0-9]*\).*/\1/p' "$TMP/out")
    fwd=$(sed -n 's/.*forwarded=\([0-9]*\).*/\1/p' "$TMP/out")
    [ "${moved:-0}" -gt 0 ] && [ "${fwd:-0}" -gt 0 ] || fail "expected relocations and forwarded requests"
done
# classic: the same model, no relocation traffic at all
run_timed "$JOBS/reloc_classic.lua"
[ "$rc" -eq 0 ] || fail "classic run: exit $rc"
grep -q "^ok classic reloc_messages=0 rows_in=0 forwarded=0" "$TMP/out" || fail "classic table sent relocation messages"
no_orphans || exit 1
exit 0
