#!/usr/bin/env bash
# Memory per stored row of a sparse table and its pull speed against a
# dense table's (tests/bench/sparse_mem.c); docs/placement.md quotes it.
set -u
"$CRESCENT_BUILD/bench/sparse_mem" || exit 1
