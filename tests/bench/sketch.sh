#!/usr/bin/env bash
# Cost per key of counting accesses on the worker path (src/ps/cr_sketch.h)
# against the least a local pull does per key (copying a 64-float row), and
# against one sketch shared by 2 workers with atomic adds. Three processes,
# each the median of 31 alternating rounds; the last line has the medians.
set -u
cz=() rc=() sh=()
for run in 1 2 3; do
    out=$("$CRESCENT_BUILD/bench/sketch" 2>&1) || { echo "$out"; exit 1; }
    echo "$out"
    line=$(echo "$out" | tail -1)
    cz+=("$(echo "$line" | sed -n 's/.*cm-zipf \([0-9.]*\), .*/\1/p')")
    rc+=("$(echo "$line" | sed -n 's/.*cm-zipf\/row-copy \([0-9.]*\)x.*/\1/p')")
    sh+=("$(echo "$line" | sed -n 's/.*shared\/cm-zipf \([0-9.]*\)x.*/\1/p')")
done
m1=$(printf '%s\n' "${cz[@]}" | sort -n | sed -n 2p)
m2=$(printf '%s\n' "${rc[@]}" | sort -n | sed -n 2p)
m3=$(printf '%s\n' "${sh[@]}" | sort -n | sed -n 2p)
echo "sketch: ${m1} ns/key (bar <= 20), ${m2}x a local row copy, shared-atomic design ${m3}x per-worker (medians of 3 runs)"
awk -v a="$m1" 'BEGIN { exit !(a <= 20) }'
