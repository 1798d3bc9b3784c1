#!/usr/bin/env bash
# crescent repl on a terminal (a pty from script(1)): prompts, the ">>"
# continuation prompt, Ctrl-C clearing a line and interrupting a running
# loop, tab completion, history written to CRESCENT_HISTORY, Ctrl-D leaving with status 0.
set -u
BIN=${CRESCENT_BIN:-./crescent}
command -v script >/dev/null || { echo "script(1) not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- output"; cat -A "$tmp/out" | head -40; exit 1; }
# Type the next thing only once the REPL has shown what the last one should
# produce (not fixed sleeps: the machine may be loaded).
seen() { tr -d '\r' <"$tmp/out" 2>/dev/null | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g' | grep -c -- "$1"; }
wait_for() { # PATTERN [COUNT]
    for _ in $(seq 150); do [ "$(seen "$1")" -ge "${2:-1}" ] && return; sleep 0.1; done
}
feed() {
    wait_for '^crescent ('
    printf 'function f()\n'; wait_for '^>> '
    printf 'return 6 * 7 end\n'; printf 'f()\n'; wait_for '^42$'
    printf 'abc'; wait_for '> abc'; printf '\003'; wait_for '\^C'
    printf 'while true do end\n'; wait_for '^> while true do end$'; sleep 0.2
    printf '\003'; wait_for 'interrupted!'
    printf '"alive"\n'; wait_for '^alive$'
    printf 'math.flo\t(2.5) + #cr.ver\t\n'; wait_for '^7$'     # tab completion
    printf '\004'; wait_for 'status='
}
seq 1 1500 | sed 's/^/old /' >"$tmp/hist"   # an old, over-long history
# script(1) runs the command with $SHELL. dash (the /bin/sh of Debian, and
# what script falls back to when SHELL is unset, as under CI) takes the Ctrl-C
# sent to the foreground group itself and exits once the REPL ends, before
# "echo status" runs; bash waits and sees the REPL was not killed by it.
feed | SHELL=$(command -v bash) CRESCENT_HISTORY="$tmp/hist" timeout 60 script -qfec "$BIN repl; echo status=\$?" /dev/null >"$tmp/out" 2>&1
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
