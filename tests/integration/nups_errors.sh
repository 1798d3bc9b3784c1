#!/usr/bin/env bash
# manage= of examples/mf.lua, kge.lua and word2vec.lua: an unknown value is
# one line naming the script and the accepted values, a non-zero exit, no
# crash, no orphan node; checked before any data is read or node started.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cd "$CRESCENT_ROOT" || exit 1
for ex in mf kge word2vec; do
    for bad in sideways CLASSIC ""; do
        run_timed "examples/$ex.lua" --nodes 2 -- manage="$bad"
        [ "$rc" -ne 0 ] || fail "$ex manage='$bad': exit 0"
        [ "$rc" -lt 128 ] || fail "$ex manage='$bad': crashed ($rc)"
        grep -q "examples/$ex.lua: unknown manage '$bad' (auto, nups, classic, relocate, replicate, hot)" "$TMP/out" ||
            fail "$ex manage='$bad': expected the one-line error"
        [ "$(grep -c . "$TMP/out")" -le 2 ] || fail "$ex manage='$bad': more than the error line"
    done
done
no_orphans || exit 1
exit 0
