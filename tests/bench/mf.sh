#!/usr/bin/env bash
# Matrix factorization training throughput, side by side in one run
# (medians of RUNS runs each, interleaved):
#   A  plain C SGD loop (build/bench/sgd_baseline)        -- the baseline
#   B  examples/mf.lua --nodes 1 --workers 1              -- target B/A >= 0.7
#   C  examples/mf.lua --nodes 1 --workers 2              -- target C/B >= 1.6
#   D  examples/mf.lua --nodes 2 --workers 1              -- reported against C
#   T  the kernel alone on 1 and on 2 threads (build/bench/mf_threads): how much
#      two threads can gain on this machine right now (a busy host shows < 2x)
# Same data (data/mf, made if missing), epochs, dim, lr, lambda, init; all
# sides count cells processed / training seconds (loading and test RMSE
# excluded). B/A is also given by CPU time (--nodes 1 runs the node and its
# workers as threads of the scheduler process). Exit 1 if a run fails or a
# target is missed.
set -u
. "$(dirname "$0")/lib.sh" # median, ratio, check
cd "${CRESCENT_ROOT:-$(dirname "$0")/../..}"
BIN=${CRESCENT_BIN:-$PWD/crescent}
BUILD=${CRESCENT_BUILD:-$PWD/build}
RUNS=${RUNS:-5}
EPOCHS=${EPOCHS:-10}
DATA=${MF_DATA:-data/mf}
COMMON="--epochs $EPOCHS --dim 16 --lr 0.02 --lambda 0.02 --init 0.1"

if [ ! -f "$DATA/train.mmc" ] || [ ! -f "$DATA/test.mmc" ]; then
    "$BIN" data zipf-mf --rows 20000 --cols 2000 --cells 1000000 --rank 16 --noise 0.1 \
        --test-fraction 0.1 --seed 1 --out "$DATA" || { echo "mf bench: cannot make $DATA"; exit 1; }
fi

fail=0
# Each run prints "WALL CPU": cells per wall second, cells per CPU second.
run_base() {
    "$BUILD/bench/sgd_baseline" --train "$DATA/train.mmc" $COMMON --quiet |
        sed -n 's/^cells_per_s=\([0-9.]*\) .*cells=\([0-9]*\) .*train_cpu_seconds=\([0-9.]*\)$/\1 \2 \3/p' |
        awk '{printf "%s %.0f\n", $1, ($3 > 0 ? $2 / $3 : 0)}'
}
run_threads() { # the two rates, "t1 t2"
    "$BUILD/bench/mf_threads" "$DATA/train.mmc" "$EPOCHS" | sed -n 's/^threads1=\([0-9.]*\) threads2=\([0-9.]*\)$/\1 \2/p'
}
run_mf() { # nodes workers
    "$BIN" run examples/mf.lua --nodes "$1" --workers "$2" -- --data "$DATA" $COMMON --eval 0 --quiet 1 \
        2>/dev/null |
        sed -n 's/^mf result: .*train_cells_per_s=\([0-9.]*\) .*cells=\([0-9]*\) train_cpu_seconds=\([0-9.]*\)$/\1 \2 \3/p' |
        awk '{printf "%s %.0f\n", $1, ($3 > 0 ? $2 / $3 : 0)}'
}

declare -A vals cpu
for r in $(seq "$RUNS"); do
    t=$(run_threads)
    [ -n "$t" ] || { echo "run $r: mf_threads failed"; fail=1; t="0 0"; }
    vals[T1]="${vals[T1]:-} ${t% *}"
    vals[T2]="${vals[T2]:-} ${t#* }"
    for side in A B C D; do
        case $side in
        A) v=$(run_base) ;;
        B) v=$(run_mf 1 1) ;;
        C) v=$(run_mf 1 2) ;;
        D) v=$(run_mf 2 1) ;;
        esac
        if [ -z "$v" ]; then echo "run $r side $side failed"; fail=1; v="0 0"; fi
        vals[$side]="${vals[$side]:-} ${v% *}"
        cpu[$side]="${cpu[$side]:-} ${v#* }"
    done
done
declare -A med
for side in A B C D T1 T2; do med[$side]=$(printf '%s\n' ${vals[$side]} | median); done
cpuA=$(printf '%s\n' ${cpu[A]} | median) cpuB=$(printf '%s\n' ${cpu[B]} | median)

fmt() { awk -v x="$1" 'BEGIN {printf "%.2fM cells/s", x / 1e6}'; }
echo "mf training throughput, 20000x2000, 900k train cells, dim 16, $EPOCHS epochs, median of $RUNS:"
echo "  A plain C SGD loop        $(fmt "${med[A]}")"
echo "  B --nodes 1 --workers 1   $(fmt "${med[B]}")"
echo "  C --nodes 1 --workers 2   $(fmt "${med[C]}")"
echo "  D --nodes 2 --workers 1   $(fmt "${med[D]}")"
check "B/A (1 worker vs plain C)" "$(ratio "${med[B]}" "${med[A]}")" 0.7
echo "    same by CPU time (cells per CPU second of all threads, less sensitive to a busy host): $(ratio "$cpuB" "$cpuA")x"
check "C/B (2 workers vs 1)" "$(ratio "${med[C]}" "${med[B]}")" 1.6
echo "  D/C (2 nodes x 1 vs 1 node x 2): $(ratio "${med[D]}" "${med[C]}")x (reported, no target)"
echo "  machine reference: kernel alone, 2 threads vs 1: $(ratio "${med[T2]}" "${med[T1]}")x" \
     "($(fmt "${med[T1]}") -> $(fmt "${med[T2]}"); load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "  C/B relative to that reference: $(ratio "$(ratio "${med[C]}" "${med[B]}")" "$(ratio "${med[T2]}" "${med[T1]}")")" \
     "(1.0 = the 2-worker job scales as well as the bare kernel does on this host now)"
exit $fail
