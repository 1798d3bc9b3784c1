#!/usr/bin/env bash
# One `crescent run job.lua` per rank on three emulated hosts, with the
# variables torchrun, Slurm's srun and dmlc-tracker set, and under a real
# Open MPI mpirun whose agent enters the hosts' namespaces: rank 0 (host 1)
# runs the scheduler and a node, the others join it from their own address;
# the job sees 3 nodes and every rank exits 0.
set -u
. "$CRESCENT_ROOT/tests/cluster/lib.sh"
cluster_up 3
port=29517
cd "$TMP" || fail "cd"
# Meanwhile, a rank whose scheduler address leads nowhere (no host has
# $NET.99): it gives up within the join timeout, naming both addresses.
t0=$(date +%s)
on 2 env RANK=1 WORLD_SIZE=2 MASTER_ADDR=$NET.99 MASTER_PORT=$port timeout 60 "$CRESCENT_BIN" run job.lua >unreach 2>&1 &
unreach=$!

# ranks ENVFN: start rank I on host I+1 with the variables `ENVFN I` prints.
ranks() {
    local envfn=$1 i pids=
    for i in 0 1 2; do
        on $((i + 1)) env $($envfn $i) timeout 60 "$CRESCENT_BIN" run job.lua >"out$i" 2>&1 &
        pids="$pids $!"
    done
    wait $pids
}
check() { # what: rank 0 ran the job on 3 nodes; nobody failed
    grep -q "ok nodes=3 workers=3" out0 || { cat out0 out1 out2; fail "$1: the job did not run on 3 nodes"; }
    for i in 1 2; do
        grep -q "node at $NET.$((i + 1)) (eth0), joining tcp://$NET.1:$port" "out$i" ||
            { cat "out$i"; fail "$1: rank $i did not join from its own address"; }
    done
    echo "ok $1"
}
torch() { echo RANK=$1 WORLD_SIZE=3 LOCAL_RANK=0 MASTER_ADDR=${P}1 MASTER_PORT=$port; }
ranks torch
check torchrun
grep -q "torchrun launcher, world 3: scheduler and node 0 at tcp://$NET.1:$port (eth0, from MASTER_ADDR)" out0 ||
    fail "rank 0 did not say what it found: $(cat out0)"

slurm() { echo SLURM_PROCID=$1 SLURM_STEP_ID=0 SLURM_NTASKS=3 SLURM_JOB_NODELIST="${P}[1-3]" CRESCENT_PORT=$port; }
ranks slurm
check slurm

# dmlc-tracker: a scheduler process of its own (host 1), two servers (the
# nodes) and a worker that has nothing to do.
on 1 env DMLC_ROLE=scheduler DMLC_PS_ROOT_URI=$NET.1 DMLC_PS_ROOT_PORT=$port DMLC_NUM_SERVER=2 DMLC_NUM_WORKER=1 \
    timeout 60 "$CRESCENT_BIN" run job.lua >out0 2>&1 &
for i in 1 2; do
    on $((i + 1)) env DMLC_ROLE=server DMLC_PS_ROOT_URI=$NET.1 DMLC_PS_ROOT_PORT=$port DMLC_NUM_SERVER=2 \
        DMLC_NUM_WORKER=1 DMLC_INTERFACE=eth0 timeout 60 "$CRESCENT_BIN" run job.lua >"out$i" 2>&1 &
done
on 3 env DMLC_ROLE=worker DMLC_NUM_SERVER=2 timeout 60 "$CRESCENT_BIN" run job.lua >outw 2>&1 || fail "dmlc worker exit"
wait $(jobs -p | grep -vx "$unreach")
grep -q "ok nodes=2 workers=2" out0 || { cat out0 out1 out2; fail "dmlc: the job did not run on the 2 servers"; }
grep -q "not needed" outw || fail "dmlc worker: $(cat outw)"
echo "ok dmlc"

# Open MPI: mpirun in the root namespace starts its daemons on the hosts
# through an agent that enters their namespace. mpirun does not say where
# rank 0 runs, so CRESCENT_MASTER is passed with -x (docs/cluster.md).
wait $unreach
rc=$?
secs=$(( $(date +%s) - t0 ))
[ $rc -eq 1 ] || fail "unreachable scheduler: exit $rc: $(cat unreach)"
grep -q "node at $NET.2 on eth0): no answer from scheduler tcp://$NET.99:$port within 30 s" unreach ||
    fail "unreachable scheduler: $(cat unreach)"
[ $secs -le 45 ] || fail "unreachable scheduler: took $secs s"
echo "ok unreachable scheduler ($secs s)"

if command -v mpirun >/dev/null; then
    cat >agent <<EOF2
#!/bin/sh
h=\$1; shift
exec ip netns exec ${P}\${h##*.} sh -c "\$*"
EOF2
    chmod +x agent
    timeout 90 mpirun --allow-run-as-root --mca plm_rsh_agent "$TMP/agent" --mca btl_tcp_if_include $NET.0/24 \
        --mca oob_tcp_if_include $NET.0/24 -H $NET.1,$NET.2,$NET.3 -np 3 \
        -x CRESCENT_MASTER=$NET.1 -x CRESCENT_PORT=$port -x CRESCENT_KEY_FILE -x CRESCENT_ROOT -x LUA_PATH -x LUA_CPATH \
        "$CRESCENT_BIN" run job.lua >outmpi 2>&1
    rc=$?
    grep -q "ok nodes=3 workers=3" outmpi || { cat outmpi; fail "mpirun: exit $rc, the job did not run on 3 nodes"; }
    grep -q "mpi (Open MPI) launcher, rank 2 of 3: node at $NET.3 (eth0)" outmpi || { cat outmpi; fail "mpirun: rank 2"; }
    echo "ok mpirun"
else
    echo "mpirun not installed (Debian's openmpi-bin): the Open MPI run is not tested"
fi
