#!/usr/bin/env bash
# The models under relocation and the NuPS heuristic (docs/management.md),
# because moving or replicating keys must save traffic without costing the
# models their quality: MF (small zipf-mf set), KGE (ComplEx on the tiny generated graph
# of tests/integration/jobs/kge_graph.sh) and word2vec (a planted-synonym
# corpus, each worker's lines from its own half of the groups) each run on 2 nodes x 1 worker with manage=classic, relocate,
# hot and auto. Under relocate and hot: the quality is in the band of classic (MF
# test RMSE within 10% and < 0.45; KGE test MRR >= 0.2 and within 0.1; word2vec
# synonym accuracy >= 20/24), rows were relocated (relocation.rows_in > 0),
# and the keys accessed remotely are fewer than classic's. Remote accesses:
# classic counts keys_remote (every key a worker sends to another node);
# a relocating table counts access.remote + access.forwarded (keys its home
# served for, or forwarded from, a worker whose node does not hold the row;
# keys_remote there also counts a worker's requests to its own node's server
# and the localize requests, so it is not comparable).
#
# KGE runs at dim=40: at 20 dimensions ComplEx on this graph ends, for some
# orders of the updates, with its clusters not separated
# (tests/integration/kge_small.sh has the figures): this configuration at
# 1 node x 1 worker, deterministic there, did in 2 of 100 seeds (MRR 0.012,
# 0.120), and this test ran a KGE run out of the band once more. At dim=40
# none of those 100 seeds did (0.274 to 0.378), and in 20 rounds of the four
# runs below (2 x 1, on 2 cores shared with other jobs) classic gave 0.277
# to 0.358 (median 0.322), relocate 0.275 to 0.374 (0.317), hot 0.265 to
# 0.344 (0.319), auto 0.268 to 0.346 (0.317); the largest drop below the
# round's classic run was 0.073, so each is run once.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
export OPENBLAS_NUM_THREADS=1
fail() { echo "FAIL: $*"; exit 1; }
"$BIN" data zipf-mf --rows 2000 --cols 500 --cells 100000 --rank 16 --noise 0.1 --test-fraction 0.1 \
    --seed 3 --out "$tmp/mf" >/dev/null || fail "mf data"
bash tests/integration/jobs/kge_graph.sh "$tmp/g" 1 || fail "kge fixture"
awk 'BEGIN { srand(1); G = 6; M = 4; C = 12
  for (s = 0; s < 8000; s++) { g = (s % 2) * (G / 2) + int(rand() * G / 2); line = ""
    for (j = 0; j < 10; j++) { w = (j == 5) ? "syn" g "_" int(rand() * M) : "ctx" g "_" int(rand() * C); line = line (j ? " " : "") w }
    print line } }' >"$tmp/corpus.txt"
awk 'BEGIN { srand(2); G = 6; M = 4
  for (g = 0; g < G; g++) for (a = 0; a < M; a++) { ans = int(rand() * 4) + 1; line = "syn" g "_" a
    for (c = 1; c <= 4; c++) {
      if (c == ans) w = "syn" g "_" ((a + 1) % M)
      else { do h = int(rand() * G); while (h == g); w = "syn" h "_" int(rand() * M) }
      line = line "\t" w }
    print line "\t" ans } }' >"$tmp/syn.tsv"

run() { # model manage
    local out="$tmp/$1.$2"
    case $1 in
    mf) timeout 120 "$BIN" run examples/mf.lua --nodes 2 --workers 1 -- data="$tmp/mf" epochs=10 batch=10000 \
            eval=0 manage="$2" >"$out" 2>&1 ;;
    kge) timeout 120 "$BIN" run examples/kge.lua --nodes 2 --workers 1 -- data="$tmp/g" dim=40 epochs=80 lr=0.1 \
            neg=3 batch=50 eval=0 quiet=1 manage="$2" >"$out" 2>&1 ;;
    w2v) timeout 120 "$BIN" run examples/word2vec.lua --nodes 2 --workers 1 -- corpus="$tmp/corpus.txt" \
            synonyms="$tmp/syn.tsv" analogy=none dim=20 sample=0 min_count=1 epochs=3 batch=2000 manage="$2" \
            >"$out" 2>&1 ;;
    esac
    local rc=$?
    grep -E "result|manage=hot" "$out"
    [ $rc -eq 0 ] || { tail -5 "$out"; fail "$1 manage=$2 exited $rc"; }
}
field() { sed -n "s/^manage result: .* $2=\([0-9]*\).*/\1/p" "$tmp/$1"; }
quality() {
    case ${1%%.*} in
    mf) sed -n 's/^mf result: test_rmse=\([0-9.]*\) .*/\1/p' "$tmp/$1" ;;
    kge) sed -n 's/^kge result: .*test_mrr=\([0-9.]*\) .*/\1/p' "$tmp/$1" ;;
    w2v) sed -n 's/^word2vec result: synonym_acc=\([0-9.]*\) .*/\1/p' "$tmp/$1" ;;
    esac
}
for model in mf kge w2v; do
    run "$model" classic
    qc=$(quality "$model.classic") rc=$(field "$model.classic" keys_remote)
    [ -n "$qc" ] && [ -n "$rc" ] || fail "$model classic: no result lines"
    [ "$rc" -gt 0 ] || fail "$model classic: no remote key on 2 nodes"
    [ "$(field "$model.classic" rows_in)" = 0 ] || fail "$model classic relocated rows"
    for m in relocate hot; do
        run "$model" "$m"
        q=$(quality "$model.$m")
        rows=$(field "$model.$m" rows_in)
        rem=$(( $(field "$model.$m" remote) + $(field "$model.$m" forwarded) ))
        [ -n "$q" ] || fail "$model $m: no result line"
        case $model in
        mf) awk -v q="$q" -v c="$qc" 'BEGIN {exit !(q < 0.45 && q <= 1.1 * c)}' ||
                fail "mf $m: test RMSE $q (classic $qc; need < 0.45 and within 10%)" ;;
        kge) awk -v q="$q" -v c="$qc" 'BEGIN {exit !(q >= 0.2 && q >= c - 0.1)}' ||
                fail "kge $m: test MRR $q (classic $qc; need >= 0.2 and within 0.1)" ;;
        w2v) awk -v q="$q" 'BEGIN {exit !(q >= 20 / 24)}' || fail "w2v $m: synonym accuracy $q < 20/24 (classic $qc)" ;;
        esac
        [ "${rows:-0}" -gt 0 ] || fail "$model $m: no row relocated (rows_in ${rows:-none})"
        # word2vec: the corpus gives each worker its own word groups (worker
        # w reads lines w, w + 2, ...), so relocation has rows to move and
        # fewer remote accesses than classic is a property of the workload,
        # not of timing (on a corpus both workers share, every key bounces
        # between the nodes and the count depends on the schedule). In a
        # build several times slower (make asan) keys are still in transit
        # when used and forwarded, so the check is skipped there.
        if [ "$model" != w2v ] || [ -z "${SANITIZE:-}" ]; then
            [ "$rem" -lt "$rc" ] || fail "$model $m: $rem remote key accesses per epoch, classic $rc"
        fi
        echo "ok: $model $m: quality $q (classic $qc), $rows rows relocated, $rem remote accesses per epoch (classic $rc)"
    done
    # auto (the examples' default): the quality of classic, no more keys
    # across nodes than classic (it keeps shared keys at home), and the
    # census of each table on the result line
    run "$model" auto
    q=$(quality "$model.auto")
    ra=$(field "$model.auto" keys_remote)
    case $model in
    mf) awk -v q="$q" -v c="$qc" 'BEGIN {exit !(q < 0.45 && q <= 1.1 * c)}' || fail "mf auto: test RMSE $q (classic $qc)" ;;
    kge) awk -v q="$q" -v c="$qc" 'BEGIN {exit !(q >= 0.2 && q >= c - 0.1)}' || fail "kge auto: test MRR $q (classic $qc)" ;;
    w2v) awk -v q="$q" 'BEGIN {exit !(q >= 20 / 24)}' || fail "w2v auto: synonym accuracy $q < 20/24" ;;
    esac
    grep -Eq "^manage result: manage=auto .* tables [a-zA-Z]+:repl=[0-9]+,reloc=[0-9]+,classic=[0-9]+ " "$tmp/$model.auto" ||
        fail "$model auto: no census on the result line"
    [ "${ra:-1}" -le "$rc" ] || fail "$model auto: $ra keys across nodes per epoch, classic $rc"
    echo "ok: $model auto: quality $q (classic $qc), keys_remote $ra (classic $rc)"
done
