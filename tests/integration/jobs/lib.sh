# Sourced by the integration scripts that run jobs (ps_*.sh and others).
# Tags every process we start with a unique environment variable so that
# orphan checks only see our own.
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
# FAIL_LOG: a file fail() shows after its message (unset: none).
fail() {
    echo "FAIL: $*"
    [ -n "${FAIL_LOG:-}" ] && cat "$FAIL_LOG" 2>/dev/null
    exit 1
}
# Run `crescent run ARGS...` (60 s at most) into $TMP/out and show the
# output and how long it took; sets rc (its exit status) and ms.
run_timed() {
    local t0
    t0=$(date +%s%N)
    timeout 60 "$CRESCENT_BIN" run "$@" >"$TMP/out" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    cat "$TMP/out"
    echo "ended after $ms ms"
}
# ---- REPL sessions under script(1) (a pseudo-terminal: Ctrl-C works)
# The session's output ($TMP/out) without CRs and terminal escapes.
repl_out() { tr -d '\r' <"$TMP/out" 2>/dev/null | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g'; }
# Wait (30 s at most) until PATTERN stands in at least N lines (default 1).
repl_wait() { for _ in $(seq 300); do [ "$(repl_out | grep -c -- "$1")" -ge "${2:-1}" ] && return; sleep 0.1; done; }
# Run `crescent run JOB --repl` (90 s at most) with the input the shell
# function FEED writes; the output goes to $TMP/out and ends "status=N".
repl_session() {
    local feed=$1 job=$2
    command -v script >/dev/null || { echo "script(1) not installed"; exit 77; }
    cd "$CRESCENT_ROOT" || fail "cd $CRESCENT_ROOT"
    "$feed" | SHELL=$(command -v bash) timeout 90 script -qfec \
        "$CRESCENT_BIN run $job --repl; echo status=\$?" /dev/null >"$TMP/out" 2>&1
}
# After an interrupted epoch the session printed "next STEPS SECONDS" for a
# one-step epoch: no node died, all 4 workers ran it, and it started at once
# (the interrupted epoch was cancelled on every worker).
repl_check_cancelled() {
    repl_out | grep -q 'died' && fail "a node died from the Ctrl-C"
    local line
    line=$(repl_out | grep '^next')
    [ -n "$line" ] || fail "no epoch after the interrupt"
    set -- $line
    [ "$2" = 4 ] || fail "next epoch ran $2 steps, expected 4 (one per worker)"
    [ "$3" -le 3 ] || fail "next epoch took $3 s: the interrupted one was not cancelled"
}
# Export a fresh cluster key pair (crescent keygen): nodes started by hand
# must present it to join (and use it on the data plane).
export_cluster_key() {
    local k
    k=$("$CRESCENT_BIN" keygen) || fail "keygen"
    export CRESCENT_CURVE_PUBLIC=$(echo "$k" | awk '$1 == "public" {print $2}')
    export CRESCENT_CURVE_SECRET=$(echo "$k" | awk '$1 == "secret" {print $2}')
}
# The first of N consecutive TCP ports on 127.0.0.1 (default 1) that
# nothing listens on now: random, in 20000 up to below the kernel's
# ephemeral range (whose ports other connections take as their own end, so
# a listener there can still meet "Address already in use"), each refusing a
# connection. A fixed random pick collided with other jobs' listeners on a
# shared machine, and ps_data_probe's 20000-39999 with an ephemeral port.
free_port() {
    local n=${1:-1} lo hi p i ok
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    hi=$((lo > 21000 ? lo - n : 32768 - n))
    for _ in $(seq 1 50); do
        p=$((20000 + RANDOM % (hi - 20000)))
        ok=1
        for ((i = 0; i < n; i++)); do
            (exec 3<>"/dev/tcp/127.0.0.1/$((p + i))") 2>/dev/null && { ok=0; break; }
        done
        [ $ok = 1 ] && break
    done
    echo "$p"
}
# check_timed KIND MAX-SECONDS PATTERN: $TMP/out has a line "KIND: SECONDS
# ..." with SECONDS <= MAX-SECONDS and matching PATTERN (jobs that time how
# long a hostile script took to be stopped print such lines).
check_timed() {
    local line s
    line=$(grep "^$1: " "$TMP/out") || fail "$1: no line"
    s=$(echo "$line" | awk '{print $2}')
    [ "$s" -le "$2" ] || fail "$1 took $s s (at most $2)"
    echo "$line" | grep -q -- "$3" || fail "$1: expected a message matching '$3'"
}
