#!/usr/bin/env bash
# A metrics write that fails on a full disk (a 64 KiB tmpfs mounted here)
# raises naming the file, and leaves only whole JSON lines: each record is
# written whole or not at all. Records of 1000 bytes do not divide the
# disk, so the failing one is always cut part way. Needs root for mount.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
mkdir "$TMP/disk"
mount -t tmpfs -o size=64k tmpfs "$TMP/disk" 2>/dev/null || { echo "skip: cannot mount a tmpfs"; exit 77; }
trap 'umount "$TMP/disk"; cleanup' EXIT
cat >"$TMP/log.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 1, workers = 1, metrics = arg[1] }
local pad = string.rep("x", 1000)
for i = 1, 1000 do
    local ok, err = pcall(job.log, job, { epoch = i, pad = pad })
    if not ok then print("failed at record " .. i .. ": " .. err) break end
end
LUA
m="$TMP/disk/m.jsonl"
timeout 60 "$CRESCENT_BIN" run "$TMP/log.lua" -- "$m" >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "run"; }
cat "$TMP/out"
grep -q "failed at record [0-9]*: job:log: metrics file $m: cannot write: No space left on device" "$TMP/out" \
    || fail "no full-disk error naming the file"
n=$(wc -l <"$m")
[ "$n" -gt 10 ] || fail "only $n records fit"
[ "$(tail -c 1 "$m" | od -An -c | tr -d ' ')" = '\n' ] || fail "partial last line: $(tail -c 60 "$m")"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$m" || fail "not JSON"
grep -q "failed at record $((n + 1)):" "$TMP/out" || fail "records kept ($n) and the failing one do not match"
no_orphans || exit 1
