#!/usr/bin/env bash
# --restarts under a launcher: three ranks (torchrun's variables) on three
# emulated hosts, saving after every epoch; rank 2 is killed during epoch
# 3. Rank 0 says which node died, runs the job again from the checkpoint
# of epoch 2, rank 1 joins the new run, and after --rejoin-timeout the job
# goes on with the 2 nodes it has: every key ends at exactly 2 epochs x 3
# workers x 4 steps + 4 epochs x 2 workers x 4 steps = 56, and every
# surviving rank exits 0.
set -u
. "$CRESCENT_ROOT/tests/cluster/lib.sh"
cluster_up 3
cd "$TMP" || fail cd
port=29571
cat >rjob.lua <<'EOF2'
local cr = require "crescent"
local job = cr.job{ workers = 1, seed = 1, policy = "bsp" }
local C = job:table{ name = "C", keys = 10, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
for _ = 1, 6 do job:epoch{ steps = 4, sleep = job.epochs == 2 and 0.5 or 0.1 } end -- epoch 3: 2 s, killed in it
print(("done nodes=%d epochs=%d C0=%s"):format(job.nodes, job.epochs, C:get(0)[1]))
job:close()
EOF2
pids=
for i in 0 1 2; do
    on $((i + 1)) env RANK=$i WORLD_SIZE=3 MASTER_ADDR=$NET.1 MASTER_PORT=$port timeout 90 "$CRESCENT_BIN" run rjob.lua \
        --checkpoint "$TMP/ck" --restarts 1 --rejoin-timeout 4 >"out$i" 2>&1 &
    pids="$pids $!"
    eval "pid$i=$!"
done
for _ in $(seq 300); do grep -q "^epoch 2:" out0 && break; sleep 0.05; done
grep -q "^epoch 2:" out0 || fail "epoch 2 did not end: $(cat out0)"
sleep 0.15
victim=$(for p in $(ip netns pids "${P}3"); do tr '\0' ' ' <"/proc/$p/cmdline" | grep -q "^$CRESCENT_BIN run" && echo "$p"; done | head -1)
[ -n "$victim" ] || fail "no rank 2 process on host 3"
kill -9 "$victim"
wait $pid0; r0=$?
wait $pid1; r1=$?
cat out0 out1
[ $r0 -eq 0 ] && [ $r1 -eq 0 ] || fail "exit: rank 0 $r0, rank 1 $r1"
grep -Eq "node [0-9] \(pid $victim, tcp://$NET.3:[0-9]+\) died" out0 || fail "rank 0 did not name the dead node"
grep -q "restart 1 of 1: waiting up to 4 s for the 3 rank(s) to join again" out0 || fail "no restart line"
grep -q "resumed from $TMP/ck after epoch 2$" out0 || fail "no resume from epoch 2"
grep -q "rank 1 joins tcp://$NET.1:$port again" out1 || fail "rank 1 did not rejoin"
grep -q "done nodes=2 epochs=6 C0=56.0" out0 || fail "the job did not finish on 2 nodes with the expected values"
echo ok
