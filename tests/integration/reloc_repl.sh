#!/usr/bin/env bash
# From the REPL (docs/management.md): switch a table to relocation, run an
# epoch of the counting model that moves keys, switch back to classic
# between epochs (every key comes home), and the counts add up; an unknown
# technique is refused with one line and the session goes on.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cat >"$TMP/job.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 1, seed = 3 }
job:table{ name = "C", keys = 20, dim = 2, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count_reloc.lua", {})
LUA
cat >"$TMP/in" <<'LUA'
job.C:manage("relocate")
r = job:call("epoch", { steps = 30, batch = 4 })
n = 0; for _, w in ipairs(r.results) do for k = 1, 20 do n = n + w.adds[k] end end
moved = 0; for _, nd in ipairs(job:stats().nodes) do moved = moved + nd.relocation.rows_in end
"moved", moved > 0, n
job.C:manage("sideways")
job.C:manage("classic")
s = 0; for k = 0, 19 do s = s + job.C:get(k)[1] end
"home", s == n, job.C.manage_label
LUA
cd "$TMP" || fail "cd"
timeout 60 "$CRESCENT_BIN" repl job.lua <"$TMP/in" >"$TMP/out" 2>"$TMP/err"
rc=$?
cat "$TMP/out" "$TMP/err"
[ $rc -eq 0 ] || fail "exit status $rc"
grep -q "^moved	true	240$" "$TMP/out" || fail "no relocation, or not 2 workers x 30 x 4 adds"
grep -q "C:manage: unknown technique 'sideways'" "$TMP/err" || fail "no error line for an unknown technique"
grep -q "^home	true	classic$" "$TMP/out" || fail "counts differ after going back to classic"
no_orphans || exit 1
exit 0
