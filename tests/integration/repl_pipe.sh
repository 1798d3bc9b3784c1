#!/usr/bin/env bash
# crescent repl with piped input: expression results, statements, multi-line
# definitions, an error followed by a correct line, tables and objects
# printed as literals (cycles marked, __tostring honoured), quit() ending the session (later lines are not run), exit codes.
set -u
BIN=${CRESCENT_BIN:-./crescent}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }

cat >"$tmp/in" <<'LUA'
x = 1 + 2
x * 10
function twice(a)
  local b = a * 2
  return b
end
twice(21)
error("boom")
x = = 1
"still alive", x
{1, 2.5, "s", k = {true}}
type(cr.core), cr.version ~= nil
t = setmetatable({1, name = "obj"}, {}); t.me = t
t
setmetatable({}, {__tostring = function() return "custom" end}), 0.1
quit()
print("not reached")
LUA
"$BIN" repl <"$tmp/in" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || fail "exit status $rc, expected 0"
expected=$'30\n42\nstill alive\t3\n{1, 2.5, "s", k = {true}}\ntable\ttrue\n{1, me = <cycle>, name = "obj"}\ncustom\t0.1'
[ "$(cat "$tmp/out")" = "$expected" ] || fail "stdout differs from: $expected"
grep -q '^stdin:1: boom$' "$tmp/err" || fail "runtime error not reported"
grep -q "^stdin:1: unexpected symbol near '='$" "$tmp/err" || fail "syntax error not reported"
grep -q 'not reached' "$tmp/out" && fail "ran input after quit()"

# end of input inside an unfinished chunk: the syntax error, then exit 0
printf 'function f(\n' | "$BIN" repl >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || fail "EOF in a chunk: exit $rc"
grep -q "near <eof>" "$tmp/err" || fail "EOF in a chunk: no message"

# exit(n) / quit(n) give the status; plain EOF gives 0
printf 'exit(3)\n' | "$BIN" repl >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 3 ] || fail "exit(3) gave $rc"
printf '1\n' | "$BIN" repl >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = 1 ] || fail "EOF: rc $rc"

# options without a job script are a usage error
"$BIN" repl --nodes 2 </dev/null >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "repl --nodes 2 without a script: exit $rc, expected 2"
grep -q "need a job script" "$tmp/err" || fail "no usage message"
# a job script that fails: its error (file:line), non-zero status, no prompt
printf 'local x = 1\nerror("bad job")\n' >"$tmp/bad.lua"
printf '"prompt ran"\n' | "$BIN" repl "$tmp/bad.lua" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] || fail "failing job script: exit 0"
grep -q "bad.lua:2: bad job" "$tmp/err" || fail "failing job script: no file:line message"
grep -q "prompt ran" "$tmp/out" && fail "prompt opened after a failing job script"
echo "repl pipe ok"
