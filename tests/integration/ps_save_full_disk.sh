#!/usr/bin/env bash
# job:save on a full disk (a 256 KiB tmpfs mounted here) raises an error
# positioned at the user's script and line, naming the file and the reason,
# never a line of the library; no PATH.tmp is left. Also `--policy bsp:x`
# names the command-line option and a script's `policy = "bsp:x"` its line.
# Needs root for mount.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
mkdir "$TMP/disk"
mount -t tmpfs -o size=256k tmpfs "$TMP/disk" 2>/dev/null || { echo "skip: cannot mount a tmpfs"; exit 77; }
trap 'umount "$TMP/disk"; cleanup' EXIT
cat >"$TMP/save.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 1, workers = 1, seed = 7 }
job:table{ name = "A", keys = 100000, dim = 8, init = cr.init.normal(0, 1) }
local ok, err = pcall(function() job:save(arg[1]) end)
print(ok, err)
job:save(arg[1])
LUA
ck="$TMP/disk/a.ckpt"
timeout 60 "$CRESCENT_BIN" run "$TMP/save.lua" -- "$ck" >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ $rc -ne 0 ] || fail "a save on a full disk exited 0"
grep -q "^false	$TMP/save.lua:4: job:save: .*No space left on device" "$TMP/out" || fail "pcall'd save: not the script's line 4"
grep -q "^crescent: $TMP/save.lua:6: job:save: .*No space left on device" "$TMP/out" || fail "save: not the script's line 6"
grep -q "lua/crescent/" "$TMP/out" && fail "a library position in the message"
[ ! -e "$ck.tmp" ] || fail "$ck.tmp left behind"

timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" --policy bsp:x -- 2 >"$TMP/out" 2>&1 && fail "--policy bsp:x exited 0"
cat "$TMP/out"
grep -qx "crescent: --policy: bad policy option 'x' in 'bsp:x' (expected key=value)" "$TMP/out" || fail "--policy bsp:x: option not named"
printf 'local cr = require "crescent"\nlocal job = cr.job{ policy = "bsp:x" }\n' >"$TMP/pol.lua"
timeout 60 "$CRESCENT_BIN" run "$TMP/pol.lua" >"$TMP/out" 2>&1 && fail "policy = bsp:x exited 0"
cat "$TMP/out"
grep -qx "crescent: $TMP/pol.lua:2: bad policy option 'x' in 'bsp:x' (expected key=value)" "$TMP/out" || fail "policy = bsp:x: line not named"
no_orphans || exit 1
