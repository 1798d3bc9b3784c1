#!/usr/bin/env bash
# Bad command-line values and bad policy files: one clear line, no crash.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
check() { # expected-status pattern command...
    local want=$1 pat=$2; shift 2
    timeout 30 "$@" >"$TMP/out" 2>&1
    local rc=$?
    [ $rc -eq "$want" ] || { cat "$TMP/out"; fail "'$*' exited $rc, expected $want"; }
    grep -q -- "$pat" "$TMP/out" || { cat "$TMP/out"; fail "'$*': expected message matching '$pat'"; }
}
check 2 "--nodes: 'abc' is not an integer" "$CRESCENT_BIN" run "$JOBS/count.lua" --nodes abc
check 2 "--workers: '-1' is not an integer" "$CRESCENT_BIN" run "$JOBS/count.lua" --workers -1
# probe defect 9: what the machine cannot run is refused at once, by name
check 2 "--workers 0 leaves no worker thread" "$CRESCENT_BIN" run "$JOBS/count.lua" --workers 0
check 2 "1000 nodes x 1 workers = 1000 worker threads: this machine runs at most" \
    "$CRESCENT_BIN" run "$JOBS/count.lua" --nodes 1000
check 2 "worker threads: this machine runs at most" "$CRESCENT_BIN" run "$JOBS/count.lua" --nodes 4 --workers 256
cat >"$TMP/noworkers.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 1, workers = 0 }
job:table{ name = "C", keys = 10, dim = 3, optimizer = cr.optim.add() }
job:model(os.getenv("CRESCENT_ROOT") .. "/tests/models/count.lua", {})
LUA
check 1 "noworkers.lua:4: .*this job has no workers (workers = 0)" "$CRESCENT_BIN" run "$TMP/noworkers.lua"
check 2 "unknown option '--frobnicate'" "$CRESCENT_BIN" run --frobnicate "$JOBS/count.lua"
check 2 "usage: crescent node" "$CRESCENT_BIN" node
check 1 "unknown consistency policy 'nosuch'" "$CRESCENT_BIN" run "$JOBS/count.lua" --policy nosuch
check 1 "ssp: staleness must be a non-negative integer" "$CRESCENT_BIN" run "$JOBS/count.lua" --policy ssp:staleness=-1
check 1 "cr.job{}: metrics file /nonexistent/m.jsonl: cannot open: No such file or directory" \
    "$CRESCENT_BIN" run "$JOBS/count.lua" --metrics /nonexistent/m.jsonl
check 1 "unknown consistency policy '/nonexistent/p.lua' (/nonexistent/p.lua: cannot open: No such file" \
    "$CRESCENT_BIN" run "$JOBS/count.lua" --policy /nonexistent/p.lua
# a policy file with a syntax error, and one that returns the wrong thing
printf 'return function(opts) return {may_proceed = function( end\n' >"$TMP/broken.lua"
check 1 "bad policy file: .*broken.lua:1:" "$CRESCENT_BIN" run "$JOBS/count.lua" --policy "$TMP/broken.lua"
printf 'return 42\n' >"$TMP/wrong.lua"
check 1 "must return a constructor" "$CRESCENT_BIN" run "$JOBS/count.lua" --policy "$TMP/wrong.lua"
# keys out of range / wrong row counts from a model script name the model line
check 1 "bad_keys.lua:[0-9]*: pull: key 10 (position 2) out of range \[0, 10) of table 'C'" \
    "$CRESCENT_BIN" run "$JOBS/bad_keys.lua" -- pull
check 1 "bad_keys.lua:[0-9]*: push: 2 keys need a 2 x 3 matrix of rows for table 'C', got 2 x 2" \
    "$CRESCENT_BIN" run "$JOBS/bad_keys.lua" -- push
check 1 "bad_keys.lua:[0-9]*: C:get: key 99 out of range \[0, 10)" "$CRESCENT_BIN" run "$JOBS/bad_keys.lua" -- get
# a deliberate error is one line; a runtime error in the script has a traceback
"$CRESCENT_BIN" run "$JOBS/count.lua" --policy nosuch >"$TMP/out" 2>&1
[ "$(wc -l <"$TMP/out")" -eq 1 ] || { cat "$TMP/out"; fail "a bad --policy must give one line"; }
printf 'local t = nil\nprint(t.x)\n' >"$TMP/rt.lua"
"$CRESCENT_BIN" run "$TMP/rt.lua" >"$TMP/out" 2>&1 && fail "runtime error exited 0"
grep -q "^crescent: $TMP/rt.lua:2: attempt to index a nil value" "$TMP/out" && grep -q "stack traceback" "$TMP/out" \
    || { cat "$TMP/out"; fail "a runtime error must name the line and show a traceback"; }
CRESCENT_TRACEBACK=1 "$CRESCENT_BIN" run "$JOBS/count.lua" --policy nosuch 2>&1 | grep -q "stack traceback" \
    || fail "CRESCENT_TRACEBACK=1 must show the traceback"
"$CRESCENT_BIN" keygen | grep -Eq "^public .{40}$" || fail "keygen"
no_orphans || exit 1
