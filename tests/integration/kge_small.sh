#!/usr/bin/env bash
# examples/kge.lua end to end on a tiny generated graph (tests/integration/
# jobs/kge_graph.sh: 300 entities in 30 clusters, 2 relations, plain
# train/valid/test.txt names): ComplEx trained on 1 node x 1 worker, 1 x 2,
# 2 nodes x 1, and 2 x 1 with the bounded sampling scheme must each reach a test filtered MRR of at least 0.2 and
# 5x that of the same model untrained (lr=0: the random init, about 0.02);
# the JSONL's last record holds test_mrr/hits and triples_per_s. The same
# graph in the LibKGE layout (entity_ids.del, relation_ids.del, *.del) trains
# to the same quality; a checkpoint resumes; DistMult, TransE and RESCAL run.
#
# dim=40, not 20: with 20 dimensions ComplEx on this graph (30 clusters)
# ends, for some orders of the updates, in a solution whose clusters are not
# separated (seed 30 against seed 29: nearest other cluster centre at 0.7 to
# 2.2 instead of 3.6 to 4.1): test MRR 0.09 to 0.16, training loss 870
# instead of 550 to 650. It is the optimization, not the parameter server:
# one node and one worker is deterministic, and seeds 11, 12, 30, 40, 79 and
# 96 end there (6 of 100 seeds, MRR 0.089 to 0.161; the others 0.259 to
# 0.380). Runs with several workers take a new order of updates every time:
# 2 x 1 bounded at seed 1 ended there in 2 of 178 runs (MRR 0.096, 0.101;
# the 0.091 of a CI run, hits@10 0.17, is the same), which this test used to
# hide by running a bad 2 x 1 run again. With dim=40: 300 seeds at 1 x 1,
# MRR 0.246 to 0.393 (median 0.318); at seed 1, 40 runs of 2 x 1 bounded
# 0.268 to 0.349 (median 0.313), 25 of 2 x 1 0.233 to 0.354 (0.322), 25 of
# 1 x 2 0.278 to 0.355 (0.331), on 2 cores shared with other jobs (load 6
# to 12). The six seeds above are run below.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
if "$BIN" run /dev/null 2>&1 | grep -q "not built yet"; then
    echo "crescent run is not built in this tree yet"; exit 77
fi
export OPENBLAS_NUM_THREADS=1
bash tests/integration/jobs/kge_graph.sh "$tmp/g" 1 || { echo "FAIL: fixture"; exit 1; }
# the LibKGE layout of the same graph: ids in order of first appearance in train
awk -F'\t' -v d="$tmp/k" 'BEGIN {system("mkdir -p " d)}
    FNR == 1 {split(FILENAME, p, "/"); set = p[length(p)]; sub(/\.txt$/, "", set)}
    {for (i = 1; i <= 3; i += 2) if (!($i in E)) {E[$i] = ne; printf "%d\t%s\n", ne++, $i > (d "/entity_ids.del")}
     if (!($2 in R)) {R[$2] = nr; printf "%d\t%s\n", nr++, $2 > (d "/relation_ids.del")}
     printf "%d\t%d\t%d\n", E[$1], R[$2], E[$3] > (d "/" set ".del")}' \
    "$tmp/g/train.txt" "$tmp/g/valid.txt" "$tmp/g/test.txt"
COMMON="dim=40 epochs=100 lr=0.5 neg=3 batch=50 eval=50"
mrr() { sed -n 's/^kge result: .*test_mrr=\([0-9.]*\) .*/\1/p' "$1"; }
run() { # name nodes workers data extra-options...
    local name=$1 nodes=$2 workers=$3 data=$4
    shift 4
    timeout 120 "$BIN" run examples/kge.lua --nodes "$nodes" --workers "$workers" ${RUNOPT:-} --metrics "$tmp/$name.jsonl" \
        -- data="$data" $COMMON quiet=1 "$@" >"$tmp/$name.out" 2>&1
    local rc=$?
    grep -v '^epoch [0-9]*[: ]' "$tmp/$name.out"
    [ $rc -eq 0 ] || { echo "FAIL: $name exited $rc"; exit 1; }
    [ -n "$(mrr "$tmp/$name.out")" ] || { echo "FAIL: $name printed no result line"; exit 1; }
}
run random 1 1 "$tmp/g" lr=0 epochs=1
base=$(mrr "$tmp/random.out")
for cfg in 1x1 1x2 2x1 2x1bounded del; do
    case $cfg in
    del) run del 1 1 "$tmp/k" ;;
    2x1bounded) RUNOPT="--sampling bounded" run "$cfg" 2 1 "$tmp/g" ;;
    *) run "$cfg" "${cfg%x*}" "${cfg#*x}" "$tmp/g" ;;
    esac
    m=$(mrr "$tmp/$cfg.out")
    awk -v m="$m" -v b="$base" 'BEGIN {exit !(m >= 0.2 && m >= 5 * b)}' ||
        { echo "FAIL: $cfg test MRR $m (need >= 0.2 and >= 5x the untrained $base)"; exit 1; }
    last=$(tail -n 1 "$tmp/$cfg.jsonl")
    for k in test_mrr test_hits1 test_hits3 test_hits10 triples_per_s; do
        echo "$last" | grep -q "\"$k\"" || { echo "FAIL: $cfg: last JSONL record lacks $k: $last"; exit 1; }
    done
    lines=$(grep -c '"loss"' "$tmp/$cfg.jsonl")
    [ "$lines" -eq 100 ] || { echo "FAIL: $cfg wrote $lines epoch records, want 100"; exit 1; }
    echo "$cfg: test MRR $m"
done
grep -q '"valid_mrr"' "$tmp/1x1.jsonl" || { echo "FAIL: no valid_mrr record (eval=50)"; exit 1; }
# the seeds under which 20 dimensions ended with the clusters not separated
# (the top of this file): deterministic at 1 x 1, so each must train
seeds=""
for seed in 11 12 30 40 79 96; do
    RUNOPT="--seed $seed" run "seed$seed" 1 1 "$tmp/g"
    m=$(mrr "$tmp/seed$seed.out")
    awk -v m="$m" -v b="$base" 'BEGIN {exit !(m >= 0.2 && m >= 5 * b)}' ||
        { echo "FAIL: seed $seed: test MRR $m (need >= 0.2 and >= 5x the untrained $base)"; exit 1; }
    seeds="$seeds $seed:$m"
done
# checkpoint: 3 epochs, then a second run resumes and trains epochs 4 and 5 only
run ck1 1 1 "$tmp/g" epochs=3 checkpoint="$tmp/kge.ckpt"
timeout 60 "$BIN" run examples/kge.lua -- data="$tmp/g" $COMMON epochs=5 checkpoint="$tmp/kge.ckpt" >"$tmp/ck2.out" 2>&1 ||
    { cat "$tmp/ck2.out"; echo "FAIL: resume exited non-zero"; exit 1; }
grep -q "resumed from $tmp/kge.ckpt after epoch 3" "$tmp/ck2.out" || { cat "$tmp/ck2.out"; echo "FAIL: no resume"; exit 1; }
grep -q "positives=3074 " "$tmp/ck2.out" || { cat "$tmp/ck2.out"; echo "FAIL: the resumed run did not train 2 epochs"; exit 1; }
for model in distmult transe_l1 transe_l2 rescal; do
    run "$model" 1 1 "$tmp/g" model="$model" epochs=5 dim=8
done
echo "ok: untrained MRR $base; 1x1 $(mrr "$tmp/1x1.out"), 1x2 $(mrr "$tmp/1x2.out"), 2x1 $(mrr "$tmp/2x1.out"), 2x1 bounded $(mrr "$tmp/2x1bounded.out"), LibKGE layout $(mrr "$tmp/del.out"); seeds$seeds"
