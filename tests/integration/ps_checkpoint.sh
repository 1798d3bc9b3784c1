#!/usr/bin/env bash
# job:save / job:load: values and optimizer state round-trip, also into a
# different node count; truncated or corrupted files are refused.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
run() { timeout 60 "$CRESCENT_BIN" run "$JOBS/ckpt.lua" "$@" 2>"$TMP/err"; }
run --nodes 2 -- save "$TMP/a.ckpt" >"$TMP/save" || { cat "$TMP/err"; fail "save"; }
cat "$TMP/save"
[ -f "$TMP/a.ckpt" ] && [ ! -e "$TMP/a.ckpt.tmp" ] || fail "checkpoint file"
for nodes in 1 2 3; do
    run --nodes $nodes --workers 2 -- load "$TMP/a.ckpt" >"$TMP/load$nodes" || { cat "$TMP/err"; fail "load into $nodes nodes"; }
    diff "$TMP/save" "$TMP/load$nodes" || fail "load into $nodes nodes differs"
done
size=$(stat -c %s "$TMP/a.ckpt")
head -c $((size / 2)) "$TMP/a.ckpt" >"$TMP/trunc.ckpt"
run -- load "$TMP/trunc.ckpt" >/dev/null && fail "truncated file accepted"
cat "$TMP/err"
grep -q "trunc.ckpt" "$TMP/err" || fail "error must name the file"
cp "$TMP/a.ckpt" "$TMP/bad.ckpt"
printf '\x55\x55\x55\x55' | dd of="$TMP/bad.ckpt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run -- load "$TMP/bad.ckpt" >/dev/null && fail "corrupted file accepted"
cat "$TMP/err"
grep -q "bad.ckpt" "$TMP/err" || fail "error must name the file"
no_orphans || exit 1
