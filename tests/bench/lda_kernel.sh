#!/usr/bin/env bash
# LDA samplers in one thread (tests/bench/lda_kernel.c) on data/gcide.svm
# (make data): tokens per second of the plain O(K) sampler and the MH
# sampler at K = 100 and K = 1000, one chunk per sweep, deltas applied
# between sweeps; CPU time inside the kernel, median over sweeps 2.. of a
# run, then the median of 3 runs (interleaved, as the machine's load varies).
# Targets (MH is worth its alias tables only if its cost per token stays flat
# as K grows, where plain's grows with K): MH at K = 1000 >= 5x plain's tokens/s; MH's cost per
# token grows <= 1.5x from K = 100 to K = 1000.
# Exit 1 if a target is missed. LDA_SVM, LDA_V override the corpus; LDA_RUNS
# the number of runs.
set -u
. "$(dirname "$0")/lib.sh"
data=${LDA_SVM:-data/gcide.svm}
V=${LDA_V:-$(wc -l < "$data.vocab" 2>/dev/null)}
[ -f "$data" ] && [ -n "$V" ] || { echo "lda_kernel: $data (and $data.vocab) missing: run make data"; exit 1; }
runs=${LDA_RUNS:-3}
declare -A tps
for run in $(seq "$runs"); do
    for cfg in "plain 100 3" "mh 100 8" "plain 1000 3" "mh 1000 8"; do
        set -- $cfg
        out=$(nice "$CRESCENT_BUILD/bench/lda_kernel" "$data" "$V" "$2" "$1" "$3" 1 1000000000) || { echo "$out"; exit 1; }
        line=$(echo "$out" | tail -1)
        echo "run $run: $line"
        tps[$1_$2]+="$(echo "$line" | sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p') "
    done
done
fail=0
for key in plain_100 mh_100 plain_1000 mh_1000; do
    m=$(printf '%s\n' ${tps[$key]} | median)
    eval "med_$key=$m"
    echo "$key: median $m tokens/s ($(awk -v t="$m" 'BEGIN {printf "%.1f", 1e9 / t}') ns per token)"
done
check "mh vs plain at K=1000 (tokens/s)" "$(ratio "$med_mh_1000" "$med_plain_1000")" 5
check "mh vs plain at K=100 (tokens/s)" "$(ratio "$med_mh_100" "$med_plain_100")" 1
growth=$(ratio "$med_mh_100" "$med_mh_1000")
if awk -v g="$growth" 'BEGIN {exit !(g <= 1.5)}'; then
    echo "  mh cost per token K=1000 / K=100: ${growth}x (target <= 1.5x) ok"
else
    echo "  mh cost per token K=1000 / K=100: ${growth}x (target <= 1.5x) ABOVE TARGET"
    fail=1
fi
exit $fail
