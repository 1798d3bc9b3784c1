# Sourced by tests/integration/ps_*.sh. Tags every process we start with a
# unique environment variable so that orphan checks only see our own.
export CRESCENT_TEST_TAG="ps-$$-$RANDOM"
JOBS="$CRESCENT_ROOT/tests/integration/jobs"
TMP=$(mktemp -d)
cleanup() {
    for p in $(our_nodes); do kill -9 "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
# PIDs of live `crescent node` processes carrying our tag.
our_nodes() {
    for p in $(pgrep -f "crescent node --scheduler" 2>/dev/null) $(pgrep -f "crescent node" 2>/dev/null); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "CRESCENT_TEST_TAG=$CRESCENT_TEST_TAG"; then
            echo "$p"
        fi
    done | sort -u
}
# Fail if any of our node processes is still alive after a short grace.
no_orphans() {
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -z "$(our_nodes)" ] && return 0
        sleep 0.2
    done
    echo "orphan node processes: $(our_nodes)"
    return 1
}
fail() { echo "FAIL: $*"; exit 1; }
# Export a fresh cluster key pair (crescent keygen): nodes started by hand
# must present it to join (and use it on the data plane).
export_cluster_key() {
    local k
    k=$("$CRESCENT_BIN" keygen) || fail "keygen"
    export CRESCENT_CURVE_PUBLIC=$(echo "$k" | awk '$1 == "public" {print $2}')
    export CRESCENT_CURVE_SECRET=$(echo "$k" | awk '$1 == "secret" {print $2}')
}
