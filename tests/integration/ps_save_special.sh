#!/usr/bin/env bash
# Probe defect 3: job:save replaces only a missing file or a regular file.
# Saving to /dev/null, a symlink, a fifo or a directory raises from the job
# script with the path and its kind, names the script line, exits non-zero,
# and leaves the target as it was (as root, a rename over /dev/null used to
# turn the device into a regular file and report success).
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
cat >"$TMP/save.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 1, workers = 1, seed = 7 }
job:table{ name = "A", keys = 10, dim = 2 }
job:save(arg[1])
print("saved")
job:close()
LUA
# expect_refused PATH KIND
expect_refused() {
    timeout 60 "$CRESCENT_BIN" run "$TMP/save.lua" -- "$1" >"$TMP/out" 2>"$TMP/err" && fail "save to $1 ($2) accepted"
    cat "$TMP/err"
    grep -qF "$1: not a regular file ($2); refusing to replace it" "$TMP/err" || fail "save to $1: wrong message"
    grep -qF "save.lua:4:" "$TMP/err" || fail "save to $1: the error must name the script line"
    ! grep -q saved "$TMP/out" || fail "save to $1 reported success"
    [ ! -e "$1.tmp" ] || fail "$1.tmp left behind"
}
expect_refused /dev/null "character device"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
echo keep >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/link.ckpt"
expect_refused "$TMP/link.ckpt" "symbolic link"
[ -L "$TMP/link.ckpt" ] && [ "$(readlink "$TMP/link.ckpt")" = "$TMP/victim" ] || fail "symlink changed"
[ "$(cat "$TMP/victim")" = keep ] || fail "symlink target changed"
mkfifo "$TMP/fifo.ckpt"
expect_refused "$TMP/fifo.ckpt" fifo
[ -p "$TMP/fifo.ckpt" ] || fail "fifo replaced"
mkdir "$TMP/dir.ckpt"
expect_refused "$TMP/dir.ckpt" directory
[ -d "$TMP/dir.ckpt" ] || fail "directory replaced"
# a symlink at PATH.tmp is not followed; a regular file still saves
ln -s "$TMP/victim" "$TMP/ok.ckpt.tmp"
timeout 60 "$CRESCENT_BIN" run "$TMP/save.lua" -- "$TMP/ok.ckpt" >/dev/null 2>"$TMP/err" && fail "symlink at PATH.tmp followed"
grep -qF "ok.ckpt.tmp: not a regular file (symbolic link)" "$TMP/err" || { cat "$TMP/err"; fail "PATH.tmp: wrong message"; }
[ "$(cat "$TMP/victim")" = keep ] || fail "PATH.tmp symlink target written"
rm "$TMP/ok.ckpt.tmp"
echo old >"$TMP/ok.ckpt"
timeout 60 "$CRESCENT_BIN" run "$TMP/save.lua" -- "$TMP/ok.ckpt" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; fail "save over a regular file"; }
grep -q saved "$TMP/out" && [ -f "$TMP/ok.ckpt" ] && [ "$(head -c 6 "$TMP/ok.ckpt")" = CRCKPT ] || fail "checkpoint not written"
no_orphans || exit 1
echo "ok"
