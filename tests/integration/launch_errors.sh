#!/usr/bin/env bash
# Bad input under a cluster launcher, on loopback: a clear message, exit 2,
# within seconds. Key files (missing, readable by others, a bad line), a
# missing rendezvous port or rank 0 host, malformed launcher variables, a
# world that does not match the script's nodes, and two processes started
# as the same rank (the second is refused, naming the first).
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cd "$TMP" || fail cd
"$CRESCENT_BIN" keygen >key && chmod 600 key || fail keygen
cat >job.lua <<'EOF2'
local cr = require "crescent"
local job = cr.job{ workers = 1, join_timeout = 5 }
print("ok nodes=" .. job.nodes)
job:close()
EOF2
sed 's/workers = 1,/nodes = 2, workers = 1,/' job.lua >two.lua
port=$(free_port)
tv() { echo RANK=$1 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port; }
expect() { # expect STATUS PATTERN: the last run's exit status and message
    [ "$rc" -eq "$1" ] || fail "exit $rc, expected $1: $(cat out)"
    grep -q -- "$2" out || fail "no '$2' in: $(cat out)"
}
r() { timeout 20 env "$@" >out 2>&1; rc=$?; }

r $(tv 1) CRESCENT_KEY_FILE=$TMP/nokey "$CRESCENT_BIN" run job.lua
expect 2 "key file $TMP/nokey: No such file"
cp key open && chmod 644 open
r $(tv 1) CRESCENT_KEY_FILE=$TMP/open "$CRESCENT_BIN" run job.lua
expect 2 "can be read by others (mode 644): chmod 600"
{ head -1 key; echo "secret short"; } >bad && chmod 600 bad
r $(tv 1) "$CRESCENT_BIN" run job.lua --key bad
expect 2 "^bad:2: expected 'public KEY' or 'secret KEY'"
r $(tv 1) "$CRESCENT_BIN" run job.lua
expect 2 "need the cluster key: make one with \`crescent keygen > FILE\`"
r RANK=1 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 CRESCENT_KEY_FILE=key "$CRESCENT_BIN" run job.lua
expect 2 "under torchrun the rendezvous port must be given to every rank: --port N or CRESCENT_PORT"
r PMI_RANK=0 PMI_SIZE=2 CRESCENT_PORT=$port CRESCENT_KEY_FILE=key "$CRESCENT_BIN" run job.lua
expect 2 "does not say where rank 0 runs: set CRESCENT_MASTER"
r RANK=3 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 "$CRESCENT_BIN" run job.lua
expect 2 "RANK='3': expected an integer from 0 to 2"
r SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_NTASKS=2 SLURM_JOB_NODELIST='n[1-' "$CRESCENT_BIN" run job.lua
expect 2 "SLURM_JOB_NODELIST: 'n\[1-': '\[' without '\]'"
r $(tv 0) MASTER_ADDR=no-such-host.invalid CRESCENT_KEY_FILE=key "$CRESCENT_BIN" run job.lua
expect 2 "host 'no-such-host.invalid' does not resolve"
r $(tv 0) CRESCENT_KEY_FILE=key "$CRESCENT_BIN" run job.lua --nodes 2
expect 2 "\-\-nodes 2, but the launcher (torchrun) started 3 rank(s)"

# The script says nodes = 2, the launcher started 3: rank 0 refuses at
# cr.job{}, naming both; its nodes give up (the join timeout) on their own.
r $(tv 0) CRESCENT_KEY_FILE=key "$CRESCENT_BIN" run two.lua
expect 1 "cr.job{nodes = 2}: the launcher (torchrun) started 3 node(s); give nodes = 3 or leave it out"
grep -q "two.lua:2:" out || fail "the error does not name the script's line: $(cat out)"

# Rank 1 twice: the second to register is refused and says who holds it.
CRESCENT_KEY_FILE=key timeout 30 env $(tv 0) "$CRESCENT_BIN" run job.lua >out0 2>&1 &
s=$!
for i in a b; do CRESCENT_KEY_FILE=key timeout 30 env $(tv 1) "$CRESCENT_BIN" run job.lua >"out1$i" 2>&1 & done
wait
cat out0 out1a out1b
grep -q "refused this node: rank 1 is already taken by the node at tcp://127.0.0.1:" out1a out1b ||
    fail "the second rank 1 was not refused"
grep -q "only 2 of 3 nodes joined" out0 || fail "rank 0 did not give up on the missing rank 2"
no_orphans || exit 1
echo ok
