#!/usr/bin/env bash
# Ctrl-C at the REPL of `crescent run JOB --repl` during a long epoch (400
# steps x 0.05 s per worker, 2 nodes x 2 workers): the wait stops, the nodes
# survive (they have their own process group, so the terminal's SIGINT does
# not reach them), the command is cancelled on every worker, and the next
# epoch starts at once instead of after the rest of the interrupted one.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
feed() {
    repl_wait '^crescent ('
    printf 'job:epoch{ steps = 400, sleep = 0.05 }\n'; repl_wait 'epoch 1 '
    sleep 0.5; printf '\003'; repl_wait 'interrupted!'
    printf 't0 = os.time(); r = job:epoch{ steps = 1 }; print("next", r.sum.steps, os.time() - t0)\n'
    repl_wait '^next'
    printf 'print("nodes", #job:stats().nodes)\n'; repl_wait '^nodes'
    printf 'quit()\n'; repl_wait 'status='
}
repl_session feed tests/integration/jobs/repl_job.lua
repl_out | grep -v '^epoch 1 ' | tail -n 12
repl_out | grep -q 'interrupted!' || fail "Ctrl-C did not interrupt the epoch"
repl_check_cancelled
repl_out | grep -q '^nodes	2' || fail "job lost its nodes"
repl_out | grep -qx 'status=0' || fail "REPL did not exit with 0"
no_orphans || exit 1
echo "repl interrupt ok"
