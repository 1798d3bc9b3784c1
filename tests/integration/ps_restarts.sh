#!/usr/bin/env bash
# crescent run --checkpoint PATH --restarts N: a node killed during epoch 3
# of 6 (saved after every epoch). With --restarts 1 the job runs again from
# the checkpoint of epoch 2 and ends with exactly the values of an
# uninterrupted run, trains each epoch once more at most, and the metrics
# file holds epochs 1-6 once each. With --restarts 0 it exits non-zero and
# the checkpoint of epoch 2 is intact. Bad option combinations exit 2.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cd "$TMP" || fail cd
# run_kill ARGS...: start the restart job, kill one of its nodes once epoch
# 2 has ended; sets rc.
run_kill() {
    timeout 90 "$CRESCENT_BIN" run "$JOBS/restart.lua" "$@" >out 2>&1 &
    local s=$!
    for _ in $(seq 200); do grep -q "^epoch 2:" out && break; sleep 0.05; done
    grep -q "^epoch 2:" out || fail "epoch 2 did not end: $(cat out)"
    sleep 0.15
    kill -9 "$(our_nodes | head -1)" || fail "no node to kill"
    wait $s
    rc=$?
    cat out
}
run_kill --checkpoint ck --restarts 1 --metrics m.jsonl
[ $rc -eq 0 ] || fail "--restarts 1: exit $rc"
grep -Eq "node [0-9] \(pid [0-9]+, tcp://127.0.0.1:[0-9]+\) died: killed by signal 9" out || fail "the death is not named"
grep -q "restart 1 of 1: the job runs again from $TMP/ck" out || fail "no restart line"
grep -q "resumed from $TMP/ck after epoch 2$" out || fail "no resume line with the epoch"
grep -q "done epochs=6 C0=96.0 expected=96" out || fail "the final values differ from an uninterrupted run's"
[ "$(grep -c '^epoch [0-9]*:' out)" -le 9 ] || fail "epochs trained again beyond the lost one"
for e in 1 2 3 4 5 6; do
    [ "$(grep -c "\"epoch\":$e[,}]" m.jsonl)" -eq 1 ] || fail "metrics: epoch $e not once: $(cat m.jsonl)"
done
no_orphans || exit 1

rm -f ck
run_kill --checkpoint ck
[ $rc -ne 0 ] || fail "--restarts 0: exit 0 after a node died"
"$CRESCENT_BIN" ckpt ck >ckout 2>&1 || fail "the last checkpoint is not intact: $(cat ckout)"
grep -q "^resume: epoch 2," ckout || { cat ckout; fail "the checkpoint is not the one of the last finished epoch"; }
no_orphans || exit 1

timeout 10 "$CRESCENT_BIN" run "$JOBS/restart.lua" --restarts 1 >out 2>&1
[ $? -eq 2 ] && grep -q "\-\-restarts needs --checkpoint PATH" out || fail "--restarts without --checkpoint: $(cat out)"
timeout 10 "$CRESCENT_BIN" run "$JOBS/restart.lua" --restarts 1 --checkpoint ck --repl >out 2>&1 </dev/null
[ $? -eq 2 ] && grep -q "cannot be used with --repl" out || fail "--restarts with --repl: $(cat out)"
# --checkpoint-every in seconds: 100 s is never reached in this run (no
# file); 2s saves at the first epoch end 2 s after the start or the last
# save: epoch 3 here (epochs 1-2 end within 1 s, epoch 3 takes 2 s, epochs
# 4-6 take 1.3 s together: epoch 3 stays the last one saved).
timeout 60 "$CRESCENT_BIN" run "$JOBS/restart.lua" --checkpoint cks --checkpoint-every 100s >out 2>&1 || fail "100s: $(cat out)"
[ -e cks ] && fail "--checkpoint-every 100s saved within a 5-s run"
timeout 60 "$CRESCENT_BIN" run "$JOBS/restart.lua" --checkpoint cks --checkpoint-every 2s >out 2>&1 || fail "2s: $(cat out)"
"$CRESCENT_BIN" ckpt cks | grep -q "^resume: epoch 3," || fail "--checkpoint-every 2s: $("$CRESCENT_BIN" ckpt cks 2>&1 | head -2)"
for bad in 0 5x 0s; do
    timeout 10 "$CRESCENT_BIN" run "$JOBS/restart.lua" --checkpoint cks --checkpoint-every $bad >out 2>&1
    [ $? -eq 2 ] && grep -q "checkpoint-every '$bad': expected epochs" out || fail "--checkpoint-every $bad: $(cat out)"
done
# The examples resume from the run's --checkpoint themselves
# (cr.script.resume), at the point they choose: 4 epochs, then 6.
"$CRESCENT_BIN" data zipf-mf --rows 500 --cols 100 --cells 10000 --rank 4 --seed 2 --out d >/dev/null || fail "mf data"
for e in 4 6; do
    timeout 60 "$CRESCENT_BIN" run "$CRESCENT_ROOT/examples/mf.lua" --checkpoint ckm -- data=d epochs=$e dim=4 >"mf$e" 2>&1 ||
        fail "mf $e: $(cat "mf$e")"
done
grep -q "mf: resumed from $TMP/ckm after epoch 4" mf6 || fail "mf did not resume: $(cat mf6)"
grep -q "^epoch  [1-4] " mf6 && fail "mf trained epochs 1-4 again"
grep -q "^epoch  6 " mf6 || fail "mf did not train to epoch 6"
echo ok
