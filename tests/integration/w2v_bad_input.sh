#!/usr/bin/env bash
# examples/word2vec.lua on bad input: an empty corpus, a missing corpus, a
# corpus where no word reaches min_count, a binary file, a missing synonym
# file that was asked for, a bad option. Each is one clear line naming the
# file or option, a non-zero exit and no result line.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
: >"$tmp/empty.txt"
printf 'a b c\nd e f\n' >"$tmp/rare.txt"
printf 'a b\0c\n' >"$tmp/binary.txt"
printf 'a b c a b c a b c a b c a b c\n' >"$tmp/ok.txt"
n=0
expect() { # message, then the script options
    local msg=$1
    shift
    n=$((n + 1))
    timeout 60 "$BIN" run examples/word2vec.lua -- synonyms=none analogy=none "$@" >"$tmp/out$n" 2>&1
    local rc=$?
    cat "$tmp/out$n"
    [ $rc -ne 0 ] || { echo "FAIL: exit 0 with $*"; exit 1; }
    grep -qF -- "$msg" "$tmp/out$n" || { echo "FAIL: no '$msg' with $*"; exit 1; }
    grep -q "^word2vec result" "$tmp/out$n" && { echo "FAIL: a result line with $*"; exit 1; }
    [ "$(grep -c . "$tmp/out$n")" -le 2 ] || { echo "FAIL: more than a line or two of error with $*"; exit 1; }
}
expect "$tmp/empty.txt: empty corpus (no words)" corpus="$tmp/empty.txt"
expect "$tmp/none.txt: cannot open: No such file" corpus="$tmp/none.txt"
expect "$tmp/rare.txt: no word occurs min_count = 5 times" corpus="$tmp/rare.txt"
expect "$tmp/binary.txt:1:" corpus="$tmp/binary.txt"
expect "$tmp/nosyn.tsv: cannot open synonyms file" corpus="$tmp/ok.txt" min_count=1 synonyms="$tmp/nosyn.tsv"
expect "option dim must be a positive integer" corpus="$tmp/ok.txt" dim=0
expect "unknown option 'dimension'" corpus="$tmp/ok.txt" dimension=10
echo ok
