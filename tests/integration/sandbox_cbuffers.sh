#!/usr/bin/env bash
# C buffers a kernel allocates for a model count against its memory_mb:
# kge_batches with neg = 2e7 asked for about 4 GB in C, past any cap (the
# node grew to 1.6 GB, and aborted under ulimit -v). Now the call is
# refused before anything is allocated, naming the script and line, under
# `crescent run` and at the REPL on a pty, and the job goes on. The node
# runs under ulimit -v 3 GB: an allocation of the asked size would abort it.
# Under `make asan` (SANITIZE set) ASan's shadow memory cannot be mapped
# under any ulimit -v, so its own bound stands in: max_allocation_size_mb
# (with allocator_may_return_null=0) aborts on a single allocation over
# 3 GB, as the ulimit did.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cd "$CRESCENT_ROOT" || fail "cd"
want="tests/models/hostile.lua:[0-9]*: kge_batches: model script exceeded 64 MB (option memory_mb): C buffers of [0-9]* MB"
cat >"$TMP/job.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 2 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/hostile.lua", { memory_mb = 64 })
local ok, err = pcall(job.call, job, "kge_bomb", {})
print("bomb: " .. tostring(err):match("[^\n]*"))
print("still usable: " .. #job:call("ping", {}).results)
job:close()
LUA
cap_memory() {
    if [ -n "${SANITIZE:-}" ]; then
        export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=3000:allocator_may_return_null=0"
    else
        ulimit -v 3000000
    fi
}
(cap_memory; timeout 120 "$CRESCENT_BIN" run "$TMP/job.lua" >"$TMP/out" 2>&1; echo "rc=$?" >>"$TMP/out")
cat "$TMP/out"
grep -qx "rc=0" "$TMP/out" || fail "the job did not end with status 0"
grep -q "^bomb: worker [0-9] (node [01]): $want" "$TMP/out" || fail "the C allocation was not refused by the cap"
grep -q "^still usable: 4$" "$TMP/out" || fail "the job must stay usable"

feed() {
    repl_wait '^crescent ('
    printf 'job:call("kge_bomb", {})\n'; repl_wait 'kge_batches'
    printf 'print("after", #job:call("ping", {}).results)\n'; repl_wait '^after'
    printf 'print("nodes", #job:stats().nodes)\n'; repl_wait '^nodes'
    printf 'quit()\n'; repl_wait 'status='
}
(cap_memory; repl_session feed tests/integration/jobs/repl_unwind.lua)
repl_out | tail -n 12
repl_out | grep -q "worker [0-9] (node [01]): $want" || fail "REPL: the C allocation was not refused by the cap"
repl_out | grep -q '^after	4' || fail "REPL: the job must stay usable"
repl_out | grep -q '^nodes	2' || fail "REPL: job lost its nodes"
repl_out | grep -qx 'status=0' || fail "REPL did not exit with 0"
no_orphans || exit 1
echo "sandbox c buffers ok"
