#!/usr/bin/env bash
# MBP and DPPA against random on a 1M-edge planted-partition graph at k = 16
# (medians of 3 seeds; improvement = (C_random - C) / C as in the spec).
set -eu
B=${CRESCENT_BUILD:-build}/bench/mbp_dppa
"$B" 100000 50000 16 10 0.8 3
# DPPA after feature hashing: how the graph densifies as m' shrinks and how
# much DPPA still gains over random on the hashed graph.
"$B" hash 20000 50000 16 10 0.8 50000 10000 2000 500 100
