#!/usr/bin/env bash
# Async requests that a failing call left without their wait (a model
# error, or Ctrl-C in the REPL, between pull_async and wait) are dropped
# when the next command starts. They used to stay for good, rows included:
# a worker's Lua state (capped at 32 MB here) ran out of memory after about
# 30 such calls, and the nodes of a REPL session grew by every one of them.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
for shape in "--nodes 2 --workers 1" "--nodes 1 --workers 2"; do
    # shellcheck disable=SC2086 # the shape is two options
    timeout 120 "$CRESCENT_BIN" run "$JOBS/pending.lua" $shape -- 100 >"$TMP/out" 2>&1
    rc=$?
    tail -5 "$TMP/out"
    [ $rc -eq 0 ] || fail "$shape: exit status $rc"
    grep -qx "ok rows=4096" "$TMP/out" || fail "$shape: the call after the failing ones"
done
no_orphans || exit 1
