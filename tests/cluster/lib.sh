# Shared by the emulated-cluster tests: three hosts in network namespaces
# (tests/cluster/netns.sh), a cluster key, a job, and cleanup on any exit.
# Skips (exit 77, reason on the last line) where namespaces cannot be made.
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
NETNS="$CRESCENT_ROOT/tests/cluster/netns.sh"
if [ "$(id -u)" != 0 ]; then echo "skipped: needs root for network namespaces"; exit 77; fi
if ! ip netns list >/dev/null 2>&1; then echo "skipped: ip netns does not work here"; exit 77; fi
export CR_NETNS_PREFIX="cr$(($$ % 1000))h" CR_NETNS_SUBNET=$(($$ % 200 + 20))
P=$CR_NETNS_PREFIX
NET=10.77.$CR_NETNS_SUBNET
cluster_down() { [ -n "${KEEP_NETNS:-}" ] && return; bash "$NETNS" down >/dev/null 2>&1; }
trap 'cluster_down; cleanup' EXIT
# cluster_up N [--rate R]
cluster_up() { bash "$NETNS" up "$@" || fail "could not make the emulated hosts"; }
# on I CMD...: run CMD on host I
on() { local i=$1; shift; ip netns exec "$P$i" "$@"; }
"$CRESCENT_BIN" keygen >"$TMP/key" || fail keygen
chmod 600 "$TMP/key"
export CRESCENT_KEY_FILE="$TMP/key"
# A job that takes its node count from the launcher and checks every
# worker's pushes arrived.
cat >"$TMP/job.lua" <<'EOF'
local cr = require "crescent"
local job = cr.job{ workers = 1, seed = 1, policy = "bsp" }
local C = job:table{ name = "C", keys = 10, dim = 3, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
job:epoch{ steps = 3 }
local W = job.nodes * job.workers
for k = 0, 9 do assert(C:get(k)[1] == 3 * W, "every worker's pushes") end
print(("ok nodes=%d workers=%d"):format(job.nodes, W))
job:close()
EOF
