#!/usr/bin/env bash
# What TSH-2's pair cap (cr_part_opts.pair_cap, default 64 candidates per
# step; 0 = exact pair search) changes: T_max and time, side by side in one
# run, on paper 000's sparsity sweep (10,000 x 10,000 uniform 0/1 matrices)
# and on the synthetic rcv1-sized graph of the partition bench. The exact
# search is run where it finishes in seconds (v = 0.999 and the synthetic
# graph); on the denser matrices it takes minutes, so cap 256 stands in
# (k = 4, 16, 64 there). About 2 minutes in all.
set -eu
B=${CRESCENT_BUILD:-build}/bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# sparsity sweep, tsh2 with cap 64 against exact / cap 256 (T_max/first < 1: the bigger search is ahead)"
for v in 0.999 0.995 0.991; do
    "$B/partition_gen" uniform 10000 10000 $v 7 >"$tmp/u.libsvm"
    other=0 ks="2 4 8 16 32 64"
    [ $v = 0.999 ] || other=256 ks="4 16 64"
    echo "v = $v"
    for k in $ks; do "$B/tsh_cap" "$tmp/u.libsvm" $k 64 $other; done
done
echo "# synthetic graph (partition_gen zipf 20000 47000 1250000 1 50), k = 16"
"$B/partition_gen" zipf 20000 47000 1250000 1 50 >"$tmp/s.libsvm"
"$B/tsh_cap" "$tmp/s.libsvm" 16 64 0
