#!/usr/bin/env bash
# Scripts that spin in a message handler (xpcall(error, function() while
# true do end end)): Lua runs it with hooks off once the count hook raised,
# so before the sandbox took care of it a policy, sampling scheme or
# decision script hung the scheduler for ever (also through job:load of a
# checkpoint whose policy file changed), and a model script ignored the
# cancel until its nodes were ended 10 s later. Now each is stopped and
# named, under `crescent run` and at the REPL on a pty, and the job goes on.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cd "$CRESCENT_ROOT" || fail "cd"
timeout 120 "$CRESCENT_BIN" run "$JOBS/sandbox_unwind.lua" "$TMP" >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ $rc -eq 0 ] || fail "exit status $rc, expected 0 (124: it hung)"
check_timed policy 9 "bad policy file: $TMP/pol.lua:1: policy script ran longer than 5 s (stopped)"
check_timed scheme 9 "bad sampling scheme: $TMP/scheme.lua:1: sampling scheme ran longer than 5 s (stopped)"
check_timed decision 9 "manage: $TMP/decide.lua:1: management script ran longer than 5 s (stopped)"
check_timed load 9 "bad policy file: $TMP/saved.lua:1: policy script ran longer than 5 s (stopped)"
check_timed model 5 "worker 0 (node 0): tests/models/hostile.lua:[0-9]*: worker 0 fails on purpose"
grep -q "did not stop" "$TMP/out" && fail "a worker did not stop at the cancel"
grep -q "^still usable: 4$" "$TMP/out" || fail "the job must stay usable"

# At the REPL: Ctrl-C during a call whose every worker spins in a handler
# cancels it on every worker at once (the next call starts within 3 s, the
# nodes live); a policy that spins in a handler is refused after 5 s and the
# prompt comes back.
printf 'xpcall(error, function() while true do end end)\nreturn function(o) return {may_proceed = function() return true end} end\n' \
    >"$TMP/pol.lua"
feed() {
    repl_wait '^crescent ('
    printf 'job:call("spin_handler_all", {})\n'; sleep 1
    printf '\003'; repl_wait 'interrupted!'
    printf 't0 = os.time(); r = job:call("ping", {}); print("next", #r.results, os.time() - t0)\n'
    repl_wait '^next'
    printf 'job:policy("%s")\n' "$TMP/pol.lua"; repl_wait 'ran longer than'
    printf 'print("nodes", #job:stats().nodes)\n'; repl_wait '^nodes'
    printf 'quit()\n'; repl_wait 'status='
}
repl_session feed tests/integration/jobs/repl_unwind.lua
repl_out | tail -n 12
repl_out | grep -q 'interrupted!' || fail "Ctrl-C did not interrupt the call"
repl_out | grep -q 'did not stop' && fail "a worker did not stop at the cancel"
line=$(repl_out | grep '^next') || fail "no call after the interrupt"
set -- $line
[ "$2" = 4 ] || fail "the next call ran on $2 workers, expected 4"
[ "$3" -le 3 ] || fail "the next call took $3 s: the spinning one was not cancelled"
repl_out | grep -q "bad policy file: $TMP/pol.lua:1: policy script ran longer than 5 s (stopped)" \
    || fail "the REPL did not report the spinning policy"
repl_out | grep -q '^nodes	2' || fail "job lost its nodes"
repl_out | grep -qx 'status=0' || fail "REPL did not exit with 0"
no_orphans || exit 1
echo "sandbox unwind ok"
