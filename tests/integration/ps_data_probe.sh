#!/usr/bin/env bash
# A hostile peer on a running 2-node job (nodes started by hand on known data
# ports, with the cluster key): malformed data frames (short, header of the
# wrong size, oversized counts, wrong dim or type, garbage, truncated
# payloads, keys the node does not hold, a table out of range, a gradient
# that does not inflate) and NaN/Inf pushes each get an error reply; the job
# finishes with exact table values. A peer without the key gets no answer at
# all, and a fake REGISTER without the key does not take a node slot.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
PROBE="$CRESCENT_BUILD/tests/probe_data"
[ -x "$PROBE" ] || fail "missing $PROBE (make all)"
export_cluster_key
base=$(free_port 4)
sched_ep="tcp://127.0.0.1:$base" d0="tcp://127.0.0.1:$((base + 1))" d1="tcp://127.0.0.1:$((base + 2))"
CRESCENT_SPAWN=0 CRESCENT_LISTEN="$sched_ep" timeout 120 "$CRESCENT_BIN" run "$JOBS/probe.lua" -- "$TMP/flag" \
    >"$TMP/out" 2>&1 &
sched=$!
for _ in $(seq 50); do grep -q "waiting for 2 node" "$TMP/out" && break; sleep 0.1; done
grep -q "waiting for 2 node" "$TMP/out" || fail "scheduler did not listen: $(cat "$TMP/out")"
# an impostor registers first, without the key
env -u CRESCENT_CURVE_PUBLIC -u CRESCENT_CURVE_SECRET "$PROBE" --register "$sched_ep" >"$TMP/fake" 2>&1 &
fake=$!
sleep 0.3
timeout 120 "$CRESCENT_BIN" node --scheduler "$sched_ep" --bind "$d0" >"$TMP/n0" 2>&1 &
timeout 120 "$CRESCENT_BIN" node --scheduler "$sched_ep" --bind "$d1" >"$TMP/n1" 2>&1 &
for _ in $(seq 100); do grep -q "job running" "$TMP/out" && break; sleep 0.1; done
grep -q "job running" "$TMP/out" || fail "job did not start: $(cat "$TMP/out" "$TMP/fake")"
"$PROBE" "$d0" >"$TMP/p0" 2>&1; r0=$?
"$PROBE" "$d1" >"$TMP/p1" 2>&1; r1=$?
env -u CRESCENT_CURVE_PUBLIC -u CRESCENT_CURVE_SECRET "$PROBE" --outsider "$d0" >"$TMP/po" 2>&1; ro=$?
touch "$TMP/flag"
wait $sched; rc=$?
wait $fake; rf=$?
cat "$TMP/fake" "$TMP/p0" "$TMP/p1" "$TMP/po" "$TMP/out"
[ $rf -eq 0 ] || fail "the fake REGISTER was admitted"
[ $r0 -eq 0 ] && [ $r1 -eq 0 ] || fail "probe: some malformed request got no error reply (or changed a row)"
grep -q "^ok   NaN push: error reply: push refused: value 1 is not finite" "$TMP/p0" || fail "NaN push not refused by node 0"
[ "$(grep -c '^ok   ' "$TMP/p0")" -ge 14 ] || fail "probe ran too few cases"
[ $ro -eq 0 ] || fail "a peer without the key reached a node's data socket"
[ $rc -eq 0 ] || fail "job exit $rc"
grep -q "^ok probe job nodes=2 workers=4" "$TMP/out" || fail "job result"
no_orphans || exit 1

# 2. Without the cluster key, a scheduler refuses to wait for hand-started
# nodes: any local process could take their slots.
env -u CRESCENT_CURVE_PUBLIC -u CRESCENT_CURVE_SECRET CRESCENT_SPAWN=0 CRESCENT_LISTEN="tcp://127.0.0.1:$((base + 3))" \
    timeout 20 "$CRESCENT_BIN" run "$JOBS/count.lua" >"$TMP/nokey" 2>&1 && fail "ran without a key: $(cat "$TMP/nokey")"
grep -q "nodes started by hand must present the cluster key" "$TMP/nokey" || fail "no-key message: $(cat "$TMP/nokey")"

# 3. Spawned nodes get a secret made for this job, in their environment (never
# on the command line); their data sockets refuse a peer without it.
unset CRESCENT_CURVE_PUBLIC CRESCENT_CURVE_SECRET
"$CRESCENT_BIN" run "$JOBS/long.lua" -- 30 >"$TMP/long" 2>&1 &
sched=$!
for _ in $(seq 50); do [ "$(our_nodes | wc -l)" -ge 2 ] && grep -q "job running" "$TMP/long" && break; sleep 0.1; done
node=$(our_nodes | head -1)
[ -n "$node" ] || fail "spawned nodes did not start: $(cat "$TMP/long")"
tr '\0' '\n' <"/proc/$node/environ" | grep -Eq '^CRESCENT_JOB_SECRET=.{40}$' || fail "spawned node has no job secret"
tr '\0' ' ' <"/proc/$node/cmdline" | grep -q "CURVE\|secret" && fail "key on the command line"
port=$(ss -ltnpH 2>/dev/null | grep "pid=$node," | grep -o '127.0.0.1:[0-9]*' | head -1)
[ -n "$port" ] || fail "cannot find the node's data port"
"$PROBE" --outsider "tcp://$port" >"$TMP/po2" 2>&1; ro2=$?
cat "$TMP/po2"
kill "$sched"; wait "$sched" 2>/dev/null
[ $ro2 -eq 0 ] || fail "a peer without the job key reached a spawned node's data socket"
no_orphans || exit 1

# 4. A model's push of non-finite values is refused whole before any row,
# local (shared memory) or remote, is applied; the job ends non-zero naming
# it, or goes on with the table untouched when the script catches it.
for nodes in 1 2; do
    timeout 30 "$CRESCENT_BIN" run "$JOBS/nan_push.lua" $nodes >"$TMP/nan" 2>&1; rn=$?
    cat "$TMP/nan"
    [ $rn -ne 0 ] && [ $rn -ne 124 ] || fail "NaN-pushing job on $nodes node(s): exit $rn (124: hung)"
    grep -q "nan_push.lua:[0-9]*: push refused: value 0 is not finite" "$TMP/nan" || fail "refusal not reported"
    grep -q finished "$TMP/nan" && fail "job claims to have finished"
    timeout 30 "$CRESCENT_BIN" run "$JOBS/nan_push.lua" $nodes catch >"$TMP/nan" 2>&1; rn=$?
    cat "$TMP/nan"
    [ $rn -eq 0 ] || fail "NaN-pushing job catching the error on $nodes node(s): exit $rn"
    grep -qx "C\[0\] = 0.0,0.0,0.0" "$TMP/nan" && grep -qx "C\[9\] = 0.0,0.0,0.0" "$TMP/nan" \
        || fail "a refused push changed table C on $nodes node(s)"
done
# 5. The same when only a remote row is NaN: node 0's worker must not apply
# its local rows either (the whole push is checked before any row).
timeout 30 "$CRESCENT_BIN" run "$JOBS/nan_push.lua" 2 catch last >"$TMP/nan" 2>&1; rn=$?
cat "$TMP/nan"
[ $rn -eq 0 ] || fail "NaN-in-a-remote-row job: exit $rn"
grep -q "^epoch: .*push refused: value [0-9]* is not finite" "$TMP/nan" || fail "remote NaN row not refused"
grep -qx "C\[0\] = 0.0,0.0,0.0" "$TMP/nan" || fail "a push refused for a remote NaN row applied its local rows"
grep -qx "C\[9\] = 0.0,0.0,0.0" "$TMP/nan" || fail "a refused push changed C[9]"

no_orphans || exit 1
