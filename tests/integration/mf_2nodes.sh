#!/usr/bin/env bash
# examples/mf.lua end to end on a small zipf-mf set (2000 x 500, 100k cells):
# --nodes 2 and --nodes 1 both bring the test RMSE from ~1 (predicting 0)
# below 0.45 in 10 epochs, agree within 10%, and write one metrics line per epoch.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
if "$BIN" run /dev/null 2>&1 | grep -q "not built yet"; then
    echo "crescent run is not built in this tree yet"; exit 77
fi
"$BIN" data zipf-mf --rows 2000 --cols 500 --cells 100000 --rank 16 --noise 0.1 --test-fraction 0.1 \
    --seed 3 --out "$tmp/d" >/dev/null || { echo "data generation failed"; exit 1; }
rmse() { sed -n 's/^mf result: test_rmse=\([0-9.]*\).*/\1/p' "$1"; }
for n in 2 1; do
    timeout 120 "$BIN" run examples/mf.lua --nodes "$n" --workers 1 --metrics "$tmp/m$n.jsonl" -- \
        --data "$tmp/d" --epochs 10 --batch 10000 >"$tmp/out$n" 2>&1
    rc=$?
    cat "$tmp/out$n"
    [ $rc -eq 0 ] || { echo "FAIL: --nodes $n exited $rc"; exit 1; }
    r=$(rmse "$tmp/out$n")
    [ -n "$r" ] || { echo "FAIL: --nodes $n printed no result line"; exit 1; }
    awk -v r="$r" 'BEGIN {exit !(r < 0.45)}' || { echo "FAIL: --nodes $n test RMSE $r >= 0.45"; exit 1; }
    lines=$(grep -c '"epoch"' "$tmp/m$n.jsonl" 2>/dev/null || echo 0)
    [ "$lines" -eq 10 ] || { echo "FAIL: --nodes $n wrote $lines metrics lines, want 10"; exit 1; }
    grep -q '"test_rmse"' "$tmp/m$n.jsonl" && grep -q '"cells_per_s"' "$tmp/m$n.jsonl" ||
        { echo "FAIL: metrics lack test_rmse/cells_per_s"; exit 1; }
done
r1=$(rmse "$tmp/out1") r2=$(rmse "$tmp/out2")
awk -v a="$r1" -v b="$r2" 'BEGIN {d = a > b ? a - b : b - a; exit !(d <= 0.1 * (a < b ? a : b))}' ||
    { echo "FAIL: --nodes 1 RMSE $r1 and --nodes 2 RMSE $r2 differ by more than 10%"; exit 1; }
echo "ok: test RMSE --nodes 1 $r1, --nodes 2 $r2"
