#!/usr/bin/env bash
# Parameter-server pull+push round trip (10k keys x dim 64, two nodes) vs bare
# ZeroMQ with the same bytes. Three processes, each a median of 61 alternating
# samples; the last line is the median ratio of the three.
set -u
ratios=()
for run in 1 2 3; do
    out=$("$CRESCENT_BUILD/bench/pushpull" 2>&1) || { echo "$out"; exit 1; }
    echo "$out" | grep -v "waiting for"
    ratios+=("$(echo "$out" | sed -n 's/.*ratio bare\/crescent \([0-9.]*\)x.*/\1/p')")
done
med=$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n 2p)
echo "pushpull: ratio bare/crescent (median of 3 runs) ${med}x (bar >= 0.70)"
