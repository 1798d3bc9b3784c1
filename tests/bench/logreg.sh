#!/usr/bin/env bash
# Sparse logistic regression (examples/logreg.lua, DBPG) on gcide-docs
# (data/gcide.svm from `make data`; 20% of the examples held out by the
# example's split, split_seed 1), two parts in one run:
#
# 1. LIBLINEAR (liblinear-tools, installed here if missing):
#    `liblinear-train -s 6 -c C` (L1-regularized logistic regression, no
#    bias term, its default stopping tolerance) on the same training split,
#    written out by crescent's loader (kernels.logreg_load, logreg_save), against
#    crescent with l1 = 1/C (LIBLINEAR minimizes |w|_1 + C sum(loss), i.e.
#    C x crescent's sum(loss) + l1 |w|_1). Compared:
#      objective   crescent's final objective x C / LIBLINEAR's "Objective
#                  value" (target <= 1.01);
#      test AUC    both scored by the same code (cr.eval.auc) on the same
#                  held-out examples: LIBLINEAR's from liblinear-predict -b 1
#                  probabilities, crescent's from its margins (target >= 0.99x);
#      time        training only on both sides (target crescent <= 1.0x):
#                  crescent's train_seconds (the sum of its epochs' times,
#                  evaluation excluded; data loading, job start and the
#                  registration pass not counted) on 2 workers (--nodes
#                  NODES --workers WPN, 1 x 2 by default); LIBLINEAR's
#                  wall time minus the wall time of the same command with
#                  -e 1e9 (it loads the file, computes the first gradient and
#                  stops after 0 iterations), i.e. its solver's time. Both
#                  totals (with loading and start) are printed too.
#    Medians of RUNS runs (default 3) of each number, at C in CS ("1 0.1").
#    crescent runs DBPG with BLOCKS blocks (64, balanced), rho RHO (0.1), step
#    LR (1.5; the trust region keeps a step above 1 stable) until an epoch
#    lowers the objective by at most TOL (5e-4) of itself, at most EPOCHS
#    (40) epochs: like LIBLINEAR's, its stopping test counts in its
#    training time (examples/logreg.lua tol=).
# 2. The bounded-delay trade-off (thesis ch. 6): DBPG on 2 nodes x 1 worker,
#    l1 = 1, TAU_BLOCKS blocks (64), TAU_EPOCHS epochs (20), for tau = 0, 1,
#    4, 16 (ssp staleness in blocks): the test logloss against the training
#    time (cumulative epoch seconds), from each run's JSONL records.
set -u
. "$(dirname "$0")/lib.sh" # median, ratio, bench_env
bench_env "$0"
RUNS=${RUNS:-3}
CS=${CS:-1 0.1}
EPOCHS=${EPOCHS:-40}
TOL=${TOL:-5e-4}
BLOCKS=${BLOCKS:-64}
RHO=${RHO:-0.1}
LR=${LR:-1.5}
NODES=${NODES:-1}
WPN=${WPN:-2}
TAU_BLOCKS=${TAU_BLOCKS:-64}
TAU_EPOCHS=${TAU_EPOCHS:-20}
DATA=${LOGREG_DATA:-data/gcide.svm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

if [ ! -f "$DATA" ]; then make data >/dev/null || { echo "logreg bench: make data failed"; exit 1; }; fi
[ -f "$DATA" ] || { echo "logreg bench: $DATA is missing (make data)"; exit 1; }
if ! command -v liblinear-train >/dev/null; then
    apt-get install -y -qq liblinear-tools >/dev/null 2>&1 || { echo "logreg bench: cannot install liblinear-tools"; exit 1; }
fi
echo "logreg bench: $DATA, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# The same split as examples/logreg.lua (heldout 0.2, split_seed 1).
lua5.4 - "$DATA" "$tmp" <<'EOF' || { echo "logreg bench: cannot write the split"; exit 1; }
local K = require("crescent.core").kernels
for _, sp in ipairs { "train", "test" } do
  local d = assert(K.logreg_load(arg[1], { heldout = 0.2, seed = 1, split = sp }))
  assert(K.logreg_save(d, arg[2] .. "/" .. sp .. ".svm"))
end
EOF
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
fld() { sed -n "s/^logreg result: .*$2=\([0-9.e+-]*\).*/\1/p" "$1"; }
# AUC of LIBLINEAR's probabilities of +1 (liblinear-predict -b 1) by cr.eval.auc
auc_of() {
    lua5.4 - "$1" "$tmp/test.svm" <<'EOF'
local cr = require "crescent"
local f = io.open(arg[1])
local hdr = f:read("l")
local labels = {}
for x in hdr:gmatch("%S+") do labels[#labels + 1] = x end -- "labels 1 -1"
local col
for i = 2, #labels do if tonumber(labels[i]) == 1 then col = i end end
local s, y = {}, {}
for l in f:lines() do
  local t = {}
  for x in l:gmatch("%S+") do t[#t + 1] = tonumber(x) end
  s[#s + 1] = t[col]
end
for l in io.lines(arg[2]) do y[#y + 1] = tonumber(l:match("^(%S+)")) end
assert(#s == #y, "predictions and labels differ in number")
print(("%.6f"):format(cr.eval.auc(s, y)))
EOF
}

for C in $CS; do
    l1=$(awk -v c="$C" 'BEGIN { printf "%.10g", 1 / c }')
    : >"$tmp/ll"
    for r in $(seq "$RUNS"); do
        t0=$(now)
        liblinear-train -s 6 -c "$C" "$tmp/train.svm" "$tmp/model" >"$tmp/ll.out" 2>&1 || { echo "liblinear failed"; exit 1; }
        total=$(since "$t0")
        t0=$(now)
        liblinear-train -s 6 -c "$C" -e 1e9 "$tmp/train.svm" "$tmp/model0" >/dev/null 2>&1
        load=$(since "$t0")
        obj=$(sed -n 's/^Objective value = //p' "$tmp/ll.out")
        liblinear-predict -b 1 "$tmp/test.svm" "$tmp/model" "$tmp/pred" >/dev/null
        echo "$total $load $(awk -v a="$total" -v b="$load" 'BEGIN { printf "%.3f", a - b }') $obj $(auc_of "$tmp/pred")" >>"$tmp/ll"
    done
    : >"$tmp/cr"
    for r in $(seq "$RUNS"); do
        t0=$(now)
        "$BIN" run examples/logreg.lua --nodes "$NODES" --workers "$WPN" -- data="$DATA" optimizer=dbpg l1="$l1" \
            epochs="$EPOCHS" tol="$TOL" blocks="$BLOCKS" rho="$RHO" lr="$LR" eval=0 quiet=1 >"$tmp/cr.out" 2>"$tmp/cr.err" ||
            { echo "logreg bench: crescent failed:"; tail -5 "$tmp/cr.err"; exit 1; }
        total=$(since "$t0")
        echo "$total $(fld "$tmp/cr.out" train_seconds) $(fld "$tmp/cr.out" objective) $(fld "$tmp/cr.out" test_auc) $(fld "$tmp/cr.out" epochs)" >>"$tmp/cr"
    done
    col() { awk -v c="$2" '{ print $c }' "$1" | median; }
    ll_total=$(col "$tmp/ll" 1) ll_train=$(col "$tmp/ll" 3) ll_obj=$(col "$tmp/ll" 4) ll_auc=$(col "$tmp/ll" 5)
    cr_total=$(col "$tmp/cr" 1) cr_train=$(col "$tmp/cr" 2) cr_obj=$(col "$tmp/cr" 3) cr_auc=$(col "$tmp/cr" 4)
    cr_ep=$(col "$tmp/cr" 5)
    cr_obj_c=$(awk -v o="$cr_obj" -v c="$C" 'BEGIN { printf "%.2f", o * c }')
    echo "C=$C (l1=$l1), medians of $RUNS:"
    echo "  liblinear: objective $ll_obj  test AUC $ll_auc  training ${ll_train}s  (with loading ${ll_total}s)"
    echo "  crescent:  objective $cr_obj_c (x C)  test AUC $cr_auc  training ${cr_train}s  (with start and loading ${cr_total}s)" \
         "[$NODES x $WPN, $cr_ep epochs (tol $TOL), $BLOCKS blocks, rho $RHO, lr $LR]"
    ro=$(awk -v a="$cr_obj_c" -v b="$ll_obj" 'BEGIN { printf "%.4f", a / b }')
    ra=$(awk -v a="$cr_auc" -v b="$ll_auc" 'BEGIN { printf "%.4f", a / b }')
    rt=$(ratio "$cr_train" "$ll_train")
    awk -v r="$ro" 'BEGIN { exit !(r <= 1.01) }' && v=ok || { v="ABOVE TARGET"; fail=1; }
    echo "  objective crescent/liblinear: ${ro}x (target <= 1.01) $v"
    awk -v r="$ra" 'BEGIN { exit !(r >= 0.99) }' && v=ok || { v="BELOW TARGET"; fail=1; }
    echo "  test AUC crescent/liblinear: ${ra}x (target >= 0.99) $v"
    awk -v r="$rt" 'BEGIN { exit !(r != "nan" && r <= 1.0) }' && v=ok || { v="ABOVE TARGET"; fail=1; }
    echo "  training time crescent/liblinear: ${rt}x (target <= 1.0) $v"
done

echo "bounded delay: dbpg, 2 nodes x 1 worker, l1 1, $TAU_BLOCKS blocks, $TAU_EPOCHS epochs; test logloss at the training time"
for tau in 0 1 4 16; do
    "$BIN" run examples/logreg.lua --nodes 2 --workers 1 --metrics "$tmp/tau$tau.jsonl" -- data="$DATA" optimizer=dbpg \
        l1=1 tau="$tau" blocks="$TAU_BLOCKS" epochs="$TAU_EPOCHS" quiet=1 >"$tmp/tau.out" 2>"$tmp/tau.err" ||
        { echo "logreg bench: tau=$tau failed:"; tail -5 "$tmp/tau.err"; exit 1; }
done
lua5.4 - "$tmp" "$TAU_EPOCHS" <<'EOF'
local cjson = require "cjson"
local marks = { 1, 2, 5, 10, 15, 20, 30, 40 }
io.write("| tau |")
local shown = {}
for _, e in ipairs(marks) do if e <= tonumber(arg[2]) then shown[#shown + 1] = e; io.write((" epoch %d |"):format(e)) end end
io.write(" final objective |\n|---|")
for _ = 1, #shown do io.write("---|") end
io.write("---|\n")
for _, tau in ipairs { 0, 1, 4, 16 } do
  local recs = {}
  for l in io.lines(arg[1] .. "/tau" .. tau .. ".jsonl") do recs[#recs + 1] = cjson.decode(l) end
  io.write(("| %d |"):format(tau))
  for _, e in ipairs(shown) do
    local r = recs[e]
    io.write((" %.4f @ %.2fs |"):format(r.test_logloss, r.train_seconds))
  end
  io.write((" %.1f |\n"):format(recs[#recs].objective))
end
EOF
echo "logreg bench: $([ $fail = 0 ] && echo "all targets met" || echo "TARGETS MISSED")"
exit 0
