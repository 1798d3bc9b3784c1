#!/usr/bin/env bash
# crescent repl on a terminal (a pty from script(1)): prompts, the ">>"
# continuation prompt, Ctrl-C clearing a line and interrupting a running
# loop, tab completion, history written to CRESCENT_HISTORY, Ctrl-D leaving with status 0.
set -u
BIN=${CRESCENT_BIN:-./crescent}
command -v script >/dev/null || { echo "script(1) not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- output"; cat -A "$tmp/out" | head -40; exit 1; }
feed() {
    printf 'function f()\n'; sleep 0.3; printf 'return 6 * 7 end\n'; sleep 0.3
    printf 'f()\n'; sleep 0.3
    printf 'abc'; sleep 0.3; printf '\003'; sleep 0.3
    printf 'while true do end\n'; sleep 0.5; printf '\003'; sleep 0.3
    printf '"alive"\n'; sleep 0.3
    printf 'math.flo\t(2.5) + #cr.ver\t\n'; sleep 0.3     # tab completion
    printf '\004'; sleep 0.5
}
seq 1 1500 | sed 's/^/old /' >"$tmp/hist"   # an old, over-long history
feed | CRESCENT_HISTORY="$tmp/hist" timeout 20 script -qfec "$BIN repl; echo status=\$?" /dev/null >"$tmp/out" 2>&1
tr -d '\r' <"$tmp/out" | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g' >"$tmp/clean"
grep -q '^>> return 6 \* 7 end$' "$tmp/clean" || fail "no continuation prompt"
grep -qx '42' "$tmp/clean" || fail "f() did not print 42"
grep -q 'interrupted!' "$tmp/clean" || fail "Ctrl-C did not interrupt the loop"
grep -qx 'alive' "$tmp/clean" || fail "prompt dead after Ctrl-C"
grep -qx 'status=0' "$tmp/clean" || fail "Ctrl-D did not exit with 0"
grep -qx '7' "$tmp/clean" || fail "tab completion: math.floor(2.5) + #cr.version did not give 7"
[ -f "$tmp/hist" ] || fail "no history file"
grep -qx 'math.floor(2.5) + #cr.version' "$tmp/hist" || fail "completed line not in history"
grep -qx 'f()' "$tmp/hist" || fail "history lacks f()"
grep -q 'abc' "$tmp/hist" && fail "a cancelled line went into history"
n=$(wc -l <"$tmp/hist")
[ "$n" -le 1000 ] || fail "history not bounded: $n lines"
grep -qx 'old 1500' "$tmp/hist" || fail "old history lost"
echo "repl tty ok"
