#!/usr/bin/env bash
# Range operations and sparse tables (docs/placement.md) on 1, 2 and 3
# nodes: push_range/pull_range values; a pull_range's bytes are a pull's of
# the same keys minus 8 per remote key plus 16 per remote node; sparse
# pushes from every worker, never-written keys read as their initial value
# and are not stored; a sparse checkpoint written on 2 nodes loads on 1 and
# 3 (and under range placement), one written on 1 loads on 2.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
{ echo '# crescent placement 1'; echo 'k 2'; echo 'examples 0'; echo 'keys 1000'
  for k in $(seq 0 999); do echo "v $k $(( (k * 7 + 3) % 11 < 4 ? 1 : 0 ))"; done; } >"$TMP/p.txt"
for a in "1 range" "2 range" "2 hash" "2 $TMP/p.txt" "3 hash"; do
    run_timed "$JOBS/range_sparse.lua" -- $a
    [ $rc -eq 0 ] || fail "range_sparse.lua $a: exit $rc"
    grep -q "^ok nodes=" "$TMP/out" || fail "range_sparse.lua $a did not finish"
done
job="$JOBS/sparse_ckpt.lua"
run_timed "$job" -- 2 save "$TMP/s2.ckpt"
[ $rc -eq 0 ] || fail "sparse save on 2 nodes"
grep -q "^rows [1-9][0-9]*,[1-9][0-9]*$" "$TMP/out" || fail "rows not spread over both nodes"
want=$(sed -n 's/^digest //p' "$TMP/out")
for a in "1 load $TMP/s2.ckpt" "3 load $TMP/s2.ckpt" "2 load $TMP/s2.ckpt range"; do
    run_timed "$job" -- $a
    [ $rc -eq 0 ] || fail "sparse load: $a"
    grep -q "^loaded rows 153$" "$TMP/out" || fail "loaded rows: $(grep rows "$TMP/out")"
    got=$(sed -n 's/^digest //p' "$TMP/out")
    [ "$got" = "$want" ] || fail "$a: digest $got, saved $want"
done
run_timed "$job" -- 1 save "$TMP/s1.ckpt"
run_timed "$job" -- 2 load "$TMP/s1.ckpt"
got=$(sed -n 's/^digest //p' "$TMP/out")
[ "$got" = "$want" ] || fail "written on 1 node, loaded on 2: digest $got, saved $want"
"$CRESCENT_BIN" ckpt "$TMP/s1.ckpt" >"$TMP/info" 2>&1 || fail "crescent ckpt on a sparse checkpoint: $(cat "$TMP/info")"
grep -q "table S: 153 keys x dim 3.*sparse" "$TMP/info" || fail "crescent ckpt: $(cat "$TMP/info")"
no_orphans || exit 1
exit 0
