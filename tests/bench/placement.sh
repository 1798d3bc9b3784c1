#!/usr/bin/env bash
# Measured traffic against the partition metrics' prediction, to show that
# the cost the partitioners minimize is the traffic a job pays
# (docs/placement.md "Measured traffic"): sparse logistic regression
# (examples/logreg.lua, DBPG) on gcide-docs, 2 nodes x 1 worker, every
# example training (heldout=0), KKT filter off (delta=-1), under each
# placement: range, hash, and the files `crescent partition -k 2 --out` writes
# for random, parsa, tsh2, dppa and metis (seed 1).
#
#   predicted  16 x T_sum (T_sum from cr.partition.metrics on the placement
#              the job runs on: tests/bench/placement_tsum.lua). DBPG moves
#              32 bytes a remote (worker, key) pair and epoch (docs/models.md
#              "Sparse logistic regression"), and T_sum counts each remote
#              pair twice (at the machine that needs the key and at its
#              owner). Message headers (40 bytes each) are not predicted.
#   measured   bytes_remote of each epoch (job:stats(), the JSONL records),
#              median over EPOCHS epochs.
#   target     measured / predicted within 5% for every placement; parsa's
#              bytes <= 0.3x range's (the issue's figure; printed, checked).
# Then key caching (filters=key_cache, docs/filters.md): bytes of epochs 2+
# against the same run without it, range placement (target: >= 40% fewer).
set -u
. "$(dirname "$0")/lib.sh" # median, ratio, bench_env
bench_env "$0"
EPOCHS=${EPOCHS:-3}
DATA=${PLACEMENT_DATA:-data/gcide.svm}
METHODS=${METHODS:-random parsa tsh2 dppa metis}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
if [ ! -f "$DATA" ]; then make data >/dev/null || { echo "placement bench: make data failed"; exit 1; }; fi
echo "placement bench: $DATA, 2 nodes x 1 worker, $EPOCHS epochs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

"$BIN" partition "$DATA" -k 2 --method "$(echo $METHODS | tr ' ' ,)" --seeds 1 --out "$tmp/p" >"$tmp/partition.txt" ||
    { cat "$tmp/partition.txt"; echo "placement bench: crescent partition failed"; exit 1; }

# run NAME PLACEMENT [extra options]: the JSONL records in $tmp/NAME.jsonl
run() {
    local name=$1 pl=$2
    shift 2
    "$BIN" run examples/logreg.lua --nodes 2 --workers 1 --metrics "$tmp/$name.jsonl" -- data="$DATA" \
        placement="$pl" heldout=0 delta=-1 epochs="$EPOCHS" quiet=1 "$@" >"$tmp/$name.out" 2>&1 ||
        { tail -5 "$tmp/$name.out"; echo "placement bench: the $name run failed"; return 1; }
}
# field NAME FIELD [first epoch]: one value per epoch record
field() {
    lua5.4 - "$tmp/$1.jsonl" "$2" "${3:-1}" <<'LUA'
local cjson = require "cjson"
for line in io.lines(arg[1]) do
  local r = cjson.decode(line)
  if r.epoch and r.epoch >= tonumber(arg[3]) and r[arg[2]] then print(string.format("%.0f", r[arg[2]])) end
end
LUA
}

printf '%-8s %10s %12s %12s %9s %12s %8s\n' placement T_sum predicted measured messages headers meas/pred
range_bytes=0 parsa_bytes=0
for pl in range hash $METHODS; do
    case $pl in range | hash) arg=$pl ;; *) arg=$tmp/p.$pl ;; esac
    tsum=$(lua5.4 tests/bench/placement_tsum.lua "$DATA" 2 "$arg" | sed -n 's/^t_sum //p')
    run "$pl" "$arg" || { fail=1; continue; }
    meas=$(field "$pl" bytes_remote | median)
    msgs=$(field "$pl" messages | median)
    pred=$((16 * tsum))
    r=$(awk -v m="$meas" -v p="$pred" 'BEGIN { printf "%.4f", m / p }')
    printf '%-8s %10d %12d %12d %9d %12d %8s\n' "$pl" "$tsum" "$pred" "$meas" "$msgs" $((40 * msgs)) "$r"
    awk -v r="$r" 'BEGIN { exit !(r >= 0.95 && r <= 1.05) }' || { echo "  $pl: measured/predicted $r outside [0.95, 1.05]"; fail=1; }
    [ "$pl" = range ] && range_bytes=$meas
    [ "$pl" = parsa ] && parsa_bytes=$meas
done
pr=$(ratio "$parsa_bytes" "$range_bytes")
if awk -v r="$pr" 'BEGIN { exit !(r != "nan" && r <= 0.3) }'; then echo "  parsa / range bytes: ${pr}x (target <= 0.3x) ok"
else echo "  parsa / range bytes: ${pr}x (target <= 0.3x) BELOW TARGET (the best partition of gcide-docs in two still shares most words: docs/placement.md)"; fail=1; fi

# key caching: epochs 2.. of range placement with and without it
run kc range filters=key_cache || fail=1
plain=$(field range bytes_remote 2 | median)
cached=$(field kc bytes_remote 2 | median)
cut=$(awk -v a="$plain" -v b="$cached" 'BEGIN { if (a > 0) printf "%.2f", 1 - b / a; else print "nan" }')
echo "key caching, range, epochs 2-$EPOCHS: $cached bytes an epoch against $plain without: $(awk -v c="$cut" 'BEGIN { printf "%.0f", c * 100 }')% fewer"
if awk -v c="$cut" 'BEGIN { exit !(c != "nan" && c >= 0.40) }'; then echo "  key caching cut: ${cut} (target >= 0.40) ok"
else echo "  key caching cut: ${cut} (target >= 0.40) BELOW TARGET"; fail=1; fi
exit $fail
