#!/usr/bin/env bash
# crescent partition: table and --json rows, --out placement readable by
# cr.partition.load, bad input -> "file:line: reason" and non-zero exit.
set -u
BIN=${CRESCENT_BIN:-./crescent}
ROOT=${CRESCENT_ROOT:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$CRESCENT_BUILD/bench/partition_gen" zipf 600 900 9000 3 >"$tmp/g.libsvm" || fail "generator"

# table: one row per method, random first
"$BIN" partition "$tmp/g.libsvm" -k 4 --method random,parsa,tsh1,tsh2 --seeds 2 >"$tmp/table.txt" || fail "table run"
grep -q '^graph .*|U| = 600' "$tmp/table.txt" || fail "missing graph line"
for m in random parsa tsh1 tsh2; do grep -q "^$m " "$tmp/table.txt" || fail "missing row $m"; done

# json: fields present, parsa beats random on T_max (improvement > 0)
"$BIN" partition "$tmp/g.libsvm" -k 4 --method parsa,tsh2 --seeds 3 --json >"$tmp/rows.json" || fail "json run"
[ "$(wc -l <"$tmp/rows.json")" -eq 2 ] || fail "expected 2 json lines"
for f in method k m_max t_max t_sum m_max_impr t_max_impr t_sum_impr seconds seconds_min seconds_max cpu_seconds; do
    grep -q "\"$f\":" "$tmp/rows.json" || fail "json field $f missing"
done
impr=$(grep '"method":"parsa"' "$tmp/rows.json" | sed 's/.*"t_max_impr":\([-0-9.]*\).*/\1/')
awk -v x="$impr" 'BEGIN { exit !(x > 0) }' || fail "parsa T_max improvement $impr not > 0"

# --pair-cap reaches tsh2: 1 partner per step gives another T_sum than the default; bad values refused
t_sum() { "$BIN" partition "$tmp/g.libsvm" -k 4 --method tsh2 --seeds 1 --json "$@" | sed 's/.*"t_sum":\([0-9.]*\).*/\1/'; }
a=$(t_sum) b=$(t_sum --pair-cap 1) c=$(t_sum --pair-cap 0)
[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] || fail "--pair-cap runs"
[ "$a" != "$b" ] || fail "--pair-cap 1 changed nothing (T_sum $a)"
"$BIN" partition "$tmp/g.libsvm" -k 4 --method tsh2 --pair-cap -1 2>"$tmp/err.txt" >/dev/null; [ $? -eq 2 ] || fail "--pair-cap -1 accepted"
grep -qx "crescent partition: --pair-cap: '-1' is not an integer in \[0, 2147483647\]" "$tmp/err.txt" || fail "pair-cap message: $(cat "$tmp/err.txt")"

# metis: a row either way (available or reported unavailable)
"$BIN" partition "$tmp/g.libsvm" -k 4 --method metis --seeds 1 >"$tmp/metis.txt"
grep -qE '^metis( |: unavailable \(libmetis not installed\))' "$tmp/metis.txt" || fail "metis row"

CRESCENT_LIBMETIS=/nonexistent/libmetis.so "$BIN" partition "$tmp/g.libsvm" -k 4 --method random,metis --seeds 1 >"$tmp/nometis.txt"
grep -qx 'metis: unavailable (libmetis not installed)' "$tmp/nometis.txt" || fail "missing library not reported: $(cat "$tmp/nometis.txt")"
CRESCENT_LIBMETIS=/nonexistent/libmetis.so "$BIN" partition "$tmp/g.libsvm" -k 4 --method metis --seeds 1 >/dev/null \
    && fail "metis alone without the library must exit non-zero"

# a failing method is a row, the next methods still run, exit status 1
"$BIN" partition "$tmp/g.libsvm" -k 4 --method parsa,tsh1 --init-blocks 5 --seeds 1 >"$tmp/fail.txt" \
    && fail "failed method must give a non-zero exit"
grep -qx 'parsa: failed: parsa: init_blocks (5) > blocks (1)' "$tmp/fail.txt" || fail "failure row: $(cat "$tmp/fail.txt")"
grep -q '^tsh1 ' "$tmp/fail.txt" || fail "rows after a failing method missing"

# --out, read back from Lua with the same assignment
"$BIN" partition "$tmp/g.libsvm" -k 4 --method tsh1 --seeds 1 --out "$tmp/p.txt" >/dev/null || fail "--out run"
head -1 "$tmp/p.txt" | grep -q '^# crescent placement 1$' || fail "placement header"
LUA_PATH="$ROOT/lua/?.lua;$ROOT/lua/?/init.lua;;" LUA_CPATH="$CRESCENT_BUILD/lua/?.so;;" ${CRESCENT_LUA:-lua5.4} -e "
  local cr = require 'crescent'
  local p = assert(cr.partition.load('$tmp/p.txt'))
  local g = assert(cr.partition.graph('$tmp/g.libsvm'))
  local q = cr.partition{ graph = g, k = 4, method = 'tsh1', seed = 1 }
  assert(p.k == 4 and #p.u == g.examples and #p.v == g.keys)
  for i = 1, #p.u do assert(p.u:get(i) == q.u:get(i)) end
  for i = 1, #p.v do assert(p.v:get(i) == q.v:get(i)) end
" || fail "placement does not round-trip through cr.partition.load"

# bad input
printf '1 1:1\n1 2:1 3\n' >"$tmp/bad.libsvm"
"$BIN" partition "$tmp/bad.libsvm" -k 2 2>"$tmp/err.txt" >/dev/null && fail "malformed file accepted"
grep -qx "crescent partition: $tmp/bad.libsvm:2: expected ID:VALUE, got '3'" "$tmp/err.txt" \
    || fail "error message: $(cat "$tmp/err.txt")"
"$BIN" partition "$tmp/g.libsvm" -k 0 2>/dev/null && fail "k = 0 accepted"
"$BIN" partition "$tmp/g.libsvm" -k 2 --method nope 2>/dev/null && fail "unknown method accepted"
"$BIN" partition "$tmp/missing" -k 2 2>/dev/null && fail "missing file accepted"
echo "ok"
exit 0
