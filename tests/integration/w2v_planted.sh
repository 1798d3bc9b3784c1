#!/usr/bin/env bash
# examples/word2vec.lua end to end on a generated corpus with planted
# synonyms: 6 groups, each with 4 "syn" words and 12 context words; every
# sentence takes 9 context words of one group and one of its syn words in
# the middle, so syn words of a group share their contexts and nothing else.
# A synonym test asks, for each syn word, which of four choices is another
# syn word of its group (the others come from other groups; chance = 0.25).
# Skip-gram on 1 node x 1 worker and on 2 nodes x 1 worker (negatives
# through the PS sampling API; 3 clocks per epoch under the default bsp
# policy), and CBOW on 1 node x 2 workers, must answer
# at least 20 of 24; untrained vectors (alpha 1e-9) must not (the test can
# fail). The vectors are saved in the word2vec text format and read back;
# the last metrics record holds synonym_acc, analogy_acc, analogy_coverage
# and words_per_s. A checkpoint resumes (and one of other tables is refused).
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
awk 'BEGIN { srand(1); G = 6; M = 4; C = 12
  for (s = 0; s < 8000; s++) { g = int(rand() * G); line = ""
    for (j = 0; j < 10; j++) { w = (j == 5) ? "syn" g "_" int(rand() * M) : "ctx" g "_" int(rand() * C); line = line (j ? " " : "") w }
    print line } }' >"$tmp/corpus.txt"
awk 'BEGIN { srand(2); G = 6; M = 4
  for (g = 0; g < G; g++) for (a = 0; a < M; a++) { ans = int(rand() * 4) + 1; line = "syn" g "_" a
    for (c = 1; c <= 4; c++) {
      if (c == ans) w = "syn" g "_" ((a + 1) % M)
      else { do h = int(rand() * G); while (h == g); w = "syn" h "_" int(rand() * M) }
      line = line "\t" w }
    print line "\t" ans } }' >"$tmp/syn.tsv"
# the analogy test: one section, planted "a b c d" with a, b and c, d in groups
printf ': planted\nsyn0_0 syn0_1 syn1_0 syn1_1\nsyn2_0 syn2_2 syn3_0 syn3_2\nfoo bar syn0_0 syn0_1\n' >"$tmp/ana.txt"
COMMON="corpus=$tmp/corpus.txt synonyms=$tmp/syn.tsv analogy=$tmp/ana.txt dim=20 sample=0 min_count=1 epochs=3 batch=2000"
run() { # name nodes workers [options]
    local name=$1 nodes=$2 workers=$3
    shift 3
    timeout 120 "$BIN" run examples/word2vec.lua --nodes "$nodes" --workers "$workers" --metrics "$tmp/$name.jsonl" \
        -- $COMMON "$@" >"$tmp/$name.out" 2>&1
    local rc=$?
    cat "$tmp/$name.out"
    [ $rc -eq 0 ] || { echo "FAIL: $name exited $rc"; exit 1; }
}
acc() { sed -n 's/^word2vec result: synonym_acc=\([0-9.]*\) .*/\1/p' "$tmp/$1.out"; }
run sg_1x1 1 1 save="$tmp/v.vec"
run sg_2x1 2 1 clocks=3
run cbow_1x2 1 2 sg=0
run untrained 1 1 alpha=1e-9
for n in sg_1x1 sg_2x1 cbow_1x2; do
    a=$(acc $n)
    [ -n "$a" ] || { echo "FAIL: $n printed no result line"; exit 1; }
    awk -v a="$a" 'BEGIN {exit !(a >= 20 / 24)}' || { echo "FAIL: $n synonym accuracy $a < 20/24"; exit 1; }
    last=$(tail -n 1 "$tmp/$n.jsonl")
    for k in synonym_acc analogy_acc analogy_coverage words_per_s; do
        echo "$last" | grep -q "\"$k\"" || { echo "FAIL: $n: the last metrics record lacks $k: $last"; exit 1; }
    done
    grep -q "analogy_coverage=0.6667" "$tmp/$n.out" || { echo "FAIL: $n: analogy coverage is not 2/3"; exit 1; }
done
a=$(acc untrained)
awk -v a="$a" 'BEGIN {exit !(a < 20 / 24)}' || { echo "FAIL: untrained vectors score $a: the test cannot fail"; exit 1; }
# the saved vectors: 96 words of dim 20, read back with the same scores
head -n 1 "$tmp/v.vec" | grep -qx "96 20" || { echo "FAIL: header of the saved vectors: $(head -n 1 "$tmp/v.vec")"; exit 1; }
"$BIN" run tests/bench/w2v_score.lua -- "$tmp/v.vec" "$tmp/syn.tsv" >"$tmp/score" 2>&1
grep -q "synonym_acc=$(acc sg_1x1) " "$tmp/score" ||
    { echo "FAIL: the saved vectors score $(cat "$tmp/score"), the run $(acc sg_1x1)"; exit 1; }
# clocks: each worker ticks exactly clocks times per epoch
timeout 60 "$BIN" run tests/integration/jobs/w2v_clocks.lua -- "$tmp/corpus.txt" >"$tmp/clk" 2>&1
[ "$(grep -c '^w2v clocks: worker [01] clock 6$' "$tmp/clk")" -eq 2 ] ||
    { cat "$tmp/clk"; echo "FAIL: workers did not end at clock 6 (3 clocks x 2 epochs)"; exit 1; }
# checkpoint: 2 epochs, then a second run resumes and trains epoch 3 only;
# an epoch's draws (window shrinks) depend on the seed and the epoch, not on
# the epochs before it, so the resumed epoch 3 makes the pairs sg_1x1's
# epoch 3 made
run ck2 1 1 epochs=2 checkpoint="$tmp/w.ckpt"
run ckres 1 1 checkpoint="$tmp/w.ckpt"
grep -q "resumed from $tmp/w.ckpt after epoch 2" "$tmp/ckres.out" || { echo "FAIL: no resume"; exit 1; }
grep -q " words=80000 " "$tmp/ckres.out" || { echo "FAIL: the resumed run did not train exactly 1 epoch"; exit 1; }
pairs() { sed -n 's/.*"epoch":3,.*"pairs":\([0-9]*\).*/\1/p' "$tmp/$1.jsonl" | head -n 1; }
[ -n "$(pairs ckres)" ] && [ "$(pairs ckres)" = "$(pairs sg_1x1)" ] ||
    { echo "FAIL: resumed epoch 3 made $(pairs ckres) pairs, the uninterrupted one $(pairs sg_1x1)"; exit 1; }
awk -v a="$(acc ckres)" 'BEGIN {exit !(a >= 20 / 24)}' || { echo "FAIL: resumed run's synonym accuracy $(acc ckres)"; exit 1; }
# a checkpoint of other tables is refused, naming the file and the table, and nothing is trained
timeout 60 "$BIN" run examples/word2vec.lua -- $COMMON dim=10 checkpoint="$tmp/w.ckpt" >"$tmp/ckbad.out" 2>&1 &&
    { cat "$tmp/ckbad.out"; echo "FAIL: a checkpoint of dim 20 loaded into dim 10"; exit 1; }
grep -q "w.ckpt.*'in'" "$tmp/ckbad.out" || { cat "$tmp/ckbad.out"; echo "FAIL: the refusal names no file or table"; exit 1; }
! grep -q "^epoch " "$tmp/ckbad.out" || { echo "FAIL: the refused run trained"; exit 1; }
echo "ok: synonym accuracy sg 1x1 $(acc sg_1x1), sg 2x1 $(acc sg_2x1), cbow 1x2 $(acc cbow_1x2), untrained $a"
