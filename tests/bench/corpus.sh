#!/usr/bin/env bash
# Corpus builders on the real Debian files, side by side with a baseline in
# the same run (medians of 3; ratio < 1 means crescent is faster):
#   gcide-text  vs  zcat | tr (decompress and split into lower-cased words,
#                   no markup handling, no entry index)
#   wordnet     vs  awk printing every pointer of data.* as a triple (parsing
#                   only: no names, no dedup, no split, no output files)
# The requirement is an absolute one (each build under a minute); the ratio
# shows how far the builders are from the bare cost of reading the input.
set -eu
WN=/usr/share/wordnet GC=/usr/share/dictd/gcide.dict.dz
if [ ! -f "$WN/data.noun" ] || [ ! -f "$GC" ]; then
    echo "skipped: wordnet-base / dict-gcide not installed (make data installs them)"; exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT; trap 'exit 1' INT TERM
B=$CRESCENT_BIN
median() { sort -g | sed -n 2p; }
secs() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
t3() { for i in 1 2 3; do secs "$@"; done | median; }

gcide_base() { zcat "$GC" | tr -cs 'A-Za-z0-9\200-\377' '\n' | tr 'A-Z' 'a-z' >"$tmp/base.txt"; }
wordnet_base() {
    awk 'function hex(s) { return (index("0123456789abcdef", substr(s, 1, 1)) - 1) * 16 + index("0123456789abcdef", substr(s, 2, 1)) - 1 }
         /^ / { next }
         { w = hex($4); p = 5 + 2 * w; n = $p + 0
           for (i = 0; i < n; i++) { q = p + 1 + 4 * i; print $1, $q, $(q + 1) } }' \
        "$WN"/data.noun "$WN"/data.verb "$WN"/data.adj "$WN"/data.adv >"$tmp/base.tsv"
}
row() { printf "%-12s crescent %6.3f s  baseline %6.3f s  ratio %5.2f  (%s)\n" "$1" "$2" "$3" "$(echo "$2 / $3" | bc -l)" "$4"; }

a=$(t3 "$B" data gcide-text --out "$tmp/g.txt"); b=$(t3 gcide_base)
row gcide-text "$a" "$b" "$(wc -w <"$tmp/g.txt") tokens; baseline $(wc -l <"$tmp/base.txt") raw words"
a=$(t3 "$B" data wordnet --out "$tmp/wn"); b=$(t3 wordnet_base)
row wordnet "$a" "$b" "$(cat "$tmp"/wn/{train,valid,test}.del | wc -l) triples; baseline $(wc -l <"$tmp/base.tsv") pointers"
a=$(t3 "$B" data gcide-docs --min-count 5 --out "$tmp/g.svm"); b=$(t3 gcide_base)
row gcide-docs "$a" "$b" "two passes over the dictionary"
