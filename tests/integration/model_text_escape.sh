#!/usr/bin/env bash
# Text a model chose (ctx:log, error()) reaches the terminal with its
# control characters escaped: no window title, clear screen, carriage
# return or line of its own, on 1 and 2 nodes (whose workers' stderr is a
# child process's), caught by the job script or reported by crescent run.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for nodes in 1 2; do
    timeout 60 "$CRESCENT_BIN" run "$JOBS/terminal.lua" -- $nodes >"$TMP/out" 2>&1
    rc=$?
    cat -v "$TMP/out"
    [ $rc -eq 1 ] || fail "exit status $rc, expected 1 (the uncaught error)"
    LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/out" && fail "a control character reached the output"
    LC_ALL=C grep -q $'\xc2\x9b' "$TMP/out" && fail "a C1 control reached the output"
    grep -q '^scheduler: job finished' "$TMP/out" && fail "the model printed a line of its own"
    want='A\x1b]0;pwned\x07B\x1b[2J\x1b[HC\rD\nscheduler: job finished\xc2\x9bE'
    grep -qxF "[worker 0] log	$want" "$TMP/out" || fail "ctx:log's line, escaped (and nothing after it), expected"
    where="tests/models/terminal.lua:15: $want"
    grep "^caught: false worker" "$TMP/out" | grep -qF "): $where" || fail "the caught error, escaped, expected"
    grep "^crescent: worker" "$TMP/out" | grep -qF "): $where" || fail "the uncaught error, escaped, expected"
done
no_orphans || exit 1
