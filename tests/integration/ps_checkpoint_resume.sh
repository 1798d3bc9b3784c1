#!/usr/bin/env bash
# Resume from a checkpoint: train N epochs, save, train M more == train N,
# save, new process, load, train M more. With --nodes 1 --workers 1 the runs
# agree to float tolerance epoch by epoch (test RMSE, learning rate), and the
# metrics file of the second process continues the first's line by line.
# With 2 nodes x 2 workers (not bit-identical: asynchrony) the epoch numbers,
# the learning rate, the curve, the clocks and the policy (with its options)
# continue.
# A damaged metadata block is refused like a damaged table block.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
N=3 M=2
"$CRESCENT_BIN" data zipf-mf --rows 600 --cols 150 --cells 12000 --rank 4 --noise 0.1 --test-fraction 0.1 \
    --seed 2 --out "$TMP/d" >/dev/null || fail "data generation"
run() { timeout 60 "$CRESCENT_BIN" run "$JOBS/resume.lua" "$@" 2>"$TMP/err" || { cat "$TMP/err"; fail "run $*"; }; }
epochs() { grep '^epoch ' "$1"; }
field() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $1 " " $2 " " $(i + 1) }' "$1"; }

# 1. one node, one worker: the same numbers
run --metrics "$TMP/a.jsonl" -- first "$TMP/d" "$TMP/c.ckpt" $N $M >"$TMP/a"
run --metrics "$TMP/b.jsonl" -- second "$TMP/d" "$TMP/c.ckpt" $N $M >"$TMP/b"
cat "$TMP/a" "$TMP/b"
grep -qx "policy bsp staleness nil epochs $N curve $N" "$TMP/b" || fail "after load: $(head -1 "$TMP/b")"
epochs "$TMP/b" | awk '{print $2}' | tr '\n' ' ' | grep -qx "4 5 " || fail "second run must go on at epoch $((N + 1))"
epochs "$TMP/a" | tail -n $M >"$TMP/a_tail"
paste -d' ' "$TMP/a_tail" <(epochs "$TMP/b") | awk '
    { if ($2 != $10 || $4 != $12) bad = 1
      d = $6 - $14; if (d < 0) d = -d; if (d > 1e-6 * $6) bad = 1 }
    END { exit bad }' || fail "resumed epochs differ from the uninterrupted run"
[ "$(wc -l <"$TMP/b.jsonl")" -eq $((N + M)) ] || fail "metrics: $(wc -l <"$TMP/b.jsonl") lines, expected $((N + M))"
for k in $(seq 1 $((N + M))); do
    sed -n "${k}p" "$TMP/b.jsonl" | grep -q "\"epoch\":$k," || fail "metrics line $k is not epoch $k"
done
head -n $N "$TMP/a.jsonl" | cmp -s - <(head -n $N "$TMP/b.jsonl") || fail "restored curve differs from the saved run's lines"
sed 's/"seconds":[^,]*,//' "$TMP/a.jsonl" >"$TMP/a.ns"
sed 's/"seconds":[^,]*,//' "$TMP/b.jsonl" >"$TMP/b.ns"
diff "$TMP/a.ns" "$TMP/b.ns" || fail "metrics (without seconds) differ"

# 2. two nodes x two workers under ssp: numbering, lr, curve and policy continue
run --nodes 2 --workers 2 --policy ssp:staleness=1 --metrics "$TMP/p.jsonl" -- first "$TMP/d" "$TMP/p.ckpt" $N $M >"$TMP/p"
run --nodes 2 --workers 2 --metrics "$TMP/q.jsonl" -- second "$TMP/d" "$TMP/p.ckpt" $N $M >"$TMP/q"
cat "$TMP/p" "$TMP/q"
grep -qx "policy ssp staleness 1 epochs $N curve $N" "$TMP/q" || fail "policy/curve after load: $(head -1 "$TMP/q")"
[ "$(field "$TMP/p" lr | sed -n "$((N + 1))p")" = "$(field "$TMP/q" lr | head -1)" ] || fail "lr of epoch $((N + 1))"
epochs "$TMP/q" | awk '{print $2}' | tr '\n' ' ' | grep -qx "4 5 " || fail "2x2: epoch numbers"
[ "$(wc -l <"$TMP/q.jsonl")" -eq $((N + M)) ] || fail "2x2 metrics lines"
head -n $N "$TMP/p.jsonl" | cmp -s - <(head -n $N "$TMP/q.jsonl") || fail "2x2: restored curve"
# clocks go on from the saved ones (3 ticks per epoch), also into another worker count
[ "$(field "$TMP/p" clocks | tail -n $M)" = "$(field "$TMP/q" clocks)" ] || fail "2x2: clocks must continue"
[ "$(field "$TMP/a" clocks | tail -n $M)" = "$(field "$TMP/b" clocks)" ] || fail "1x1: clocks must continue"
run --nodes 1 --workers 1 -- second "$TMP/d" "$TMP/p.ckpt" $N 1 >"$TMP/r"
[ "$(field "$TMP/r" clocks)" = "epoch 4 12" ] || fail "2x2 into 1x1: $(cat "$TMP/r")"
run --nodes 1 --workers 3 -- second "$TMP/d" "$TMP/c.ckpt" $N 1 >"$TMP/r"
[ "$(field "$TMP/r" clocks)" = "epoch 4 12,12,12" ] || fail "1x1 into 1x3: $(cat "$TMP/r")"

# 3. crescent ckpt summarizes the resume state
"$CRESCENT_BIN" ckpt "$TMP/c.ckpt" >"$TMP/out" || fail "crescent ckpt c.ckpt"
grep -qE "^resume: epoch $N, seed 3, policy bsp, curve $N epochs, last loss [0-9.]+$" "$TMP/out" \
    || fail "ckpt summary: $(grep resume: "$TMP/out")"
"$CRESCENT_BIN" ckpt "$TMP/p.ckpt" >"$TMP/out" || fail "crescent ckpt p.ckpt"
grep -qE "^resume: epoch $N, seed 3, policy ssp \{staleness=1\}, curve $N epochs, last loss [0-9.]+$" "$TMP/out" \
    || fail "ckpt summary: $(grep resume: "$TMP/out")"
grep -qx "meta crescent.epochs = $N" "$TMP/out" || fail "ckpt: epochs"

# 4. a damaged metadata block (the first block, at byte 16) is refused
cp "$TMP/c.ckpt" "$TMP/m.ckpt"
printf '\x55' | dd of="$TMP/m.ckpt" bs=1 seek=35 conv=notrunc 2>/dev/null
timeout 60 "$CRESCENT_BIN" run "$JOBS/resume.lua" -- second "$TMP/d" "$TMP/m.ckpt" $N $M >/dev/null 2>"$TMP/err" \
    && fail "damaged metadata accepted"
cat "$TMP/err"
grep -q "m.ckpt: checksum mismatch in metadata" "$TMP/err" || fail "message for damaged metadata"
"$CRESCENT_BIN" ckpt "$TMP/m.ckpt" >/dev/null 2>"$TMP/err" && fail "crescent ckpt accepted damaged metadata"
grep -q "m.ckpt: checksum mismatch in metadata" "$TMP/err" || fail "crescent ckpt message"
no_orphans || exit 1
echo "resume ok"
