#!/usr/bin/env bash
# LDA end to end (examples/lda.lua, lua/models/lda.lua) on a planted-topics
# corpus made here (5 topics over 100 words, each topic 20 words of its own;
# 600 documents of 40 tokens mixing one or two topics; LIBSVM bag of words
# with a vocabulary file):
#   * both samplers on 1 node x 1 worker, mh on 1 x 2 and 2 x 1: the
#     log-likelihood per token rises, the held-out perplexity ends in (15, 45), far below
#     the vocabulary's 100 (a planted document draws from 20-40 words), every
#     JSONL record holds loglik_per_token and tokens_per_s and the last one
#     heldout_perplexity; topwords= writes one line per topic;
#   * the count invariant: after epochs under bsp, ssp and asp, on 1 node x
#     2 workers and 2 nodes x 1 worker, n_wk equals the sum over workers of
#     their assignments' counts and n_k its column sums (lda_counts.lua);
#   * checkpoint=: a run stopped and resumed ends bit for bit where a
#     straight run ends (1 x 1); 2 x 1 resumes on 1 x 2; another worker
#     count or K is refused naming the file;
#   * bad input: an empty document set, K < 2, a word id past the
#     vocabulary, a malformed line: one clear line, non-zero exit.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
export OPENBLAS_NUM_THREADS=1
fail() { echo "FAIL: $*"; exit 1; }
awk 'BEGIN { srand(7); T = 5; W = 20
  for (d = 0; d < 600; d++) { a = int(rand() * T); b = (rand() < 0.5) ? a : int(rand() * T)
    delete c; for (i = 0; i < 40; i++) { t = (rand() < 0.7) ? a : b; w = t * W + int(rand() * W) + 1; c[w]++ }
    line = (d % 2) ? "+1" : "-1"; for (w = 1; w <= T * W; w++) if (w in c) line = line " " w ":" c[w]
    print line } }' >"$tmp/c.svm"
for w in $(seq 1 100); do echo "w$w 1"; done >"$tmp/c.svm.vocab"

run() { # name nodes workers args...
    local name=$1 n=$2 w=$3
    shift 3
    timeout 120 "$BIN" run examples/lda.lua --nodes "$n" --workers "$w" --metrics "$tmp/$name.jsonl" -- \
        data="$tmp/c.svm" K=5 iterations=40 chunk=3000 "$@" >"$tmp/$name.out" 2>&1 ||
        { tail -5 "$tmp/$name.out"; fail "$name exited non-zero"; }
    grep "^lda result" "$tmp/$name.out" || fail "$name: no result line"
    lua5.4 - "$tmp/$name.jsonl" "$name" <<'EOF' || fail "$name: records"
local cjson = require "cjson"
local recs = {}
for l in io.lines(arg[1]) do recs[#recs + 1] = cjson.decode(l) end
assert(#recs == 40, #recs .. " records")
for _, r in ipairs(recs) do
  assert(r.loglik_per_token and r.tokens_per_s and r.tokens_per_s > 0, "a record without loglik_per_token/tokens_per_s")
end
local first, last = recs[1].loglik_per_token, recs[#recs].loglik_per_token
assert(last > first + 0.2, ("loglik/token %.4f -> %.4f: did not rise"):format(first, last))
local p = recs[#recs].heldout_perplexity
assert(p and p > 15 and p < 45, "held-out perplexity " .. tostring(p) .. " (the vocabulary has 100 words)")
print(("ok: %s: loglik/token %.3f -> %.3f, held-out perplexity %.1f"):format(arg[2], first, last, p))
EOF
}
run plain 1 1 sampler=plain topwords="$tmp/top.txt"
[ "$(grep -c '^topic [0-9]*: ' "$tmp/top.txt")" = 5 ] || fail "topwords: expected 5 topic lines"
run mh 1 1 sampler=mh
run mh12 1 2
run mh21 2 1
# both samplers end near the same log-likelihood per token (within 3%)
lua5.4 - "$tmp/plain.jsonl" "$tmp/mh.jsonl" <<'EOF' || fail "samplers disagree"
local cjson = require "cjson"
local function last(p) local r; for l in io.lines(p) do r = l end; return cjson.decode(r).loglik_per_token end
local a, b = last(arg[1]), last(arg[2])
assert(math.abs(a - b) <= 0.03 * math.abs(a), ("plain %.4f, mh %.4f"):format(a, b))
print(("ok: plain %.4f, mh %.4f"):format(a, b))
EOF

# the count invariant under each policy, on 1 x 2 and 2 x 1
for layout in "1 2" "2 1"; do
    set -- $layout
    for pol in bsp ssp asp; do
        timeout 120 "$BIN" run tests/integration/jobs/lda_counts.lua --nodes "$1" --workers "$2" -- \
            data="$tmp/c.svm" policy="$pol" >"$tmp/inv.out" 2>&1 || { tail -5 "$tmp/inv.out"; fail "invariant $pol on $1 x $2"; }
        grep "^ok" "$tmp/inv.out" || fail "invariant $pol on $1 x $2: no ok line"
    done
done

# checkpoint=: 3 iterations, a stop, then on to 6 from the checkpoint end
# bit for bit where 6 straight iterations end on 1 x 1 (every token's topic
# is in the checkpoint and each sweep's draws are seeded by the iteration);
# a 2 x 1 checkpoint resumes on 1 x 2 (the same 2 workers' documents)
lda() { # out nodes workers args...
    local out=$1 n=$2 w=$3
    shift 3
    timeout 120 "$BIN" run examples/lda.lua --nodes "$n" --workers "$w" -- data="$tmp/c.svm" K=5 chunk=3000 "$@" \
        >"$tmp/$out" 2>&1
}
lda straight.out 1 1 iterations=6 || fail "straight run"
lda part1.out 1 1 iterations=3 checkpoint="$tmp/r.ckpt" || { tail -5 "$tmp/part1.out"; fail "checkpointed run"; }
[ -s "$tmp/r.ckpt" ] || fail "no checkpoint written"
lda part2.out 1 1 iterations=6 checkpoint="$tmp/r.ckpt" || { tail -5 "$tmp/part2.out"; fail "resumed run"; }
grep -q "resumed from .*r.ckpt after iteration 3" "$tmp/part2.out" || fail "no resume line"
! grep -q "^iteration [123] " "$tmp/part2.out" || fail "the resumed run repeated iterations 1-3"
a=$(grep -o "loglik_per_token=[^ ]* heldout_perplexity=[^ ]*" "$tmp/straight.out")
b=$(grep -o "loglik_per_token=[^ ]* heldout_perplexity=[^ ]*" "$tmp/part2.out")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "resumed run ends at '$b', the straight run at '$a'"
echo "ok: resumed 3 + 3 iterations = 6 straight: $a"
# a finished run started again: nothing to sample, the same result
lda again.out 1 1 iterations=6 checkpoint_every=2 checkpoint="$tmp/r.ckpt" || { tail -5 "$tmp/again.out"; fail "rerun"; }
! grep -q "^iteration" "$tmp/again.out" || fail "a finished run sampled again"
[ "$(grep -o "loglik_per_token=[^ ]*" "$tmp/again.out")" = "${a%% *}" ] || fail "rerun result: $(cat "$tmp/again.out")"
lda p21.out 2 1 iterations=2 checkpoint="$tmp/s.ckpt" || fail "2 x 1 checkpointed run"
lda p12.out 1 2 iterations=4 checkpoint="$tmp/s.ckpt" || { tail -5 "$tmp/p12.out"; fail "1 x 2 resume"; }
grep -q "resumed from .*s.ckpt after iteration 2" "$tmp/p12.out" && grep -q "^iteration 4 " "$tmp/p12.out" ||
    fail "1 x 2 did not resume the 2 x 1 checkpoint"
# another worker count, or another K: refused, naming the file, before any sweep
lda w1.out 1 1 iterations=4 checkpoint="$tmp/s.ckpt" && fail "a 2-worker checkpoint resumed on 1 worker"
grep -q "s.ckpt: saved with parts = {10800,10800} tokens per worker, this run has {21600}" "$tmp/w1.out" ||
    { cat "$tmp/w1.out"; fail "worker count mismatch: message"; }
lda k6.out 1 2 iterations=4 K=6 checkpoint="$tmp/s.ckpt" && fail "a K=5 checkpoint resumed with K=6"
grep -q "s.ckpt: table 'n_wk' has 100 keys x dim 5, the job's has 100 x 6" "$tmp/k6.out" ||
    { cat "$tmp/k6.out"; fail "K mismatch: message"; }
! grep -q "^iteration" "$tmp/w1.out" "$tmp/k6.out" || fail "a refused resume sampled"

# bad input
bad() { # what expected-pattern args...
    local what=$1 pat=$2
    shift 2
    timeout 60 "$BIN" run examples/lda.lua --nodes 1 --workers 1 -- iterations=1 "$@" >"$tmp/bad.out" 2>&1 &&
        fail "$what: exit 0"
    grep -Eq "$pat" "$tmp/bad.out" || { cat "$tmp/bad.out"; fail "$what: no clear error ($pat)"; }
    # (an error raised in a worker comes with its traceback, as in kge_bad_input.sh)
    ! grep -Eq "Segmentation|Aborted|core dumped" "$tmp/bad.out" || fail "$what: crashed"
    echo "ok: $what: $(grep -Em1 "$pat" "$tmp/bad.out")"
}
: >"$tmp/empty.svm"; cp "$tmp/c.svm.vocab" "$tmp/empty.svm.vocab"
bad "empty document set" "no tokens" data="$tmp/empty.svm" K=5
bad "K < 2" "K must be an integer >= 2" data="$tmp/c.svm" K=1
{ head -3 "$tmp/c.svm"; echo "+1 3:1 101:2"; } >"$tmp/oov.svm"; cp "$tmp/c.svm.vocab" "$tmp/oov.svm.vocab"
bad "word id out of range" "oov.svm:4: feature id 101 out of range \\[1, 100\\]" data="$tmp/oov.svm" K=5
{ head -2 "$tmp/c.svm"; echo "+1 3:x"; } >"$tmp/mal.svm"; cp "$tmp/c.svm.vocab" "$tmp/mal.svm.vocab"
bad "malformed line" "mal.svm:3: " data="$tmp/mal.svm" K=5
echo "ok: lda_small"
