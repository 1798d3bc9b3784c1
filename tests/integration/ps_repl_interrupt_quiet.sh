#!/usr/bin/env bash
# Probe defect 5: Ctrl-C at the REPL during job:epoch with a model that
# sleeps and clocks but never reports progress. The wait stops at once
# ("interrupted!"), the command is cancelled on every worker (the next epoch
# starts at once), a second interrupt later works the same way, two quick
# presses do not end the session, and the session survives all of them.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
command -v script >/dev/null || { echo "script(1) not installed"; exit 77; }
clean() { tr -d '\r' <"$TMP/out" 2>/dev/null | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g'; }
wait_for() { for _ in $(seq 300); do [ "$(clean | grep -c -- "$1")" -ge "${2:-1}" ] && return; sleep 0.1; done; }
feed() {
    wait_for '^crescent ('
    printf 'job:epoch{ steps = 400, sleep = 0.05 }\n'
    sleep 1.5; t0=$(date +%s%N); printf '\003'; wait_for 'interrupted!'
    echo $(( ($(date +%s%N) - t0) / 1000000 )) >"$TMP/ms1"
    printf 't0 = os.time(); r = job:epoch{ steps = 1 }; print("next", r.sum.steps, os.time() - t0)\n'
    wait_for '^next'
    printf 'job:epoch{ steps = 400, sleep = 0.05 }\n'
    sleep 1.5; t0=$(date +%s%N); printf '\003'; wait_for 'interrupted!' 2
    echo $(( ($(date +%s%N) - t0) / 1000000 )) >"$TMP/ms2"
    printf 'print("again", job:epoch{ steps = 1 }.sum.steps, #job:stats().nodes)\n'; wait_for '^again'
    # two quick presses: the first takes effect, the second must not end the session
    printf 'job:epoch{ steps = 400, sleep = 0.05 }\n'
    sleep 1.5; printf '\003'; sleep 0.3; printf '\003'; wait_for 'interrupted!' 3
    sleep 0.5
    printf 'print("alive", job:epoch{ steps = 1 }.sum.steps)\n'; wait_for '^alive'
    printf 'quit()\n'; wait_for 'status='
}
cd "$CRESCENT_ROOT"
feed | SHELL=$(command -v bash) timeout 90 script -qfec \
    "$CRESCENT_BIN run tests/integration/jobs/repl_quiet.lua --repl; echo status=\$?" /dev/null >"$TMP/out" 2>&1
clean | tail -n 14
[ "$(clean | grep -c 'interrupted!')" -ge 2 ] || fail "Ctrl-C did not interrupt both epochs"
echo "interrupts took $(cat "$TMP/ms1") ms and $(cat "$TMP/ms2") ms"
[ "$(cat "$TMP/ms1")" -lt 3000 ] && [ "$(cat "$TMP/ms2")" -lt 3000 ] \
    || fail "Ctrl-C took effect only after seconds (the wait did not notice it)"
clean | grep -q 'died' && fail "a node died from the Ctrl-C"
line=$(clean | grep '^next')
[ -n "$line" ] || fail "no epoch after the interrupt"
set -- $line
[ "$2" = 4 ] || fail "next epoch ran $2 steps, expected 4 (one per worker)"
[ "$3" -le 3 ] || fail "next epoch took $3 s: the interrupted one was not cancelled"
clean | grep -q '^again	4	2' || fail "the session or the job did not survive the second interrupt"
clean | grep -q '^alive	4' || fail "two quick Ctrl-Cs ended the session or the job (probe defect 5)"
clean | grep -qx 'status=0' || fail "REPL did not exit with 0"
no_orphans || exit 1
echo "repl interrupt without progress ok"
