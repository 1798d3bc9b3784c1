#!/usr/bin/env bash
# --metrics FILE.jsonl: job:log appends one JSON object per line, with the
# policy added; --seed/--policy from the command line override the script.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" --metrics "$TMP/m.jsonl" --policy asp --seed 3 -- 2 >"$TMP/out" 2>&1 \
    || { cat "$TMP/out"; fail "run"; }
timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" --metrics "$TMP/m.jsonl" -- 2 >"$TMP/out" 2>&1 || fail "run 2"
cat "$TMP/m.jsonl"
[ "$(wc -l <"$TMP/m.jsonl")" -eq 2 ] || fail "expected 2 lines"
head -1 "$TMP/m.jsonl" | grep -q '^{"epoch":1,"max_gap":[0-9]*,"messages":[0-9]*,"note":"a \\"quoted\\"\\tline","policy":"asp","steps":8}$' \
    || fail "line 1"
tail -1 "$TMP/m.jsonl" | grep -q '"policy":"bsp"' || fail "line 2 policy"
if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$TMP/m.jsonl" || fail "not JSON"
fi
no_orphans || exit 1
