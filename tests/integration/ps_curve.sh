#!/usr/bin/env bash
# CURVE: with the cluster key pair (crescent keygen) in the environment, a
# job runs over encrypted connections; a node with another key pair or none
# is not admitted; binding off loopback without keys is refused.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
keys() { "$CRESCENT_BIN" keygen | awk '{print $2}'; }
read -r PUB1 SEC1 <<<"$(keys | tr '\n' ' ')"
read -r PUB2 SEC2 <<<"$(keys | tr '\n' ' ')"
# 1. spawned nodes inherit the keys
CRESCENT_CURVE_PUBLIC=$PUB1 CRESCENT_CURVE_SECRET=$SEC1 timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" -- 2 \
    >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "job with keys"; }
grep -q "ok nodes=2" "$TMP/out" || fail "job with keys: $(cat "$TMP/out")"
# 2. one good node, one with the wrong keys: the job cannot start
port=$(free_port)
export CRESCENT_SPAWN=0 CRESCENT_LISTEN="tcp://127.0.0.1:$port"
CRESCENT_CURVE_PUBLIC=$PUB1 CRESCENT_CURVE_SECRET=$SEC1 timeout 60 "$CRESCENT_BIN" run "$JOBS/join_short.lua" >"$TMP/s" 2>&1 &
sched=$!
for _ in $(seq 50); do grep -q "waiting for" "$TMP/s" && break; sleep 0.1; done
CRESCENT_CURVE_PUBLIC=$PUB1 CRESCENT_CURVE_SECRET=$SEC1 "$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/good" 2>&1 &
CRESCENT_CURVE_PUBLIC=$PUB2 CRESCENT_CURVE_SECRET=$SEC2 "$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/bad" 2>&1 &
"$CRESCENT_BIN" node --scheduler "tcp://127.0.0.1:$port" >"$TMP/none" 2>&1 &
wait $sched; rc=$?
cat "$TMP/s"
[ $rc -ne 0 ] || fail "a node with the wrong key was admitted"
grep -q "only 1 of 2 nodes joined" "$TMP/s" || fail "expected exactly the good node to join"
grep -q "ok joined" "$TMP/s" && fail "job ran"
for _ in $(seq 30); do grep -q "gave up" "$TMP/good" && break; sleep 0.1; done
grep -q "gave up before the job started" "$TMP/good" || fail "the admitted node should be told: $(cat "$TMP/good")"
unset CRESCENT_SPAWN CRESCENT_LISTEN
# 3. off-loopback bind without keys, and half-given keys
timeout 10 "$CRESCENT_BIN" node --scheduler tcp://127.0.0.1:1 --bind "tcp://0.0.0.0:*" >"$TMP/o" 2>&1 && fail "bind accepted"
grep -q "binding tcp://0.0.0.0:\* off loopback needs CURVE keys" "$TMP/o" || fail "message: $(cat "$TMP/o")"
CRESCENT_CURVE_PUBLIC=$PUB1 timeout 10 "$CRESCENT_BIN" node --scheduler tcp://127.0.0.1:1 >"$TMP/o" 2>&1 && fail "half keys"
grep -q "set both CRESCENT_CURVE_PUBLIC and CRESCENT_CURVE_SECRET" "$TMP/o" || fail "message: $(cat "$TMP/o")"
CRESCENT_CURVE_PUBLIC=$PUB2 CRESCENT_CURVE_SECRET=$SEC1 timeout 10 "$CRESCENT_BIN" node --scheduler tcp://127.0.0.1:1 >"$TMP/o" 2>&1 && fail "mismatched keys"
grep -q "does not belong" "$TMP/o" || fail "message: $(cat "$TMP/o")"
