#!/usr/bin/env bash
# crescent partition with mbp and dppa: both beat random on a planted graph,
# mbp keeps the balance bound, an impossible --mem-bound is a failure row
# with a clear message and a non-zero exit, dppa --hash-bins writes a
# placement whose keys share servers by bin and reports the hashing
# statistics (JSON hash_* fields after the usual ones, a "hashing:" line in
# the table, the same numbers as cr.partition's m.hashing in Lua).
set -u
BIN=${CRESCENT_BIN:-./crescent}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 4000 examples in 4 planted clusters of 500 keys each, 8 features per row,
# 85% inside the cluster (LCG, so the file is the same on every run)
${CRESCENT_LUA:-lua5.4} -e '
  local x = 12345
  local function rnd(n) x = (x * 1103515245 + 12345) % 2147483648; return (x >> 8) % n end
  for i = 0, 3999 do
    local c, seen, feats = i % 4, {}, {}
    while #feats < 8 do
      local f = rnd(100) < 85 and c * 500 + rnd(500) + 1 or rnd(2000) + 1
      if not seen[f] then seen[f] = true; feats[#feats + 1] = f end
    end
    table.sort(feats)
    local parts = {"1"}
    for _, f in ipairs(feats) do parts[#parts + 1] = f .. ":1" end
    print(table.concat(parts, " "))
  end' >"$tmp/g.libsvm" || fail "generator"
[ "$(wc -l <"$tmp/g.libsvm")" -eq 4000 ] || fail "generator output"

"$BIN" partition "$tmp/g.libsvm" -k 4 --method mbp,dppa --seeds 2 --json >"$tmp/rows.json" || fail "json run"
[ "$(wc -l <"$tmp/rows.json")" -eq 2 ] || fail "expected 2 json lines: $(cat "$tmp/rows.json")"
for m in mbp dppa; do
    impr=$(grep "\"method\":\"$m\"" "$tmp/rows.json" | sed 's/.*"t_sum_impr":\([-0-9.]*\).*/\1/')
    awk -v x="$impr" 'BEGIN { exit !(x > 0.5) }' || fail "$m T_sum improvement $impr not > 0.5"
done
load=$(grep '"method":"mbp"' "$tmp/rows.json" | sed 's/.*"load":\([0-9.]*\).*/\1/')
awk -v x="$load" 'BEGIN { exit !(x <= 1030) }' || fail "mbp load $load above (1.03) 4000/4"

"$BIN" partition "$tmp/g.libsvm" -k 4 --method mbp --mem-bound 2 --seeds 1 >"$tmp/mem.txt" \
    && fail "impossible memory bound must give a non-zero exit"
grep -q '^mbp: failed: mbp: memory bound 2 cannot be met (max |N(U_i)| = [0-9]*)$' "$tmp/mem.txt" \
    || fail "memory bound row: $(cat "$tmp/mem.txt")"

"$BIN" partition "$tmp/g.libsvm" -k 4 --method dppa --hash-bins 1 --seeds 1 --out "$tmp/p.txt" >/dev/null \
    || fail "dppa with hashing"
[ -s "$tmp/p.txt" ] || fail "no placement written"

# hashing statistics: no hash_* fields without hashing
grep -q '"hash_' "$tmp/rows.json" && fail "hash fields without --hash-bins: $(cat "$tmp/rows.json")"
"$BIN" partition "$tmp/g.libsvm" -k 4 --method dppa --hash-bins 64 --seeds 1 --json >"$tmp/hash.json" \
    || fail "dppa --hash-bins --json"
line=$(cat "$tmp/hash.json")
# the usual fields first, in their order, then the hashing ones
fields=$(echo "$line" | grep -o '"[a-z_]*":' | tr -d '":' | tr '\n' ' ')
want="method k available seeds m_max t_max t_sum load product m_max_impr t_max_impr t_sum_impr seconds"
want="$want seconds_min seconds_max cpu_seconds hash_bins hash_bins_used hash_edges hash_edge_ratio hash_density"
want="$want hash_mean_v_degree "
[ "$fields" = "$want" ] || fail "json fields: $fields"
num() { echo "$line" | sed "s/.*\"$1\":\([-0-9.e+]*\).*/\1/"; }
bins=$(num hash_bins) used=$(num hash_bins_used) edges=$(num hash_edges)
[ "$bins" = 64 ] || fail "hash_bins $bins"
# 4000 rows x 8 features = 32000 edges before hashing; a row keeps >= 1 edge
awk -v u="$used" -v e="$edges" -v r="$(num hash_edge_ratio)" -v d="$(num hash_density)" -v m="$(num hash_mean_v_degree)" \
    'BEGIN { exit !(u >= 1 && u <= 64 && e >= 4000 && e <= 32000 && (r - e / 32000)^2 < 1e-10 &&
                    (d - e / (4000 * 64))^2 < 1e-10 && (m - e / u)^2 < 1e-6) }' \
    || fail "inconsistent hashing statistics: $line"
# the Lua binding hashes with the same seed and must agree
cat >"$tmp/h.lua" <<LUA
local cr = require "crescent"
local _, m = assert(cr.partition{ graph = "$tmp/g.libsvm", k = 4, method = "dppa", hash_bins = 64, seed = 1 })
print(m.hashing.bins_used, m.hashing.edges)
LUA
lua_out=$("$BIN" run "$tmp/h.lua") || fail "lua hashing run"
[ "$lua_out" = "$(printf '%.0f\t%.0f' "$used" "$edges")" ] || fail "lua says '$lua_out', cli $used $edges"
# table: one hashing line right under dppa's row
"$BIN" partition "$tmp/g.libsvm" -k 4 --method dppa,parsa --hash-bins 64 --seeds 1 >"$tmp/hash.txt" || fail "table"
grep -A1 '^dppa ' "$tmp/hash.txt" | tail -1 | grep -qE "^ +hashing: 64 bins, [0-9]+ used, $(printf '%.0f' "$edges") edges \([0-9.]+% kept\), density [0-9.]+, mean bin degree [0-9.]+$" \
    || fail "hashing line: $(cat "$tmp/hash.txt")"
[ "$(grep -c 'hashing:' "$tmp/hash.txt")" -eq 1 ] || fail "hashing line only under dppa"
"$BIN" partition "$tmp/g.libsvm" -k 4 --method dppa --hash-bins -3 2>"$tmp/err.txt" && fail "negative --hash-bins accepted"
grep -q -- "--hash-bins: '-3' is not an integer" "$tmp/err.txt" || fail "bad --hash-bins message: $(cat "$tmp/err.txt")"
echo "ok"
