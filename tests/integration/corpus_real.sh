#!/usr/bin/env bash
# The corpus builders on the real Debian files (wordnet-base, dict-gcide), when
# installed: the split property on the full WordNet KG, the sizes we document,
# LIBSVM structure of gcide-docs, synonym questions against the gcide vocabulary.
# Brown is not fetched here (network); see corpus_brown.sh for its parser.
set -u
BIN=${CRESCENT_BIN:?}
[ -f /usr/share/wordnet/data.noun ] && [ -f /usr/share/dictd/gcide.dict.dz ] \
    || { echo "wordnet-base or dict-gcide not installed (make deps installs them)"; exit 77; }
if "$BIN" data wordnet --help 2>&1 | grep -q 'not built yet'; then
    echo "crescent data does not forward to the corpus builders yet"; exit 77
fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT; trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; exit 1; }

"$BIN" data wordnet --out "$T/wn" --seed 1 || fail "wordnet"
for s in valid test; do
    [ "$(wc -l < "$T/wn/$s.del")" -eq 5000 ] || fail "$s size"
    bad=$(awk -F'\t' 'FNR==NR{e[$1]=1;e[$3]=1;r[$2]=1;next} !($1 in e)||!($3 in e)||!($2 in r){n++} END{print n+0}' \
          "$T/wn/train.del" "$T/wn/$s.del")
    [ "$bad" -eq 0 ] || fail "$bad $s triples with an entity or relation not in train"
done
[ "$(cat "$T"/wn/{train,valid,test}.del | sort | uniq -d | wc -l)" -eq 0 ] || fail "a triple in two splits"
grep -qP '^\d+\tdog\.n\.01$' "$T/wn/entities.tsv" || fail "dog.n.01 missing"

"$BIN" data wordnet --rr --out "$T/rr" --seed 1 || fail "wordnet --rr"
for r in _hyponym _instance_hyponym _member_holonym _part_of _substance_holonym _member_of_domain_topic \
         _synset_domain_region_of _synset_domain_usage_of; do
    grep -qP "\t$r\$" "$T/rr/relations.tsv" && fail "--rr kept $r"
done

gout=$("$BIN" data wordnet-graph --out "$T/wn.edges") || fail "wordnet-graph"
gnodes=$(echo "$gout" | sed -n 's/.*: \([0-9]*\) nodes, \([0-9]*\) undirected.*/\1/p')
gedges=$(echo "$gout" | sed -n 's/.*: \([0-9]*\) nodes, \([0-9]*\) undirected.*/\2/p')

out=$("$BIN" data gcide-text --out "$T/gcide.txt") || fail "gcide-text"
echo "$out"
tokens=$(echo "$out" | sed -n 's/^gcide-text: wrote .*: [0-9]* lines, \([0-9]*\) tokens.*/\1/p')
lines=$(echo "$out" | sed -n 's/^gcide-text: wrote .*: \([0-9]*\) lines, .*/\1/p')
[ "${tokens:-0}" -gt 3000000 ] || fail "only ${tokens:-0} tokens"
grep -q '[][{}\\]' "$T/gcide.txt" && fail "markup left in gcide-text"
# valid UTF-8 (the dictionary's raw Windows-1252 bytes converted: gensim stops on them otherwise)
U="${CRESCENT_BUILD:?}/tests/utf8_check"
"$U" "$T/gcide.txt" || fail "gcide-text is not UTF-8"
grep -q 'fa'$'\xc3\xa7''ade' "$T/gcide.txt" || fail "façade (0xe7 in the dictionary) not converted"

"$BIN" data gcide-docs --min-count 5 --out "$T/gcide.svm" || fail "gcide-docs"
nf=$(wc -l < "$T/gcide.svm.vocab")
awk -v nf="$nf" '$1 != "+1" && $1 != "-1" {print "label " NR; exit 1}
    { last = 0; for (i = 2; i <= NF; i++) { split($i, a, ":"); if (a[1] <= last || a[1] > nf || a[2] < 1) { print "feature " NR; exit 1 } last = a[1] } }' \
    "$T/gcide.svm" || fail "gcide-docs is not valid LIBSVM"

"$BIN" data wordnet-synonyms --vocab "$T/gcide.svm.vocab" --min-count 20 --questions 200 --out "$T/syn.tsv" || fail "synonyms"
[ "$(wc -l < "$T/syn.tsv")" -eq 200 ] || fail "synonym count"
awk -F'\t' 'NF != 6 || $6 < 1 || $6 > 4 {exit 1}' "$T/syn.tsv" || fail "synonym format"
"$U" "$T/gcide.svm.vocab" "$T/syn.tsv" "$T/wn/entities.tsv" "$T/wn/relations.tsv" "$T/wn.edges.nodes" \
    || fail "a text output is not UTF-8"
# The shared readers (cr.data) load every output: LibKGE ids and names agree,
# the edge list, the LIBSVM matrix with its vocabulary size, the text corpus.
if command -v lua5.4 >/dev/null && [ -n "${LUA_CPATH:-}" ]; then
    ${CRESCENT_LUA:-lua5.4} - "$T" "$gnodes" "$gedges" "$lines" "$tokens" <<'LUA' || fail "shared readers"
local data = require "crescent".data
local T, gnodes, gedges, lines, tokens = arg[1], tonumber(arg[2]), tonumber(arg[3]), tonumber(arg[4]),
  tonumber(arg[5])
local ents, rels = data.dict(T .. "/wn/entities.tsv"), data.dict(T .. "/wn/relations.tsv")
for _, split in ipairs { "train", "valid", "test" } do
  local ids = data.triples(T .. "/wn/" .. split .. ".del", { entities = ents, relations = rels })
  local names = data.triples(T .. "/wn/" .. split .. ".tsv", { entities = ents, relations = rels })
  assert(ids.n == names.n and ids.n > 0, split)
  for _, k in ipairs { 1, ids.n // 2, ids.n } do
    assert(ids.s[k] == names.s[k] and ids.r[k] == names.r[k] and ids.o[k] == names.o[k], split .. " ids vs names")
  end
end
local g = data.edges(T .. "/wn.edges")
assert(g.m == gedges and g.n == gnodes, "edges " .. g.m .. " " .. g.n)
local vocab = 0
for _ in io.lines(T .. "/gcide.svm.vocab") do vocab = vocab + 1 end
local m = data.libsvm(T .. "/gcide.svm", { features = vocab })
assert(m.rows == lines and m.cols == vocab, "libsvm " .. m.rows .. " x " .. m.cols)
local c = data.text(T .. "/gcide.txt")
assert(c.raw == tokens and c.nsent == lines, "text " .. c.raw .. " " .. c.nsent)
-- the synonym file parses with the evaluator, and every question word is in the vocabulary it was built from
local words = {}
for line in io.lines(T .. "/gcide.svm.vocab") do words[#words + 1] = line:match("^[^\t]+") end
local cr = require "crescent"
local r = cr.eval.synonyms(cr.core.util.matrix(#words, 4), words, T .. "/syn.tsv")
assert(r.questions == 200 and r.covered == 200, "synonyms " .. r.questions .. " " .. r.covered)
print("shared readers: ok")
LUA
fi
echo ok
