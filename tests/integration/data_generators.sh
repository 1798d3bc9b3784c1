#!/usr/bin/env bash
# crescent data zipf-mf / bipartite / zipf-text: outputs have the requested
# shape, are deterministic for a seed, read back through the readers, and bad
# options or impossible sizes fail with a message and no output file.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B=$CRESCENT_BIN
fail() { echo "FAIL: $*"; exit 1; }

out=$("$B" data zipf-mf --rows 3000 --cols 300 --cells 50000 --rank 8 --noise 0.1 --test-fraction 0.1 \
      --seed 5 --out "$tmp/mf")
echo "$out"
echo "$out" | grep -q "45000 train cells" || fail "train count not reported"
[ "$(sed -n 2p "$tmp/mf/train.mmc")" = "3000 300 45000" ] || fail "train size line"
[ "$(sed -n 2p "$tmp/mf/test.mmc")" = "3000 300 5000" ] || fail "test size line"
[ "$(wc -l <"$tmp/mf/train.mmc")" -eq 45002 ] || fail "train line count"
"$B" data zipf-mf --rows 3000 --cols 300 --cells 50000 --rank 8 --seed 5 --out "$tmp/mf2" >/dev/null
cmp -s "$tmp/mf/train.mmc" "$tmp/mf2/train.mmc" || fail "same seed, different output"
"$B" data zipf-mf --rows 3000 --cols 300 --cells 50000 --rank 8 --seed 6 --out "$tmp/mf3" >/dev/null
cmp -s "$tmp/mf/train.mmc" "$tmp/mf3/train.mmc" && fail "different seeds, same output"

# bad input: non-zero exit, one-line message, no files
if "$B" data zipf-mf --rows 10 --cols 10 --cells 101 --rank 2 --out "$tmp/bad" 2>"$tmp/err"; then fail "101 cells in 10x10 accepted"; fi
grep -q "more than rows x cols" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ ! -e "$tmp/bad/train.mmc" ] || fail "partial output left"
if "$B" data zipf-mf --rows x --cols 10 --cells 5 --rank 2 --out "$tmp/bad" 2>"$tmp/err"; then fail "bad integer accepted"; fi
grep -q -- "--rows: 'x' is not an integer" "$tmp/err" || fail "message: $(cat "$tmp/err")"
if "$B" data zipf-mf --rows 10 --cols 10 --cells 5 --rank 2 --out "$tmp/bad" --bogus 1 2>"$tmp/err"; then fail "unknown option accepted"; fi
if "$B" data zipf-mf --rows 10 --cols 10 --rank 2 --out "$tmp/bad" 2>"$tmp/err"; then fail "missing --cells accepted"; fi
grep -q -- "--cells is required" "$tmp/err" || fail "message: $(cat "$tmp/err")"

"$B" data bipartite --rows 2000 --cols 500 --sparsity 0.99 --seed 2 --out "$tmp/b.svm"
[ "$(wc -l <"$tmp/b.svm")" -eq 2000 ] || fail "bipartite libsvm rows"
"$B" data bipartite --rows 2000 --cols 500 --density 0.01 --zipf 1.1 --seed 2 --out "$tmp/b.mtx"
[ "$(sed -n 2p "$tmp/b.mtx")" = "2000 500 10000" ] || fail "bipartite zipf nnz"
if "$B" data bipartite --rows 20 --cols 5 --out "$tmp/c.svm" 2>/dev/null; then fail "bipartite without density"; fi

"$B" data zipf-text --tokens 10000 --vocab 300 --exponent 1.0 --seed 1 --out "$tmp/z.txt"
[ "$(wc -w <"$tmp/z.txt")" -eq 10000 ] || fail "zipf-text token count"
"${CRESCENT_BUILD:?}/tests/utf8_check" "$tmp/z.txt" || fail "zipf-text is not UTF-8"

# everything reads back through the Lua readers
cat >"$tmp/check.lua" <<LUA
local d = require("crescent").data
local m = d.matrix_market("$tmp/mf/train.mmc")
assert(m.nnz == 45000 and m.rows == 3000 and m.cols == 300)
local s = 0
for i = 1, 1000 do s = s + m.val:get(i, 1) ^ 2 end
assert(s / 1000 > 0.5 and s / 1000 < 2, "value variance " .. s / 1000)
local b = d.libsvm("$tmp/b.svm", { features = 500 })
assert(b.rows == 2000 and b.nnz > 5000 and b.nnz < 15000, "nnz " .. b.nnz)
local p = d.matrix_market("$tmp/b.mtx", { cache = false })
assert(p.nnz == 10000 and p.val:get(1, 1) == 1)
local t = d.text("$tmp/z.txt")
assert(t.total == 10000 and t.vocab:name(0) == "w1")
print("readback ok")
LUA
if command -v lua5.4 >/dev/null; then ${CRESCENT_LUA:-lua5.4} "$tmp/check.lua"; else echo "no lua5.4"; exit 77; fi

# unknown dataset names fail; corpus names are forwarded to the corpus builder
if "$B" data nosuch 2>/dev/null; then fail "unknown dataset accepted"; fi
echo ok
