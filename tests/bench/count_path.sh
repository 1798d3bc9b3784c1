#!/usr/bin/env bash
# What counting accesses costs a worker's local pulls (tests/bench/count_path.c):
# counting off and on alternating, medians of 21 samples, in 3 processes;
# the last line has the medians of the processes' medians.
set -u
ex=() cm=()
for run in 1 2 3; do
    out=$("$CRESCENT_BUILD/bench/count_path" 2>&1) || { echo "$out"; exit 1; }
    echo "$out"
    line=$(echo "$out" | tail -1)
    ex+=("$(echo "$line" | sed -n 's/.*exact off [0-9.]* on [0-9.]* (\([0-9.]*\)x).*/\1/p')")
    cm+=("$(echo "$line" | sed -n 's/.*cm off [0-9.]* on [0-9.]* (\([0-9.]*\)x).*/\1/p')")
done
m1=$(printf '%s\n' "${ex[@]}" | sort -n | sed -n 2p)
m2=$(printf '%s\n' "${cm[@]}" | sort -n | sed -n 2p)
echo "count_path: a local pull with counting on takes ${m1}x (exact) and ${m2}x (count-min) its time with counting off (medians of 3 runs)"
