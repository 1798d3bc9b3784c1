#!/usr/bin/env bash
# Ctrl-C at the REPL of `crescent run JOB --repl` during a long epoch (400
# steps x 0.05 s per worker, 2 nodes x 2 workers): the wait stops, the nodes
# survive (they have their own process group, so the terminal's SIGINT does
# not reach them), the command is cancelled on every worker, and the next
# epoch starts at once instead of after the rest of the interrupted one.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
command -v script >/dev/null || { echo "script(1) not installed"; exit 77; }
clean() { tr -d '\r' <"$TMP/out" 2>/dev/null | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g'; }
wait_for() { for _ in $(seq 300); do clean | grep -q -- "$1" && return; sleep 0.1; done; }
feed() {
    wait_for '^crescent ('
    printf 'job:epoch{ steps = 400, sleep = 0.05 }\n'; wait_for 'epoch 1 '
    sleep 0.5; printf '\003'; wait_for 'interrupted!'
    printf 't0 = os.time(); r = job:epoch{ steps = 1 }; print("next", r.sum.steps, os.time() - t0)\n'
    wait_for '^next'
    printf 'print("nodes", #job:stats().nodes)\n'; wait_for '^nodes'
    printf 'quit()\n'; wait_for 'status='
}
cd "$CRESCENT_ROOT"
feed | SHELL=$(command -v bash) timeout 90 script -qfec \
    "$CRESCENT_BIN run tests/integration/jobs/repl_job.lua --repl; echo status=\$?" /dev/null >"$TMP/out" 2>&1
clean | grep -v '^epoch 1 ' | tail -n 12
clean | grep -q 'interrupted!' || fail "Ctrl-C did not interrupt the epoch"
clean | grep -q 'died' && fail "a node died from the Ctrl-C"
line=$(clean | grep '^next')
[ -n "$line" ] || fail "no epoch after the interrupt"
set -- $line
[ "$2" = 4 ] || fail "next epoch ran $2 steps, expected 4 (one per worker)"
[ "$3" -le 3 ] || fail "next epoch took $3 s: the interrupted one was not cancelled"
clean | grep -q '^nodes	2' || fail "job lost its nodes"
clean | grep -qx 'status=0' || fail "REPL did not exit with 0"
no_orphans || exit 1
echo "repl interrupt ok"
