#!/usr/bin/env bash
# What an i32 table's push costs against an f32 table's (tests/bench/table_dtype.c):
# the rule add on i32 and f32 (and sgd on f32) through cr_shard_push, 21
# alternating samples per process, 3 processes; the last line has the
# medians of the processes' ratios.
set -u
r1=() r2=()
for run in 1 2 3; do
    out=$("$CRESCENT_BUILD/bench/table_dtype" 2>&1) || { echo "$out"; exit 1; }
    echo "$out"
    r1+=("$(echo "$out" | sed -n 's/^batch 256: i32 add \/ f32 add \([0-9.]*\)x/\1/p')")
    r2+=("$(echo "$out" | sed -n 's/^batch 8192: i32 add \/ f32 add \([0-9.]*\)x/\1/p')")
done
m1=$(printf '%s\n' "${r1[@]}" | sort -n | sed -n 2p)
m2=$(printf '%s\n' "${r2[@]}" | sort -n | sed -n 2p)
echo "table_dtype: an i32 add push takes ${m1}x (batches of 256) and ${m2}x (8192) an f32 add push's time per row (medians of 3 runs)"
