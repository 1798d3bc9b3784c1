#!/usr/bin/env bash
# Traffic filters on 2 nodes (docs/filters.md): the same job without
# filters, with key caching only, and with all three; each must end with
# exactly the sum of its pushes (tests/integration/jobs/filters.lua checks
# every value), and key caching must cut the second epoch's remote bytes by
# at least 40% against the job without filters (dim-1 table, the same key
# lists every epoch).
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
declare -A e2
for mode in off kc all; do
    out=$(timeout 60 "$CRESCENT_BIN" run "$JOBS/filters.lua" --nodes 2 --workers 2 -- "$mode" 2>&1)
    rc=$?
    echo "$out" | grep -v "^epoch"
    [ $rc -eq 0 ] || fail "mode $mode: exit status $rc"
    line=$(echo "$out" | grep "^ok mode=$mode values exact") || fail "mode $mode: no ok line"
    e2[$mode]=$(echo "$line" | sed -n 's/.*epoch2_bytes=\([0-9]*\).*/\1/p')
    [ "$mode" = off ] && continue
    hits=$(echo "$line" | sed -n 's/.*kc_hits=\([0-9]*\).*/\1/p')
    [ "${hits:-0}" -gt 0 ] || fail "mode $mode: no key list sent as a hash"
done
echo "epoch 2 remote bytes: off ${e2[off]}, key caching ${e2[kc]}, all filters ${e2[all]}"
# key caching: at most 60% of the bytes without filters
[ $((e2[kc] * 100)) -le $((e2[off] * 60)) ] || fail "key caching saved less than 40% in epoch 2"
[ "${e2[all]}" -lt "${e2[kc]}" ] || fail "zero removal and sigmod saved nothing on top of key caching"
# bad filter options are refused with a one-line message naming the table
bad=$(cat <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 1, workers = 1 }
job:table{ name = "T", keys = 10, dim = 1, filters = { key_cache = true, zero = true } }
LUA
)
echo "$bad" >"$TMP/bad.lua"
out=$(timeout 30 "$CRESCENT_BIN" run "$TMP/bad.lua" 2>&1) && fail "an unknown filter was accepted"
echo "$out" | grep -q "bad.lua:3: job:table{}: table 'T': filters: unknown filter 'zero'" || fail "message: $out"
sed -i 's/zero = true/sigmod = -1/' "$TMP/bad.lua"
out=$(timeout 30 "$CRESCENT_BIN" run "$TMP/bad.lua" 2>&1) && fail "a negative sigmod was accepted"
echo "$out" | grep -q "bad.lua:3: .*sigmod must be a finite threshold" || fail "message: $out"
sed -i 's/sigmod = -1/half = true, zeros = true/' "$TMP/bad.lua"
out=$(timeout 30 "$CRESCENT_BIN" run "$TMP/bad.lua" 2>&1) && fail "half with zeros was accepted"
echo "$out" | grep -q "bad.lua:3: job:table{}: table 'T': filters.half goes without the zeros and sigmod filters" ||
    fail "message: $out"
sed -i 's/half = true, zeros = true/half = 1/' "$TMP/bad.lua"
out=$(timeout 30 "$CRESCENT_BIN" run "$TMP/bad.lua" 2>&1) && fail "half = 1 was accepted"
echo "$out" | grep -q "bad.lua:3: .*filters.half must be true or false" || fail "message: $out"
sed -i 's/dim = 1,/dim = 1, dtype = "i32",/; s/half = 1/half = true/' "$TMP/bad.lua"
out=$(timeout 30 "$CRESCENT_BIN" run "$TMP/bad.lua" 2>&1) && fail "half on an i32 table was accepted"
echo "$out" | grep -q "bad.lua:3: .*filters.half needs a float table" || fail "message: $out"
no_orphans || exit 1
exit 0
