#!/usr/bin/env bash
# The four sampling schemes through the parameter server on 1 and 2 nodes,
# switched by the job script while the job runs (jobs/sampling_schemes.lua
# checks rows, chi-square marginals, counters, level 4's local keys and
# handles kept across a switch); the scheme chosen before the job starts by
# --sampling and by cr.job{sampling = ...}; job:sampling at the REPL.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for n in 1 2; do
    run_timed "$JOBS/sampling_schemes.lua" -- $n 2
    [ $rc -eq 0 ] || fail "nodes=$n: exit status $rc"
    grep -q "ok sampling schemes nodes=$n workers=2" "$TMP/out" || fail "nodes=$n: no ok line"
done
run_timed "$JOBS/sampling_flag.lua"
[ $rc -eq 0 ] && grep -q "scheme=conform drawn=400 reused=0 postponed=0 remote=[1-9]" "$TMP/out" || fail "default scheme"
run_timed "$JOBS/sampling_flag.lua" --sampling longterm:pool=10,reuse=4
[ $rc -eq 0 ] && grep -q "scheme=longterm:pool=10,reuse=4 drawn=[0-9]* reused=300 " "$TMP/out" || fail "--sampling"
run_timed "$JOBS/sampling_flag.lua" job
[ $rc -eq 0 ] && grep -q "scheme=bounded:pool=8,reuse=5 drawn=[0-9]* reused=320 postponed=0" "$TMP/out" || fail "cr.job{sampling}"
# the REPL has `job`: a switch there takes effect at the next prepare
out=$(printf '%s\n' 'job:sampling("bounded:pool=4,reuse=10")' \
    'local r = job:call("draw", { dist = "u", n = 80, m = 8 })' \
    'local s = job:stats(); print("repl", s.scheme, s.sampling.reused)' |
    timeout 60 "$CRESCENT_BIN" run "$JOBS/sampling_flag.lua" --repl -- keep 2>&1)
echo "$out"
echo "$out" | grep -q "repl	bounded:pool=4,reuse=10	144" || fail "job:sampling at the REPL"
no_orphans || exit 1
exit 0
