#!/usr/bin/env bash
# Reader throughput, side by side with a baseline in the same run: each
# crescent reader against awk doing the minimum on the same file (split each
# line into fields and sum one numeric column), and the MatrixMarket binary
# cache against parsing. Medians of 3 runs; ratio < 1 means crescent is faster.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B=$CRESCENT_BIN
R=$CRESCENT_BUILD/bench/data_readers
"$B" data zipf-mf --rows 100000 --cols 10000 --cells 1000000 --rank 8 --test-fraction 0 --seed 1 --out "$tmp/mf" >/dev/null
"$B" data bipartite --rows 200000 --cols 100000 --density 0.0001 --seed 1 --out "$tmp/b.svm" >/dev/null
"$B" data zipf-text --tokens 2000000 --vocab 50000 --seed 1 --out "$tmp/t.txt" >/dev/null
awk 'NR > 2 { print $1 - 1, $2 - 1 }' "$tmp/mf/train.mmc" >"$tmp/g.edges"

median() { sort -g | sed -n 2p; }
t_reader() { for i in 1 2 3; do "$R" "$1" "$2" | cut -d' ' -f1; done | median; }
t_awk() { # seconds for awk to split every line and sum field $1
    for i in 1 2 3; do
        s=$(date +%s.%N); awk '{ s += $1 } END { print s }' "$1" >/dev/null; e=$(date +%s.%N)
        echo "$e - $s" | bc -l
    done | median
}
row() { # name kind file items unit
    local a b; a=$(t_reader "$2" "$3"); b=$(t_awk "$3")
    printf "%-22s %8s %-6s crescent %6.3f s  awk %6.3f s  ratio %5.2f  (%5.1f M %s/s)\n" \
        "$1" "$4" "$5" "$a" "$b" "$(echo "$a / $b" | bc -l)" "$(echo "$4 / $a / 1000000" | bc -l)" "$5"
}
row "matrix market (parse)" mm "$tmp/mf/train.mmc" 1000000 lines
row "libsvm (10 feat/row)" libsvm "$tmp/b.svm" 200000 lines
row "text" text "$tmp/t.txt" 2000000 tokens
row "edge list" edges "$tmp/g.edges" 1000000 lines
a=$(t_reader mmcache "$tmp/mf/train.mmc"); b=$(t_reader mm "$tmp/mf/train.mmc")
printf "%-22s cache %7.3f s  parse %7.3f s  ratio %5.3f\n" "matrix market cache" "$a" "$b" "$(echo "$a / $b" | bc -l)"
