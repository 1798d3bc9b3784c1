#!/usr/bin/env bash
# Probe defects 8 and 12: `--metrics /dev/full` (a write error on the metrics
# file) and `--policy bsp:staleness=2` (an option bsp does not take) each end
# the run with a non-zero exit and a message naming the file / the option.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
if [ -w /dev/full ]; then
    timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" --metrics /dev/full -- 2 >"$TMP/out" 2>&1
    rc=$?
    cat "$TMP/out"
    [ $rc -ne 0 ] || fail "--metrics /dev/full exited 0"
    grep -q 'metrics file /dev/full: cannot write' "$TMP/out" || fail "the error does not name /dev/full"
fi
for spec in bsp:staleness=2 asp:x=1 ssp:staleness=1,oops=2; do
    timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" --policy "$spec" -- 2 >"$TMP/out" 2>&1
    rc=$?
    cat "$TMP/out"
    [ $rc -ne 0 ] || fail "--policy $spec exited 0"
    grep -q "bad policy file: .*unknown option" "$TMP/out" || fail "--policy $spec: no 'unknown option' error"
done
no_orphans || fail "node processes left behind"
echo ok
