#!/usr/bin/env bash
# Hot-key access from node 0 of two (1,000 hot keys of dim 64 held by node 1,
# batches of 100, pull + push): in node 0's own shard (the shared-memory
# ideal), through node 0's replica (src/ps/cr_replica.h, sync thread
# running), and classic remote round trips. Three processes, each the median
# of 301 alternating batches; the last line has the medians of the three.
set -u
rl=() cr=()
for run in 1 2 3; do
    out=$("$CRESCENT_BUILD/bench/replica_access" 2>&1) || { echo "$out"; exit 1; }
    echo "$out"
    rl+=("$(echo "$out" | sed -n 's/.*ratio replicated\/local \([0-9.]*\)x.*/\1/p')")
    cr+=("$(echo "$out" | sed -n 's/.*classic\/replicated \([0-9.]*\)x.*/\1/p')")
done
m1=$(printf '%s\n' "${rl[@]}" | sort -n | sed -n 2p)
m2=$(printf '%s\n' "${cr[@]}" | sort -n | sed -n 2p)
echo "replica_access: replicated/local ${m1}x (bar <= 4), classic/replicated ${m2}x (bar >= 5) (medians of 3 runs)"
awk -v a="$m1" -v b="$m2" 'BEGIN { exit !(a <= 4 && b >= 5) }'
