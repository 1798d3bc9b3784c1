#!/usr/bin/env bash
# A node started by hand with the wrong cluster key, or with none, is told
# at once that the scheduler refused its handshake (the scheduler's ZAP
# handler drops it without a word, so without the socket monitor the node
# waited out the 30-s join timeout); a node with the right key then joins
# the same scheduler and the job ends with status 0.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
export_cluster_key
good_pub=$CRESCENT_CURVE_PUBLIC good_sec=$CRESCENT_CURVE_SECRET
other=$("$CRESCENT_BIN" keygen) || fail "keygen"
bad_pub=$(echo "$other" | awk '$1 == "public" {print $2}')
bad_sec=$(echo "$other" | awk '$1 == "secret" {print $2}')
port=$(free_port)
CRESCENT_SPAWN=0 CRESCENT_LISTEN="tcp://127.0.0.1:$port" timeout 90 "$CRESCENT_BIN" run "$JOBS/count.lua" \
    --nodes 1 --workers 1 -- 2 >"$TMP/out" 2>&1 &
sched=$!
for _ in $(seq 50); do grep -q "waiting for 1 node" "$TMP/out" && break; sleep 0.1; done
grep -q "waiting for 1 node(s) on tcp://127.0.0.1:$port" "$TMP/out" || fail "scheduler did not listen: $(cat "$TMP/out")"

# $1: label; the rest: env assignments for the node. Sets rc and secs.
try_node() {
    local label=$1; shift
    local t0=$(date +%s.%N)
    env "$@" timeout 60 "$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/$label" 2>&1
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
}
try_node wrong CRESCENT_CURVE_PUBLIC="$bad_pub" CRESCENT_CURVE_SECRET="$bad_sec"
cat "$TMP/wrong"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a node with the wrong key: exit $rc"
grep -q "scheduler tcp://127.0.0.1:$port refused this node's key" "$TMP/wrong" || fail "wrong key: no refusal named"
awk -v s="$secs" 'BEGIN { exit !(s < 10) }' || fail "wrong key: the refusal took $secs s (the join timeout is 30 s)"

try_node none -u CRESCENT_CURVE_PUBLIC -u CRESCENT_CURVE_SECRET -u CRESCENT_KEY_FILE
cat "$TMP/none"
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a node without a key: exit $rc"
grep -q "requires the cluster key, and this node has none" "$TMP/none" || fail "no key: no refusal named"
awk -v s="$secs" 'BEGIN { exit !(s < 10) }' || fail "no key: the refusal took $secs s"

try_node right CRESCENT_CURVE_PUBLIC="$good_pub" CRESCENT_CURVE_SECRET="$good_sec"
wait $sched; srv=$?
cat "$TMP/right" "$TMP/out"
[ $rc -eq 0 ] || fail "the node with the right key: exit $rc"
[ $srv -eq 0 ] || fail "scheduler exit $srv after the refused nodes"
grep -q "ok nodes=1 workers=1" "$TMP/out" || fail "job result"
no_orphans || exit 1
