#!/usr/bin/env bash
# crescent data wordnet / wordnet-graph / wordnet-synonyms through the CLI on a
# four-synset fake WordNet: summaries, determinism, --rr, the hold-out shortfall
# warning, file:line errors with no output left behind, usage errors.
set -u
BIN=${CRESCENT_BIN:?}
if "$BIN" data wordnet --help 2>&1 | grep -q 'not built yet'; then
    echo "crescent data does not forward to the corpus builders yet"; exit 77
fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT; trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; exit 1; }

mkdir "$T/wn"
lic='  1 This software and database is being provided to you, the LICENSEE, by  '
{ echo "$lic"
  echo '00000100 03 n 02 dog 0 domestic_dog 0 003 @ 00000200 n 0000 %p 00000300 n 0000 ! 00000400 n 0000 | a dog  '
  echo '00000200 03 n 01 animal 0 001 ~ 00000100 n 0000 | an animal  '
  echo '00000300 03 n 01 tail 0 001 #p 00000100 n 0000 | a tail  '
  echo '00000400 03 n 01 cat 0 001 ! 00000100 n 0000 | a cat  '; } > "$T/wn/data.noun"
for p in verb adj adv; do echo "$lic" > "$T/wn/data.$p"; done

out=$("$BIN" data wordnet --wordnet-dir "$T/wn" --valid 1 --test 1 --seed 3 --out "$T/kg" 2>"$T/err") || fail "exit $?"
echo "$out"; cat "$T/err"
echo "$out" | grep -q "4 entities, 5 relations, 5 train / 1 valid / 0 test triples" || fail "summary"
grep -q 'only 1 valid / 0 test triples could be held out' "$T/err" || fail "shortfall warning"
for f in entities.tsv relations.tsv train.tsv valid.tsv test.tsv train.del valid.del test.del; do
    [ -f "$T/kg/$f" ] || fail "missing $f"; done
grep -qP '^dog\.n\.00000100\t_antonym\tcat\.n\.00000400$|^cat\.n\.00000400\t_antonym\tdog\.n\.00000100$' "$T/kg/valid.tsv" \
    || fail "valid triple: $(cat "$T/kg/valid.tsv")"
"$BIN" data wordnet --wordnet-dir "$T/wn" --valid 1 --test 1 --seed 3 --out "$T/kg2" >/dev/null 2>&1
for f in train.tsv valid.tsv test.del entities.tsv; do cmp -s "$T/kg/$f" "$T/kg2/$f" || fail "not deterministic: $f"; done

"$BIN" data wordnet --rr --wordnet-dir "$T/wn" --valid 0 --test 0 --out "$T/rr" >/dev/null || fail "rr"
grep -q '_hyponym\|_part_of' "$T/rr/relations.tsv" "$T/rr/train.tsv" && fail "--rr kept an inverse relation"
[ "$(wc -l < "$T/rr/train.tsv")" -eq 4 ] || fail "rr train size"

out=$("$BIN" data wordnet-graph --wordnet-dir "$T/wn" --out "$T/g.edges") || fail "graph"
echo "$out" | grep -q '4 nodes, 3 undirected edges' || fail "graph summary: $out"
[ "$(grep -vc '^#' "$T/g.edges")" -eq 3 ] && [ "$(wc -l < "$T/g.edges.nodes")" -eq 4 ] || fail "graph files"

"$BIN" data wordnet-synonyms --wordnet-dir "$T/wn" --out "$T/syn.tsv" 2>"$T/err" >/dev/null || fail "synonyms"
grep -q 'only 0 of 1000 questions qualify' "$T/err" || fail "synonym shortfall"

# a malformed line: file:line, exit 1, nothing written
sed -i '3s/ 001 ~ / 001 ?? /' "$T/wn/data.noun"
err=$("$BIN" data wordnet --wordnet-dir "$T/wn" --out "$T/bad" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "malformed exit $rc"
echo "$err" | grep -qF "$T/wn/data.noun:3: unknown pointer symbol '??'" || fail "message: $err"
[ ! -e "$T/bad" ] || fail "output written for bad input"

err=$("$BIN" data wordnet --wordnet-dir "$T/none" --out "$T/bad" 2>&1) && fail "missing dir accepted"
echo "$err" | grep -q "$T/none/data.noun: cannot open" || fail "missing dir message: $err"
"$BIN" data wordnet --valid x --out "$T/bad" 2>/dev/null; [ $? -eq 2 ] || fail "bad --valid not a usage error"
"$BIN" data wordnet-graph --seed 1 --out "$T/bad" 2>/dev/null; [ $? -eq 2 ] || fail "--seed accepted by wordnet-graph"
echo ok
