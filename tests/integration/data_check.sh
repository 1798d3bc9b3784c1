#!/usr/bin/env bash
# crescent data check: every reader from the command line. Good files print
# their shape and exit 0; each kind of bad input exits 1 with exactly one
# line on stderr naming the file (and line), and nothing on stdout.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B=$CRESCENT_BIN
fail() { echo "FAIL: $*"; exit 1; }

good() { # file expected-substring
    out=$("$B" data check "$1" 2>"$tmp/err") || fail "$1 rejected: $(cat "$tmp/err")"
    echo "$out"
    [[ "$out" == *"$2"* ]] || fail "$1: expected '$2' in '$out'"
}
bad() { # file expected-stderr-substring
    "$B" data check "$1" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    cat "$tmp/err"
    [ $rc -eq 1 ] || fail "$1: exit $rc, expected 1"
    [ ! -s "$tmp/out" ] || fail "$1: printed a result: $(cat "$tmp/out")"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$1: expected one line on stderr"
    grep -qF -- "$2" "$tmp/err" || fail "$1: expected '$2'"
}

M='%%MatrixMarket matrix coordinate real general'
printf '%s\n3 4 2\n1 1 0.5\n3 4 2\n' "$M" >"$tmp/a.mmc";           good "$tmp/a.mmc" "3 x 4, 2 entries"
printf '%s\n3 4 2\n1 1 0.5\n3 5 2\n' "$M" >"$tmp/b.mmc";           bad "$tmp/b.mmc" "$tmp/b.mmc:4: column 5 out of range"
printf '%s\n3 4 2\n1 1 nan\n3 4 2\n' "$M" >"$tmp/c.mmc";           bad "$tmp/c.mmc" "$tmp/c.mmc:3: value is NaN or infinite"
printf '%s\n3 4 3\n1 1 0.5\n3 4 2\n' "$M" >"$tmp/d.mmc";           bad "$tmp/d.mmc" "$tmp/d.mmc:4: file ends after 2 of 3"
: >"$tmp/e.mmc";                                                   bad "$tmp/e.mmc" "$tmp/e.mmc: empty file"
bad "$tmp/missing.mmc" "$tmp/missing.mmc: cannot open: No such file"
printf '1 1:0.5 7:1\n-1 2:3\n' >"$tmp/a.svm";                      good "$tmp/a.svm" "2 samples, 7 features, 3 nonzeros"
printf '1 1:0.5 7:1\n-1 2:3 4:x\n' >"$tmp/b.svm";                  bad "$tmp/b.svm" "$tmp/b.svm:2: value of feature 4 is not a number"
printf '1 3000000000:1\n' >"$tmp/c.svm";                           bad "$tmp/c.svm" "$tmp/c.svm:1: feature id 3000000000:1 out of range"
printf '0 1\n1 2\n' >"$tmp/a.edges";                               good "$tmp/a.edges" "3 nodes, 2 edges"
printf '0 1\n1 99999999999\n' >"$tmp/b.edges";                     bad "$tmp/b.edges" "$tmp/b.edges:2: target id 99999999999 out of range"
printf 'a\tr\tb\n' >"$tmp/a.tsv";                                  good "$tmp/a.tsv" "1 triples, 2 entities, 1 relations"
printf 'a\tr\tb\nc\td\n' >"$tmp/b.tsv";                            bad "$tmp/b.tsv" "$tmp/b.tsv:2: expected 3 tab-separated fields"
printf '0\t0\t1\n' >"$tmp/a.del";                                  good "$tmp/a.del" "1 triples"
printf '0\t0\t-1\n' >"$tmp/b.del";                                 bad "$tmp/b.del" "$tmp/b.del:1: object id -1 out of range"
printf 'the cat\nthe dog\n' >"$tmp/a.txt";                         good "$tmp/a.txt" "4 tokens, 2 lines, 3 distinct words"
# gzip, and a truncated gzip stream
seq 1 200000 | awk '{ print $1 % 1000, ($1 * 7) % 1000 }' | gzip >"$tmp/g.edges.gz"
good "$tmp/g.edges.gz" "200000 edges"
head -c $(( $(stat -c %s "$tmp/g.edges.gz") / 2 )) "$tmp/g.edges.gz" >"$tmp/t.edges.gz"
bad "$tmp/t.edges.gz" "$tmp/t.edges.gz: truncated or corrupt gzip: unexpected end of file"
grep -q gzip "$tmp/err" || fail "truncated gzip not named as such"
# usage errors exit 2
"$B" data check "$tmp/a.txt" --format nope 2>/dev/null; [ $? -eq 2 ] || fail "unknown format: exit not 2"
"$B" data check "$tmp/x.unknown" 2>/dev/null; [ $? -eq 2 ] || fail "unknown extension: exit not 2"
echo ok
