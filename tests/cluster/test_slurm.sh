#!/usr/bin/env bash
# Under a real Slurm (Debian's slurm-wlm: a slurmctld in the root namespace
# and a slurmd in each of three emulated hosts, started here with a
# configuration of their own, and munge): `srun -N 3 --ntasks-per-node=1
# crescent run job.lua --port P` runs the job on 3 nodes, rank 0's host
# taken from the step's node list. Skipped where slurm-wlm is not installed.
set -u
. "$CRESCENT_ROOT/tests/cluster/lib.sh"
for b in slurmctld slurmd srun munged; do
    command -v $b >/dev/null || { echo "skipped: no $b (Debian's slurm-wlm and munge)"; exit 77; }
done
[ -r /etc/munge/munge.key ] || { echo "skipped: no /etc/munge/munge.key"; exit 77; }
cluster_up 3
S="$TMP/slurm"
mkdir -p "$S/state"
started_munge=
if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
    munged --force >/dev/null 2>&1 || fail "munged did not start"
    started_munge=1
fi
for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
munge -n | unmunge >/dev/null 2>&1 || fail "munge does not work: $(munge -n 2>&1 | unmunge 2>&1 | tail -2)"
slurm_down() {
    [ -f "$S/ctld.pid" ] && kill "$(cat "$S/ctld.pid")" 2>/dev/null
    [ -n "$started_munge" ] && pkill -x munged
    cluster_down
    cleanup
}
trap slurm_down EXIT
cat >"$S/slurm.conf" <<EOF2
ClusterName=crtest
SlurmctldHost=$(hostname)($NET.254)
SlurmctldPort=$((6900 + CR_NETNS_SUBNET))
SlurmdPort=$((7100 + CR_NETNS_SUBNET))
MailProg=/bin/true
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool-%n
SlurmctldPidFile=$S/ctld.pid
SlurmdPidFile=$S/d-%n.pid
SlurmctldLogFile=$S/ctld.log
SlurmdLogFile=$S/d-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SelectType=select/linear
NodeName=${P}1 NodeAddr=$NET.1 CPUs=1 State=UNKNOWN
NodeName=${P}2 NodeAddr=$NET.2 CPUs=1 State=UNKNOWN
NodeName=${P}3 NodeAddr=$NET.3 CPUs=1 State=UNKNOWN
PartitionName=p Nodes=${P}[1-3] Default=YES MaxTime=INFINITE State=UP
EOF2
# /sys/fs/cgroup is a tmpfs of v1 hierarchies here: name the plugin.
printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n' >"$S/cgroup.conf"
export SLURM_CONF="$S/slurm.conf"
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start: $(tail -5 "$S/ctld.log")"
for i in 1 2 3; do on $i slurmd -f "$SLURM_CONF" -N "$P$i" || fail "slurmd $i: $(tail -5 "$S/d-$P$i.log")"; done
for _ in $(seq 60); do [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break; sleep 0.5; done
[ "$(sinfo -h -o %t 2>/dev/null)" = idle ] || fail "the nodes did not come up: $(sinfo 2>&1; tail -5 "$S"/*.log)"
cd "$TMP" || fail cd
timeout 90 srun -N 3 --ntasks-per-node=1 --export=ALL "$CRESCENT_BIN" run "$TMP/job.lua" --port 29561 >out 2>&1
rc=$?
cat out
[ $rc -eq 0 ] || fail "srun exit $rc"
grep -q "ok nodes=3 workers=3" out || fail "the job did not run on 3 nodes"
grep -q "slurm launcher, world 3: scheduler and node 0 at tcp://$NET.1:29561 (eth0, from SLURM_STEP_NODELIST)" out ||
    fail "rank 0 did not take its host from the node list"
grep -q "slurm launcher, rank 2 of 3: node at $NET.3 (eth0)" out || fail "rank 2 not on host 3"
echo ok
