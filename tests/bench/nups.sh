#!/usr/bin/env bash
# Parameter management (docs/management.md "Measured"): does a second
# node speed a job up? For MF (examples/mf.lua, data/mf), KGE (ComplEx on
# data/wordnet-rr) and word2vec (skip-gram on data/gcide-brown.txt), side by
# side in one run, interleaved:
#   1x2        --nodes 1 --workers 2 (the shared-memory ideal)
#   classic    --nodes 2 --workers 1, manage=classic (every key at its home)
#   relocate   --nodes 2 --workers 1, manage=relocate (the models localize)
#   replicate  --nodes 2 --workers 1, manage=replicate (every key replicated)
#   hot        --nodes 2 --workers 1, manage=hot (the NuPS heuristic: keys
#              over 100x the mean expected accesses replicated, rest relocated)
#   auto       --nodes 2 --workers 1, manage=auto (chosen per key from the
#              observed accesses, configs/management/auto.lua)
#   auto-L4    auto with --sampling local (NuPS's non-conform sampling:
#              negatives from the node's own keys), reported, not a target
#   (replicate, every key replicated, runs when named in CONFIGS)
# Per configuration: the median training seconds per epoch, its ratio to 1x2
# and classic's ratio to it, the remote bytes per epoch (data plane +
# relocation protocol + replica syncs, all nodes: the examples' "manage
# result" line, from job:stats), and quality (test RMSE, test MRR, synonym
# accuracy). Targets on auto, since a second node is worth having only if it
# pays for itself at the quality of one: at most 1.2x the time of 1x2 at the
# same quality (RMSE within 3%, MRR within 0.02, synonyms within 2 points);
# at least as fast as relocate and hot; classic at least 3x slower on KGE
# and word2vec (reported as unreachable when classic itself is less than
# 2.5x of 1x2). Exit 1 when a run fails or a reachable target is missed.
# Env: RUNS (3), KGE_RUNS (1), MODELS ("mf kge w2v"), CONFIGS, MF_EPOCHS
# (20), KGE_EPOCHS (3: MRR after 1 epoch is ~0 for every configuration),
# W2V_WORDS (0 = the whole corpus, 4.9M words; else lines up to about that
# many words).
set -u
cd "${CRESCENT_ROOT:-$(dirname "$0")/../..}"
BIN=${CRESCENT_BIN:-$PWD/crescent}
RUNS=${RUNS:-3}
KGE_RUNS=${KGE_RUNS:-1}
MODELS=${MODELS:-mf kge w2v}
MF_EPOCHS=${MF_EPOCHS:-20}
KGE_EPOCHS=${KGE_EPOCHS:-3}
W2V_WORDS=${W2V_WORDS:-0}
CONFIGS=${CONFIGS:-1x2 classic relocate hot auto auto-L4}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0

if [ ! -f data/mf/train.mmc ]; then
    "$BIN" data zipf-mf --rows 20000 --cols 2000 --cells 1000000 --rank 16 --noise 0.1 \
        --test-fraction 0.1 --seed 1 --out data/mf || { echo "nups bench: cannot make data/mf"; exit 1; }
fi
for f in data/wordnet-rr data/gcide-brown.txt data/wordnet-synonyms.tsv; do
    [ -e "$f" ] || { echo "nups bench: $f missing (make data builds it)"; exit 1; }
done
# the word2vec slice: whole lines, about W2V_WORDS words
awk -v n="$W2V_WORDS" '{ w += NF; print; if (n > 0 && w >= n) exit }' data/gcide-brown.txt >"$TMP/w2v.txt"

# run MODEL CONFIG -> "SECONDS_PER_EPOCH QUALITY BYTES" (empty on failure)
run() {
    local model=$1 cfg=$2 shape out
    if [ "$cfg" = 1x2 ]; then shape="--nodes 1 --workers 2"; m=classic; else shape="--nodes 2 --workers 1"; m=$cfg; fi
    # auto-L4: auto with NuPS's non-conform sampling (level 4, `local`:
    # negatives drawn from the node's own keys; MF samples nothing)
    if [ "$cfg" = auto-L4 ]; then shape="--nodes 2 --workers 1 --sampling local"; m=auto; fi
    case $model in
    mf) out=$("$BIN" run examples/mf.lua $shape -- epochs="$MF_EPOCHS" eval=0 quiet=1 manage="$m" 2>&1) ;;
    kge) out=$("$BIN" run examples/kge.lua $shape -- epochs="$KGE_EPOCHS" eval=0 quiet=1 manage="$m" 2>&1) ;;
    w2v) out=$("$BIN" run examples/word2vec.lua $shape -- corpus="$TMP/w2v.txt" analogy=none quiet=1 \
               manage="$m" 2>&1) ;;
    esac
    echo "$out" >"$TMP/last.$model.$cfg"
    local secs q ep
    case $model in
    mf) secs=$(sed -n 's/^mf result: .*train_seconds=\([0-9.]*\) .*/\1/p' <<<"$out"); ep=$MF_EPOCHS
        q=$(sed -n 's/^mf result: test_rmse=\([0-9.]*\) .*/\1/p' <<<"$out") ;;
    kge) secs=$(sed -n 's/^kge result: .*train_seconds=\([0-9.]*\) .*/\1/p' <<<"$out"); ep=$KGE_EPOCHS
        q=$(sed -n 's/^kge result: .*test_mrr=\([0-9.]*\) .*/\1/p' <<<"$out") ;;
    w2v) secs=$(sed -n 's/^word2vec result: .*train_seconds=\([0-9.]*\) .*/\1/p' <<<"$out"); ep=1
        q=$(sed -n 's/^word2vec result: synonym_acc=\([0-9.]*\) .*/\1/p' <<<"$out") ;;
    esac
    local b
    b=$(sed -n 's/^manage result: .* bytes_remote=\([0-9]*\) .*reloc_bytes=\([0-9]*\) sync_bytes=\([0-9]*\) .*/\1 \2 \3/p' \
        <<<"$out" | awk '{print $1 + $2 + $3}')
    [ -n "$secs" ] && [ -n "$q" ] && [ -n "$b" ] || return 0
    awk -v s="$secs" -v e="$ep" -v q="$q" -v b="$b" 'BEGIN {printf "%.4f %s %s\n", s / e, q, b}'
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print 0}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "nan"}'; }

declare -A T Q B
for model in $MODELS; do
    n=$RUNS
    [ "$model" = kge ] && n=$KGE_RUNS
    for r in $(seq "$n"); do
        for cfg in $CONFIGS; do
            v=$(run "$model" "$cfg")
            if [ -z "$v" ]; then
                echo "$model $cfg run $r failed:"; tail -3 "$TMP/last.$model.$cfg"; fail=1; continue
            fi
            read -r s q b <<<"$v"
            T[$model.$cfg]="${T[$model.$cfg]:-} $s" Q[$model.$cfg]="${Q[$model.$cfg]:-} $q"
            B[$model.$cfg]="${B[$model.$cfg]:-} $b"
        done
    done
    case $model in
    mf) what="MF 20000x2000 (900k train cells), dim 16, $MF_EPOCHS epochs"; qn="test RMSE" ;;
    kge) what="KGE ComplEx on wordnet-rr, dim 100, neg 10, $KGE_EPOCHS epoch(s)"; qn="test MRR" ;;
    w2v) what="word2vec skip-gram, $(wc -w <"$TMP/w2v.txt") words of gcide-brown.txt, 1 epoch"; qn="synonym acc" ;;
    esac
    echo "$what, median of $n run(s) (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
    printf "  %-10s %12s %10s %12s %14s %12s\n" config "s/epoch" "vs 1x2" "classic/it" "MB remote/ep" "$qn"
    declare -A mt mq mb
    for cfg in $CONFIGS; do
        mt[$cfg]=$(printf '%s\n' ${T[$model.$cfg]:-} | median)
        mq[$cfg]=$(printf '%s\n' ${Q[$model.$cfg]:-} | median)
        mb[$cfg]=$(printf '%s\n' ${B[$model.$cfg]:-} | median)
    done
    for cfg in $CONFIGS; do
        printf "  %-10s %12s %10s %12s %14s %12s\n" "$cfg" "${mt[$cfg]:-}" "$(ratio "${mt[$cfg]:-}" "${mt[1x2]}")x" \
            "$(ratio "${mt[classic]:-}" "${mt[$cfg]:-}")x" "$(awk -v b="${mb[$cfg]:-}" 'BEGIN {printf "%.1f", b / 1e6}')" \
            "${mq[$cfg]:-}"
    done
    # quality band of 1x2 (RMSE within 3%, MRR within 0.02, synonyms within 2 points)
    inband() { awk -v m="$model" -v q="${mq[$1]:-}" -v r="${mq[1x2]}" 'BEGIN {
        if (q == "") print 0; else if (m == "mf") print (q <= r * 1.03); else print (q >= r - 0.02) }'; }
    for cfg in $CONFIGS; do
        [ "$(inband "$cfg")" = 1 ] || echo "  $cfg: quality ${mq[$cfg]:-} outside the band of 1x2 (${mq[1x2]})"
    done
    # targets on auto: within 1.2x of 1x2 at the 1x2 quality; at least as
    # fast as the best fixed choice (all relocate; the NuPS heuristic, hot)
    r=$(ratio "${mt[auto]}" "${mt[1x2]}")
    if [ "$(inband auto)" = 1 ] && awk -v r="$r" 'BEGIN {exit !(r <= 1.2)}'; then
        echo "  auto vs 1x2: ${r}x (target <= 1.2x, same quality) ok"
    else echo "  auto vs 1x2: ${r}x, quality ${mq[auto]} vs ${mq[1x2]} (target <= 1.2x, same quality) TARGET MISSED"; fail=1; fi
    if [ -n "${mt[auto-L4]:-}" ] && [ "$model" != mf ]; then
        r4=$(ratio "${mt[auto-L4]}" "${mt[1x2]}")
        echo "  auto-L4 (auto + --sampling local) vs 1x2: ${r4}x, quality ${mq[auto-L4]} (in the band: $(inband auto-L4)); informational"
    fi
    for cfg in relocate hot; do
        if [ -z "${mt[$cfg]:-}" ]; then echo "  auto vs $cfg: not run (not in CONFIGS)"; continue; fi
        a=$(ratio "${mt[$cfg]:-}" "${mt[auto]}")
        if awk -v r="$a" 'BEGIN {exit !(r >= 1.0)}'; then echo "  auto vs $cfg: ${a}x faster (target >= 1x) ok"
        else echo "  auto vs $cfg: ${a}x faster (target >= 1x) TARGET MISSED"; fail=1; fi
    done
    if [ "$model" != mf ]; then
        # 3x faster than classic: reachable only if classic is at least
        # 3 / 1.2 = 2.5x slower than the shared-memory ideal, since auto
        # cannot beat 1x2 (the same work, without any network)
        c=$(ratio "${mt[classic]:-}" "${mt[auto]}") c1=$(ratio "${mt[classic]:-}" "${mt[1x2]}")
        if awk -v r="$c" 'BEGIN {exit !(r >= 3)}'; then echo "  classic vs auto: ${c}x slower (target >= 3x) ok"
        elif awk -v r="$c1" 'BEGIN {exit !(r < 2.5)}'; then
            echo "  classic vs auto: ${c}x slower (target >= 3x) UNREACHABLE here: classic itself is only ${c1}x of 1x2"
        else echo "  classic vs auto: ${c}x slower (target >= 3x) TARGET MISSED"; fail=1; fi
    fi
    unset mt mq mb
done
exit $fail
