#!/usr/bin/env bash
# Evaluator speed: batched BLAS path vs the per-item loop, side by side in
# one process, medians of RUNS (default 3) alternating runs each.
#  1. filtered MRR/Hits, 5,000 test triples x 40,000 entities, dim 100
#     (MODEL=distmult by default; the naive path is cr_linkpred's reference loop)
#  2. word analogy, all 19,544 questions, dim 100, 30,000-word vocabulary
# The naive loops take about a minute per run on one core.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUNS=${RUNS:-3}
export OPENBLAS_NUM_THREADS=1
Q=${CRESCENT_QUESTIONS:-$PWD/../shared/data/analogy/questions-words.txt}
"$BUILD/bench/eval_bench" lp "$RUNS"
if [ -f "$Q" ]; then
    "$BUILD/bench/eval_bench" analogy "$Q" "$RUNS"
else
    echo "analogy: skipped, no questions file at $Q"
fi
