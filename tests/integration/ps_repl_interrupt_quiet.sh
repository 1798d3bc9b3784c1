#!/usr/bin/env bash
# Probe defect 5: Ctrl-C at the REPL during job:epoch with a model that
# sleeps and clocks but never reports progress. The wait stops at once
# ("interrupted!"), the command is cancelled on every worker (the next epoch
# starts at once), a second interrupt later works the same way, two quick
# presses do not end the session, and the session survives all of them.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
feed() {
    repl_wait '^crescent ('
    printf 'job:epoch{ steps = 400, sleep = 0.05 }\n'
    sleep 1.5; t0=$(date +%s%N); printf '\003'; repl_wait 'interrupted!'
    echo $(( ($(date +%s%N) - t0) / 1000000 )) >"$TMP/ms1"
    printf 't0 = os.time(); r = job:epoch{ steps = 1 }; print("next", r.sum.steps, os.time() - t0)\n'
    repl_wait '^next'
    printf 'job:epoch{ steps = 400, sleep = 0.05 }\n'
    sleep 1.5; t0=$(date +%s%N); printf '\003'; repl_wait 'interrupted!' 2
    echo $(( ($(date +%s%N) - t0) / 1000000 )) >"$TMP/ms2"
    printf 'print("again", job:epoch{ steps = 1 }.sum.steps, #job:stats().nodes)\n'; repl_wait '^again'
    # two quick presses: the first takes effect, the second must not end the session
    printf 'job:epoch{ steps = 400, sleep = 0.05 }\n'
    sleep 1.5; printf '\003'; sleep 0.3; printf '\003'; repl_wait 'interrupted!' 3
    sleep 0.5
    printf 'print("alive", job:epoch{ steps = 1 }.sum.steps)\n'; repl_wait '^alive'
    printf 'quit()\n'; repl_wait 'status='
}
repl_session feed tests/integration/jobs/repl_quiet.lua
repl_out | tail -n 14
[ "$(repl_out | grep -c 'interrupted!')" -ge 2 ] || fail "Ctrl-C did not interrupt both epochs"
echo "interrupts took $(cat "$TMP/ms1") ms and $(cat "$TMP/ms2") ms"
[ "$(cat "$TMP/ms1")" -lt 3000 ] && [ "$(cat "$TMP/ms2")" -lt 3000 ] \
    || fail "Ctrl-C took effect only after seconds (the wait did not notice it)"
repl_check_cancelled
repl_out | grep -q '^again	4	2' || fail "the session or the job did not survive the second interrupt"
repl_out | grep -q '^alive	4' || fail "two quick Ctrl-Cs ended the session or the job (probe defect 5)"
repl_out | grep -qx 'status=0' || fail "REPL did not exit with 0"
no_orphans || exit 1
echo "repl interrupt without progress ok"
