#!/usr/bin/env bash
# crescent launch --hosts over real ssh: an sshd (Debian's openssh-server,
# keys made here) in each of three emulated hosts; the job runs on all
# three, each line comes back prefixed with its host, and nothing is left
# running on any host afterwards. A bad hostfile line names file:line.
set -u
. "$CRESCENT_ROOT/tests/cluster/lib.sh"
command -v /usr/sbin/sshd >/dev/null || { echo "skipped: no sshd (Debian's openssh-server)"; exit 77; }
cluster_up 3
cd "$TMP" || fail cd
ssh-keygen -q -t ed25519 -N '' -f hostkey && ssh-keygen -q -t ed25519 -N '' -f id || fail ssh-keygen
cp id.pub authorized_keys
cat >sshd_config <<EOF2
HostKey $TMP/hostkey
AuthorizedKeysFile $TMP/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
EOF2
mkdir -p /run/sshd
for i in 1 2 3; do
    on $i /usr/sbin/sshd -f "$TMP/sshd_config" -o ListenAddress=$NET.$i -o PidFile="$TMP/sshd$i.pid" ||
        fail "sshd on host $i"
done
export CRESCENT_SSH="ssh -i $TMP/id -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
printf '# three hosts, one rank each\n%s\n%s  # second\n%s slots=1\n' $NET.1 $NET.2 $NET.3 >hosts
timeout 60 "$CRESCENT_BIN" launch --hosts hosts --port 29533 job.lua >out 2>&1
rc=$?
cat out
[ $rc -eq 0 ] || fail "launch exit $rc"
grep -q "^\[$NET.1 0\] ok nodes=3 workers=3" out || fail "rank 0's result line"
grep -q "^\[$NET.3 2\] crescent: crescent (CRESCENT_RANK) launcher, rank 2 of 3: node at $NET.3 (eth0)" out ||
    fail "rank 2 did not join from host 3"
sleep 1
for i in 1 2 3; do
    left=$(for p in $(ip netns pids "$P$i"); do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo; done | grep "crescent run")
    [ -z "$left" ] || fail "left running on host $i: $left"
done
printf '%s\n%s slots=two\n' $NET.1 $NET.2 >bad
"$CRESCENT_BIN" launch --hosts bad job.lua >out 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "^bad:2: expected 'HOST' or 'HOST slots=N'" out || fail "bad hostfile: exit $rc: $(cat out)"
echo ok
