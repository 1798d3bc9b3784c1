#!/usr/bin/env bash
# crescent partition with mbp and dppa: both beat random on a planted graph,
# mbp keeps the balance bound, an impossible --mem-bound is a failure row
# with a clear message and a non-zero exit, dppa --hash-bins writes a
# placement whose keys share servers by bin.
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
echo "ok"
