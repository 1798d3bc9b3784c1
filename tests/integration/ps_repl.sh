#!/usr/bin/env bash
# crescent run JOB.lua --repl: the job stays open at the prompt; epochs,
# stats, policy switch, row get/set, save/load work from typed commands;
# nodes keep running until quit.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cat >"$TMP/in" <<EOF2
r = job:epoch{ steps = 2 }
print("sum", r.sum.steps)
print("C5", job.C:get(5)[1])
job.C:set(5, {100, 200, 300})
print("C5set", table.concat(job.C:get(5), ","))
job:policy("ssp", { staleness = 1 })
job:epoch{ steps = 2 }
print("policy", job:stats().policy, "clock", job:stats().workers[1].clock)
job:save("$TMP/r.ckpt")
job.C:set(5, {0, 0, 0})
job:load("$TMP/r.ckpt")
print("C5load", job.C:get(5)[1])
job.C:get(12)
print("still alive", #job:stats().nodes)
job:epoch{ steps = 1, fail = 2 }
print("after a model error", job:epoch{ steps = 1 }.sum.steps)
quit()
EOF2
timeout 60 "$CRESCENT_BIN" run "$JOBS/repl_job.lua" --repl <"$TMP/in" >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ $rc -eq 0 ] || fail "exit $rc"
grep -q "^sum	8" "$TMP/out" || fail "epoch from the REPL"
grep -q "^C5	8.0" "$TMP/out" || fail "get"
grep -q "^C5set	100.0,200.0,300.0" "$TMP/out" || fail "set"
grep -q "^policy	ssp	clock	4" "$TMP/out" || fail "policy switch / stats"
grep -q "^C5load	108.0" "$TMP/out" || fail "save/load"
grep -q "C:get: key 12 out of range" "$TMP/out" || fail "error at the prompt"
grep -q "^still alive	2" "$TMP/out" || fail "job must survive a typed error"
grep -q "worker 2 (node 1): tests/models/count.lua:35: attempt to index a nil value" "$TMP/out" || fail "model error at the prompt"
grep -q "^after a model error	4" "$TMP/out" || fail "the job must go on after a model error at the prompt"
no_orphans || exit 1
