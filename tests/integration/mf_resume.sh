#!/usr/bin/env bash
# examples/mf.lua checkpoint=PATH: a 1 x 1 run stopped after 3 epochs and
# started again to 5 ends exactly where a 5-epoch run in one go ends (same
# epoch 5 line: loss, test RMSE, bold-driver learning rate), the metrics file
# continues at epoch 4, and a run already at its target trains nothing.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
fail() { echo "FAIL: $*"; exit 1; }
"$BIN" data zipf-mf --rows 2000 --cols 300 --cells 60000 --rank 4 --noise 0.1 --test-fraction 0.1 \
    --seed 2 --out "$tmp/d" >/dev/null || fail "data generation failed"
run() { # OUT EPOCHS [checkpoint=PATH] [metrics]
    local out=$1 ep=$2; shift 2
    timeout 60 "$BIN" run examples/mf.lua --nodes 1 --workers 1 --metrics "$tmp/$out.jsonl" -- \
        data="$tmp/d" epochs="$ep" dim=4 "$@" >"$tmp/$out" 2>&1 || { cat "$tmp/$out"; fail "$out exited $?"; }
}
run straight 5
run part1 3 checkpoint="$tmp/c.ckpt"
[ -f "$tmp/c.ckpt" ] || fail "no checkpoint written"
cp "$tmp/part1.jsonl" "$tmp/part2.jsonl"
run part2 5 checkpoint="$tmp/c.ckpt"
grep -q 'resumed from .* after epoch 3' "$tmp/part2" || { cat "$tmp/part2"; fail "no resume message"; }
grep -q '^epoch  [123] ' "$tmp/part2" && fail "resumed run trained epochs 1-3 again"
a=$(grep '^epoch  5 ' "$tmp/straight" | sed 's/ [0-9.]*s .*//')
b=$(grep '^epoch  5 ' "$tmp/part2" | sed 's/ [0-9.]*s .*//')
echo "straight: $a"; echo "resumed:  $b"
[ -n "$a" ] && [ "$a" = "$b" ] || fail "epoch 5 differs after resuming"
[ "$(grep -c '"epoch"' "$tmp/part2.jsonl")" -eq 5 ] || fail "metrics file does not hold epochs 1-5"
tail -n 1 "$tmp/part2.jsonl" | grep -q '"epoch":5' || fail "last metrics line is not epoch 5"
run again 5 checkpoint="$tmp/c.ckpt"
grep -q '^epoch ' "$tmp/again" && fail "a run already at its target trained"
r=$(sed -n 's/^mf result: test_rmse=\([0-9.]*\).*/\1/p' "$tmp/again")
[ "$r" = "$(sed -n 's/^mf result: test_rmse=\([0-9.]*\).*/\1/p' "$tmp/part2")" ] || fail "reloaded model RMSE $r differs"
echo "mf resume ok"
