#!/usr/bin/env bash
# A policy that lets no one go on: may_proceed always false (from the first
# clock, or past clock 2) or looping for ever. `crescent run` waited for ever
# with no output; now the scheduler sees every worker waiting at a clock the
# policy refused with the newest clocks and ends the command with an error
# naming the policy and the clocks, and a looping may_proceed is stopped
# after 5 s like the policy's constructor. At the REPL (on a pty) the prompt
# comes back and the job goes on.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cd "$CRESCENT_ROOT" || fail "cd"
stuck="consistency policy [^ ]*tests/policies/never.lua admits none of the waiting workers: each worker waits at a clock or has finished, and nothing can change the policy's answer"
timeout 60 "$CRESCENT_BIN" run "$JOBS/stuck_policy.lua" >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ $rc -eq 0 ] || fail "exit status $rc, expected 0 (124: it hung)"
check_timed never 3 "worker [0-3] (node [01]): tests/models/count.lua:[0-9]*: $stuck (clocks of workers 0..: 1 1 1 1)"
check_timed upto 3 "worker [0-3] (node [01]): tests/models/count.lua:[0-9]*: $stuck (clocks of workers 0..: 3 3 3 3)"
check_timed spin 9 "worker [0-3] (node [01]): tests/models/count.lua:[0-9]*: policy: tests/policies/spin.lua:[0-9]*: policy script ran longer than 5 s (stopped)"
grep -q "^still usable: 8$" "$TMP/out" || fail "the job must stay usable"

# Uncaught under `crescent run --policy`: the job ends with exit 1 and the error.
timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" --policy tests/policies/never.lua >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ $rc -eq 1 ] || fail "--policy never.lua: exit status $rc, expected 1 (124: it hung)"
grep -q "$stuck" "$TMP/out" || fail "--policy never.lua: the error must name the policy"

feed() {
    repl_wait '^crescent ('
    printf 'job:policy("tests/policies/never.lua")\n'
    printf 'job:epoch{ steps = 3 }\n'; repl_wait 'admits none'
    printf 'job:policy("tests/policies/spin.lua")\n'
    printf 'job:epoch{ steps = 3 }\n'; repl_wait 'ran longer than'
    printf 'job:policy("bsp")\n'
    printf 'r = job:epoch{ steps = 2 }; print("next", r.sum.steps)\n'; repl_wait '^next'
    printf 'quit()\n'; repl_wait 'status='
}
repl_session feed tests/integration/jobs/repl_job.lua
repl_out | tail -n 20
repl_out | grep -q "$stuck (clocks of workers 0..: 1 1 1 1)" || fail "REPL: no error for the policy that admits no one"
repl_out | grep -q "tests/policies/spin.lua:[0-9]*: policy script ran longer than 5 s" || fail "REPL: the looping policy was not stopped"
repl_out | grep -q '^next	8' || fail "REPL: the job must go on"
repl_out | grep -qx 'status=0' || fail "REPL did not exit with 0"
no_orphans || exit 1
echo "policy stuck ok"
