#!/usr/bin/env bash
# The REPL's Lua half is lua/crescent/repl.lua, loaded once per session (the
# printer is its `show`), and the prompt keeps offering `job`: before each
# line the global follows require("crescent.job").current() when that
# function exists (here a stand-in module): a new current job becomes
# `job`, a value the user gave `job` stays until the current job changes,
# and `job` is cleared when the job it holds stops being current.
set -u
BIN=${CRESCENT_BIN:-./crescent}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }

cat >"$tmp/in" <<'LUA'
type(package.loaded["crescent.repl"].show)
job
package.loaded["crescent.job"] = {current = function() return CUR end}
CUR = {name = "A"}
job.name
job = 5
job
CUR = {name = "B"}
job.name
CUR = nil
job
package.loaded["crescent.repl"].show = function(...) print("shown by repl.lua", ...) end
7
LUA
"$BIN" repl <"$tmp/in" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || fail "exit status $rc"
[ ! -s "$tmp/err" ] || fail "errors"
expected=$'function\nnil\nA\n5\nB\nnil\nshown by repl.lua\t7'
[ "$(cat "$tmp/out")" = "$expected" ] || fail "stdout differs from: $expected"
echo "repl job global ok"
