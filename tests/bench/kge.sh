#!/usr/bin/env bash
# Knowledge-graph embedding training throughput, side by side in one run
# (medians of RUNS runs each, interleaved):
#   A  plain single-thread C loop (build/bench/kge_plain)  -- the baseline
#   B  examples/kge.lua --nodes 1 --workers 1               -- target B/A >= 0.8
#   C  examples/kge.lua --nodes 1 --workers 2               -- target C/B >= 1.6
#   T  two plain C loops at once (summed) against A: how much two threads can
#      gain on this machine right now (a host busy with other work shows < 2x,
#      and then C/B cannot reach 1.6 either)
# Same data (data/wordnet-rr, `make data`), model, dim, neg, lr, lambda,
# init, batch, EPOCHS epochs; all sides count positive training triples per
# second of training (loading and evaluation excluded; each positive comes
# with 2 neg negatives). B/A is also given by CPU time (--nodes 1 runs the
# node and its workers as threads of one process). The machine's load
# average is printed before and after: a busy host lowers C/B. Exit 1 if a
# run fails or a target is missed.
set -u
. "$(dirname "$0")/lib.sh" # median, ratio, check
cd "${CRESCENT_ROOT:-$(dirname "$0")/../..}"
BIN=${CRESCENT_BIN:-$PWD/crescent}
BUILD=${CRESCENT_BUILD:-$PWD/build}
RUNS=${RUNS:-3}
EPOCHS=${EPOCHS:-2}
DATA=${KGE_DATA:-data/wordnet-rr}
MODEL=${MODEL:-complex}
DIM=100 NEG=10 LR=0.2 LAMBDA=1e-6 INIT=0.1 BATCH=500
export OPENBLAS_NUM_THREADS=1

if [ ! -f "$DATA/train.del" ] || [ ! -f "$DATA/entities.tsv" ]; then
    echo "kge bench: $DATA is missing (make data builds it)"; exit 1
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
fail=0
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
# Each run prints "WALL CPU": positives per wall second, per CPU second.
run_plain() {
    "$BUILD/bench/kge_plain" --data "$DATA" --model "$MODEL" --dim $DIM --neg $NEG --lr $LR --lambda $LAMBDA \
        --init $INIT --batch $BATCH --epochs "$EPOCHS" |
        sed -n 's/^triples_per_s=\([0-9.]*\) .*positives=\([0-9]*\) train_cpu_seconds=\([0-9.]*\) .*/\1 \2 \3/p' |
        awk '{printf "%s %.0f\n", $1, ($3 > 0 ? $2 / $3 : 0)}'
}
run_kge() { # workers
    "$BIN" run examples/kge.lua --nodes 1 --workers "$1" -- data="$DATA" model=$MODEL dim=$DIM neg=$NEG lr=$LR \
        lambda=$LAMBDA init=$INIT batch=$BATCH epochs="$EPOCHS" eval=0 test=0 quiet=1 2>/dev/null |
        sed -n 's/^kge result: .*triples_per_s=\([0-9.]*\) .*positives=\([0-9]*\) train_cpu_seconds=\([0-9.]*\)$/\1 \2 \3/p' |
        awk '{printf "%s %.0f\n", $1, ($3 > 0 ? $2 / $3 : 0)}'
}
run_pair() { # two plain loops at once: the sum of their rates
    run_plain >"$tmpd/p1" &
    run_plain >"$tmpd/p2" &
    wait
    cat "$tmpd/p1" "$tmpd/p2" | awk '{s += $1; c += $2; n++} END {if (n == 2) printf "%.0f %.0f\n", s, c / 2}'
}

declare -A vals cpu
for r in $(seq "$RUNS"); do
    for side in A B C T; do
        case $side in
        T) v=$(run_pair) ;;
        A) v=$(run_plain) ;;
        B) v=$(run_kge 1) ;;
        C) v=$(run_kge 2) ;;
        esac
        if [ -z "$v" ]; then echo "run $r side $side failed"; fail=1; v="0 0"; fi
        echo "  run $r $side: ${v% *} triples/s (${v#* } per CPU second)"
        vals[$side]="${vals[$side]:-} ${v% *}"
        cpu[$side]="${cpu[$side]:-} ${v#* }"
    done
done
declare -A med
for side in A B C T; do med[$side]=$(printf '%s\n' ${vals[$side]} | median); done
cpuA=$(printf '%s\n' ${cpu[A]} | median) cpuB=$(printf '%s\n' ${cpu[B]} | median)

fmt() { awk -v x="$1" 'BEGIN {printf "%.1fk triples/s", x / 1e3}'; }
echo "kge training throughput, $DATA, $MODEL d=$DIM neg=$NEG batch=$BATCH, $EPOCHS epochs, median of $RUNS:"
echo "  A plain C loop            $(fmt "${med[A]}")"
echo "  B --nodes 1 --workers 1   $(fmt "${med[B]}")"
echo "  C --nodes 1 --workers 2   $(fmt "${med[C]}")"
echo "  T two plain loops at once $(fmt "${med[T]}") (sum): this machine gives 2 threads $(ratio "${med[T]}" "${med[A]}")x now"
check "B/A (1 worker vs plain C)" "$(ratio "${med[B]}" "${med[A]}")" 0.8
echo "  B/A by CPU time: $(ratio "$cpuB" "$cpuA")x"
check "C/B (2 workers vs 1)" "$(ratio "${med[C]}" "${med[B]}")" 1.6
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $fail
