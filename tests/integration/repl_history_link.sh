#!/usr/bin/env bash
# The REPL's history file is never written through a symbolic link: with
# CRESCENT_HISTORY a link (absolute or relative), the link's target keeps
# its content and mode, nothing is created beside the working directory,
# and one line says the history is not kept. A regular file still gets it.
set -u
BIN=${CRESCENT_BIN:-./crescent}
command -v script >/dev/null || { echo "script(1) not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- output"; cat -A "$tmp/out" | head -20; exit 1; }
seen() { tr -d '\r' <"$tmp/out" 2>/dev/null | grep -c -- "$1"; }
wait_for() { for _ in $(seq 150); do [ "$(seen "$1")" -ge 1 ] && return; sleep 0.1; done; }
session() { # HISTORY: type one line, then Ctrl-D, on a pty
    : >"$tmp/out"
    { wait_for '^crescent ('; printf 'x = 6 * 7\n'; wait_for 'x = 6'; printf '\004'; wait_for 'status='; } |
        (cd "$tmp/wd" && SHELL=$(command -v bash) CRESCENT_HISTORY="$1" timeout 30 \
            script -qfec "$BIN repl; echo status=\$?" /dev/null >"$tmp/out" 2>&1)
}
mkdir "$tmp/wd" "$tmp/d"
printf 'secret\n' >"$tmp/d/target"; chmod 644 "$tmp/d/target"
for link in "$tmp/d/target" target; do
    rm -f "$tmp/d/hist"; ln -s "$link" "$tmp/d/hist"
    session "$tmp/d/hist"
    grep -q 'status=0' "$tmp/out" || fail "REPL did not end with status 0 (link $link)"
    [ "$(cat "$tmp/d/target")" = secret ] || fail "link target rewritten (link $link): $(cat "$tmp/d/target")"
    [ "$(stat -c %a "$tmp/d/target")" = 644 ] || fail "link target mode changed to $(stat -c %a "$tmp/d/target") (link $link)"
    [ -z "$(ls "$tmp/wd")" ] || fail "files created in the working directory: $(ls "$tmp/wd")"
    [ -L "$tmp/d/hist" ] || fail "the link itself was replaced (link $link)"
    grep -q "history file $tmp/d/hist: not a regular file (symbolic link).*history is not kept" "$tmp/out" \
        || fail "no line saying why the history is not kept (link $link)"
done
session "$tmp/d/plain"
grep -qx 'x = 6 \* 7' "$tmp/d/plain" || fail "a regular history file was not written"
echo ok
