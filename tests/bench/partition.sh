#!/usr/bin/env bash
# Partitioning benchmark (docs/partitioning.md shows the output).
#  1. k = 16, every method, 3 seeds, on: a synthetic rcv1-sized graph (20,000
#     examples x 47,000 features, ~1M edges, zipf feature popularity and 50
#     latent topics), the gcide dictionary entries x words (dict-gcide), and
#     the WordNet synset graph (wordnet-base; a general graph).
#  2. Bars, measured side by side in the same run: on the two bipartite sets
#     Parsa's T_max improvement over random >= METIS's, and Parsa's median
#     CPU time <= 0.5 x METIS's (CPU time, because the bench machine may be
#     shared; wall time is printed beside it).
#  3. k = 2..64 on the synthetic graph (parsa, tsh1, tsh2, metis).
#  4. Paper 000's synthetic sparsity sweep: 10,000 x 10,000 0/1 matrices with
#     sparsity v = 0.991, 0.995, 0.999, k = 2..64, TSH-1 vs TSH-2.
#  5. Parsa time against |E| (k = 16, b = 1) for three sizes: time per edge
#     should stay flat (O(k|E|)).
# Data goes to a temp dir, removed at the end. Exit 1 if a bar fails.
set -u
BIN=${CRESCENT_BIN:-./crescent}
GEN=${CRESCENT_BUILD:-build}/bench/partition_gen
CORPUS=${CRESCENT_BUILD:-build}/bench/partition_corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

field() { # field NAME < json line
    sed -n "s/.*\"$1\":\([-0-9.e]*\).*/\1/p"
}
file_of() { # file_of SET -> its graph file
    case $1 in wordnet) echo "$tmp/wordnet.edges" ;; *) echo "$tmp/$1.libsvm" ;; esac
}
row() { # row FILE METHOD -> the json line of METHOD
    grep "\"method\":\"$2\"" "$1" | head -1
}

echo "# data"
"$GEN" zipf 20000 47000 1250000 1 50 >"$tmp/synthetic.libsvm"
sets="synthetic"
# gcide-docs and the WordNet synset graph: built by `crescent data` when it
# has the corpus builders, else by build/bench/partition_corpus (same idea)
if "$BIN" data gcide-docs --out "$tmp/gcide.libsvm" >"$tmp/log" 2>&1; then
    sets="$sets gcide"; echo "gcide: crescent data gcide-docs"
elif [ -f /usr/share/dictd/gcide.index ] && [ -f /usr/share/dictd/gcide.dict.dz ]; then
    zcat /usr/share/dictd/gcide.dict.dz >"$tmp/gcide.dict"
    "$CORPUS" gcide /usr/share/dictd/gcide.index "$tmp/gcide.dict" >"$tmp/gcide.libsvm"
    rm -f "$tmp/gcide.dict"
    sets="$sets gcide"; echo "gcide: partition_corpus gcide"
else echo "gcide: skipped (dict-gcide not installed; make data installs it)"; fi
if "$BIN" data wordnet-graph --out "$tmp/wordnet.edges" >"$tmp/log" 2>&1; then
    sets="$sets wordnet"; echo "wordnet: crescent data wordnet-graph"
elif [ -f /usr/share/wordnet/data.noun ]; then
    "$CORPUS" wordnet /usr/share/wordnet >"$tmp/wordnet.edges"
    sets="$sets wordnet"; echo "wordnet: partition_corpus wordnet"
else echo "wordnet: skipped (wordnet-base not installed; make data installs it)"; fi
rm -f "$tmp"/*.vocab "$tmp"/*.nodes
echo
echo "# 1. k = 16, every method, 3 seeds (improvement over random: (random - method) / method)"
for s in $sets; do
    f=$(file_of $s)
    "$BIN" partition "$f" -k 16 --method all --seeds 3 | sed "s|$tmp/||"
    "$BIN" partition "$f" -k 16 --method parsa,metis --seeds 3 --json >"$tmp/$s.json"
    echo
done

echo "# 1b. parsa parameter side: one Algorithm 2 sweep vs improving sweeps until converged (3 seeds)"
for s in synthetic gcide; do
    f=$(file_of $s)
    [ -f "$f" ] || continue
    for sw in 0 -1; do
        r=$("$BIN" partition "$f" -k 16 --method parsa --seeds 3 --v-sweeps $sw --json)
        printf "%-10s v_sweeps %-3s T_max %9.0f  T_sum %10.0f  T_max+ %5.0f%%  %.3f s\n" $s $sw \
            "$(echo "$r" | field t_max)" "$(echo "$r" | field t_sum)" \
            "$(echo "$r" | field t_max_impr | awk '{print 100 * $1}')" "$(echo "$r" | field seconds)"
    done
done
echo

echo "# 2. bars (bipartite sets; parsa and metis side by side in one run)"
for s in synthetic gcide; do
    [ -f "$tmp/$s.json" ] || continue
    p=$(row "$tmp/$s.json" parsa); m=$(row "$tmp/$s.json" metis)
    if [ -z "$m" ] || ! echo "$m" | grep -q '"available":true'; then echo "$s: metis unavailable, bars not checked"; continue; fi
    pi=$(echo "$p" | field t_max_impr); mi=$(echo "$m" | field t_max_impr)
    ps=$(echo "$p" | field seconds); ms=$(echo "$m" | field seconds)
    pc=$(echo "$p" | field cpu_seconds); mc=$(echo "$m" | field cpu_seconds)
    awk -v s="$s" -v pi="$pi" -v mi="$mi" -v ps="$ps" -v ms="$ms" -v pc="$pc" -v mc="$mc" 'BEGIN {
        a = (pi >= mi); b = (pc <= 0.5 * mc)
        printf "%s: T_max improvement parsa %.0f%% vs metis %.0f%%: %s\n", s, 100 * pi, 100 * mi, a ? "PASS" : "FAIL"
        printf "%s: CPU time parsa %.3f s vs metis %.3f s, ratio %.2f (bar <= 0.50): %s   (wall %.3f vs %.3f s, ratio %.2f)\n", \
            s, pc, mc, pc / mc, b ? "PASS" : "FAIL", ps, ms, ps / ms
        exit !(a && b) }' || status=1
done

echo
echo "# 3. synthetic graph, k = 2..64: T_max improvement over random, median seconds (3 seeds; tsh2: 1 run,"
echo "#    it does not depend on the seed)"
printf "%-4s" "k"; for m in parsa tsh1 tsh2 metis; do printf " %16s" "$m"; done; echo
for k in 2 4 8 16 32 64; do
    "$BIN" partition "$tmp/synthetic.libsvm" -k $k --method parsa,tsh1,metis --seeds 3 --json >"$tmp/k.json"
    "$BIN" partition "$tmp/synthetic.libsvm" -k $k --method tsh2 --seeds 1 --json >>"$tmp/k.json"
    printf "%-4s" $k
    for m in parsa tsh1 tsh2 metis; do
        r=$(row "$tmp/k.json" $m)
        if echo "$r" | grep -q '"available":true'; then
            printf " %7.0f%% %6.3fs" "$(echo "$r" | field t_max_impr | awk '{print 100 * $1}')" "$(echo "$r" | field seconds)"
        else printf " %16s" "n/a"; fi
    done
    echo
done

echo
echo "# 4. sparsity sweep (paper 000, 10,000 x 10,000, v = fraction of zeros): T_max improvement over random"
echo "#    tsh2/tsh1 = T_max(tsh1) / T_max(tsh2) (> 1: TSH-2 ahead)"
printf "%-6s %-4s %10s %10s %10s\n" v k tsh1 tsh2 tsh2/tsh1
for v in 0.991 0.995 0.999; do
    "$GEN" uniform 10000 10000 $v 7 >"$tmp/u.libsvm"
    for k in 2 4 8 16 32 64; do
        "$BIN" partition "$tmp/u.libsvm" -k $k --method tsh1,tsh2 --seeds 1 --json >"$tmp/u.json"
        a=$(row "$tmp/u.json" tsh1); b=$(row "$tmp/u.json" tsh2)
        printf "%-6s %-4s %9.1f%% %9.1f%% %10.3f\n" $v $k "$(echo "$a" | field t_max_impr | awk '{print 100 * $1}')" \
            "$(echo "$b" | field t_max_impr | awk '{print 100 * $1}')" \
            "$(awk -v x="$(echo "$a" | field t_max)" -v y="$(echo "$b" | field t_max)" 'BEGIN { print x / y }')"
    done
done

echo
echo "# 5. parsa CPU time against |E| (k = 16, b = 1, median of 5 seeds)"
printf "%-10s %10s %12s %14s\n" examples edges seconds "ns/(k*edge)"
for n in 5000 10000 20000; do
    "$GEN" zipf $n 47000 $((n * 62)) 3 50 >"$tmp/s.libsvm"
    e=$("$BIN" partition "$tmp/s.libsvm" -k 16 --method random --seeds 1 | sed -n 's/.*|E| = \([0-9]*\).*/\1/p')
    r=$("$BIN" partition "$tmp/s.libsvm" -k 16 --method parsa --seeds 5 --json)
    t=$(echo "$r" | field cpu_seconds)
    awk -v n=$n -v e="$e" -v t="$t" 'BEGIN { printf "%-10d %10d %12.4f %14.2f\n", n, e, t, 1e9 * t / (16 * e) }'
done
echo
echo "# 5b. same, |U| = 20,000 fixed and the mean example length varied (the per-block working set"
echo "#     k x |U| x 12 bytes stays the same, so this isolates the growth in |E|)"
printf "%-10s %10s %12s %14s\n" length edges seconds "ns/(k*edge)"
for len in 13 26 52; do
    "$GEN" zipf 20000 47000 $((20000 * len * 6 / 5)) 3 50 >"$tmp/s.libsvm"
    e=$("$BIN" partition "$tmp/s.libsvm" -k 16 --method random --seeds 1 | sed -n 's/.*|E| = \([0-9]*\).*/\1/p')
    t=$("$BIN" partition "$tmp/s.libsvm" -k 16 --method parsa --seeds 5 --json | field cpu_seconds)
    awk -v n=$len -v e="$e" -v t="$t" 'BEGIN { printf "%-10d %10d %12.4f %14.2f\n", n, e, t, 1e9 * t / (16 * e) }'
done
exit $status
