#!/usr/bin/env bash
# manage = "auto" from the REPL (docs/management.md, "The automatic
# choice"): a classic table handed to auto between epochs decides from the
# next epoch's counts (the locality model: 100 keys relocated, 2 hot keys
# replicated, the rest classic), goes back to classic on request (counting
# stops), and a bad option is refused with one line while the session goes on.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cat >"$TMP/job.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 2, workers = 2, seed = 3 }
job:table{ name = "C", keys = 2000, dim = 2, init = cr.init.zeros(), optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/locality.lua", {})
LUA
cat >"$TMP/in" <<'LUA'
own = { {}, {} }; for j = 0, 49 do own[1][j + 1] = 1100 + j; own[2][j + 1] = 100 + j end
sh = {}; for k = 600, 649 do sh[#sh + 1] = k; sh[#sh + 1] = k + 1000 end
a = { own = own, hot = { 20, 1980 }, shared = sh, round = 1, steps = 150, n_uni = 1, n_shared = 4 }
job.C:manage("auto")
"before", job.C:census()
r = job:epoch(a)
"census", job.C:census()
job.C:manage("auto:hott=1")
job.C:manage("classic")
"after", job.C:census()
r = job:epoch(a)
"still", job.C:census()
LUA
cd "$TMP" || fail "cd"
timeout 60 "$CRESCENT_BIN" repl job.lua <"$TMP/in" >"$TMP/out" 2>"$TMP/err"
rc=$?
cat "$TMP/out" "$TMP/err"
[ $rc -eq 0 ] || fail "exit status $rc"
grep -q "^before	0	0	2000$" "$TMP/out" || fail "auto without counts should keep classic"
grep -q "^census	2	100	1898$" "$TMP/out" || fail "auto did not relocate the 100 own keys and replicate the 2 hot ones"
grep -q "C:manage: auto: unknown option 'hott' (options: hot, keep, cap, min, share, least, stay, rest, worth)" "$TMP/err" ||
    fail "no error line for an unknown option"
grep -q "^after	0	0	2000$" "$TMP/out" || fail "classic on request"
grep -q "^still	0	0	2000$" "$TMP/out" || fail "classic stays classic after an epoch (no decider)"
no_orphans || exit 1
exit 0
