#!/usr/bin/env bash
# Logistic regression end to end (examples/logreg.lua, lua/models/logreg.lua)
# on LIBSVM data made here (3000 examples over 300 features, 8 of them
# informative and frequent, labels from a planted sparse linear model with noise):
#   * dbpg on 1 node and on 2 nodes (tau = 0): the objective falls every
#     epoch, test AUC > 0.85; the two runs hold the same examples and
#     aggregate every worker's gradient before each step, so they end at the
#     same objective (1e-4 relative; only the order of float sums differs);
#     2 nodes move remote bytes, 1 node none; on 2 nodes a placement file
#     of `crescent partition` (parsa) and hash placement end at the same
#     objective, and each epoch's remote bytes are 32 per remote (node,
#     key) pair plus 40 per message, as docs/models.md says;
#   * ftrl (1 and 2 nodes) and adagrad (l1=0): test logloss falls, AUC > 0.85;
#   * every JSONL record holds test_logloss, test_accuracy, test_auc,
#     bytes_remote and objective;
#   * bad input: a malformed LIBSVM line (file:line), an unknown optimizer,
#     a negative l1, adagrad with l1 > 0, a placement file for other data or
#     for another node count:
#     one clear line, non-zero exit.
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
export OPENBLAS_NUM_THREADS=1
fail() { echo "FAIL: $*"; exit 1; }
awk 'BEGIN { srand(11); F = 300
  for (j = 1; j <= 8; j++) w[j * 37] = (j % 2 ? 1.5 : -1.5)
  for (i = 0; i < 3000; i++) { s = 0; line = ""
    for (j = 1; j <= F; j++) if (rand() < ((j in w) ? 0.25 : 0.03)) { v = 1 + int(rand() * 3); line = line " " j ":" v; if (j in w) s += w[j] * v }
    s += 0.5 * (rand() + rand() + rand() - 1.5)
    print ((s > 0) ? "+1" : "-1") line } }' >"$tmp/d.svm"

run() { # name nodes args...
    local name=$1 n=$2
    shift 2
    timeout 120 "$BIN" run examples/logreg.lua --nodes "$n" --metrics "$tmp/$name.jsonl" -- \
        data="$tmp/d.svm" quiet=1 "$@" >"$tmp/$name.out" 2>&1 ||
        { tail -5 "$tmp/$name.out"; fail "$name exited non-zero"; }
    grep "^logreg result" "$tmp/$name.out" >/dev/null || fail "$name: no result line"
    lua5.4 - "$tmp/$name.jsonl" "$name" "$n" <<'EOF' || fail "$name: records"
local cjson = require "cjson"
local recs = {}
for l in io.lines(arg[1]) do recs[#recs + 1] = cjson.decode(l) end
assert(#recs >= 5, #recs .. " records")
for i, r in ipairs(recs) do
  for _, k in ipairs { "test_logloss", "test_accuracy", "test_auc", "bytes_remote", "objective" } do
    assert(type(r[k]) == "number", ("record %d: no %s"):format(i, k))
  end
  if arg[3] == "1" then assert(r.bytes_remote == 0, "1 node: remote bytes " .. r.bytes_remote) end
  if arg[3] == "2" then assert(r.bytes_remote > 0, "2 nodes: no remote bytes") end
end
local a, z = recs[1], recs[#recs]
assert(z.test_logloss < a.test_logloss, ("test logloss %.4f -> %.4f: did not fall"):format(a.test_logloss, z.test_logloss))
assert(z.objective < a.objective, "the objective did not fall")
assert(z.test_auc > 0.85, ("test AUC %.4f <= 0.85"):format(z.test_auc))
if z.optimizer == "dbpg" then
  for i = 2, #recs do
    assert(recs[i].objective <= recs[i - 1].objective * (1 + 1e-6), ("objective rose at epoch %d"):format(i))
  end
end
print(("ok: %s: objective %.2f -> %.2f, test logloss %.4f -> %.4f, AUC %.4f"):format(arg[2], a.objective, z.objective,
  a.test_logloss, z.test_logloss, z.test_auc))
io.open(arg[1] .. ".final", "w"):write(("%.10g\n"):format(z.objective))
EOF
}
run dbpg1 1 optimizer=dbpg epochs=12 l1=1 blocks=4
run dbpg2 2 optimizer=dbpg epochs=12 l1=1 blocks=4
awk -v a="$(cat "$tmp/dbpg1.jsonl.final")" -v b="$(cat "$tmp/dbpg2.jsonl.final")" \
    'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * a) }' ||
    fail "dbpg: 1 node ends at $(cat "$tmp/dbpg1.jsonl.final"), 2 nodes at $(cat "$tmp/dbpg2.jsonl.final")"
# the same examples and every gradient summed before each step, wherever
# the weights and the examples are: a parsa placement file (its u lines
# place the examples, its v lines the weights) and hash placement end at
# the range runs' objective
"$BIN" partition "$tmp/d.svm" -k 2 --method parsa --seeds 1 --out "$tmp/d.place" >/dev/null 2>&1 || fail "crescent partition"
run dbpg_file 2 optimizer=dbpg epochs=12 l1=1 blocks=4 placement="$tmp/d.place"
run dbpg_hash 2 optimizer=dbpg epochs=12 l1=1 blocks=4 placement=hash
for p in file hash; do
    awk -v a="$(cat "$tmp/dbpg1.jsonl.final")" -v b="$(cat "$tmp/dbpg_$p.jsonl.final")" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * a) }' ||
        fail "dbpg placement $p ends at $(cat "$tmp/dbpg_$p.jsonl.final"), range at $(cat "$tmp/dbpg1.jsonl.final")"
done
# the traffic is what the placement predicts: every epoch moves 32 bytes
# per (node, key) pair whose key lives on the other node (a push of the
# key and (g, u), a pull of the key and (w, r)) plus 40 bytes a message
# (KKT filter off, every example training, 1 worker per node)
timeout 120 "$BIN" run examples/logreg.lua --nodes 2 --metrics "$tmp/traffic.jsonl" -- data="$tmp/d.svm" quiet=1 \
    heldout=0 delta=-1 epochs=2 blocks=4 placement="$tmp/d.place" >"$tmp/traffic.out" 2>&1 ||
    { tail -5 "$tmp/traffic.out"; fail "traffic run exited non-zero"; }
# (CRESCENT_LUA: under `make asan`, lua5.4 with the sanitizer preloaded,
# which the sanitized core module needs; tests/run.sh)
${CRESCENT_LUA:-lua5.4} - "$tmp/d.svm" "$tmp/d.place" "$tmp/traffic.jsonl" <<'EOF' || fail "traffic: bytes not as predicted"
local K = require("crescent.core").kernels
local cjson = require "cjson"
local owner = {}
for l in io.lines(arg[2]) do
  local k, m = l:match("^v (%d+) (%d+)")
  if k then owner[tonumber(k)] = tonumber(m) end
end
local pairs_ = 0
for n = 0, 1 do
  local d = assert(K.logreg_load(arg[1], { heldout = 0, split = "train", placement = arg[2], node = n, nodes = 2 }))
  local ks = d:keys()
  for i = 1, #ks do if owner[ks:get(i)] ~= n then pairs_ = pairs_ + 1 end end
end
for l in io.lines(arg[3]) do
  local r = cjson.decode(l)
  local want = 32 * pairs_ + 40 * r.messages
  assert(r.bytes_remote == want, ("epoch %d: %d remote bytes, predicted 32 x %d + 40 x %d = %d"):format(r.epoch,
    r.bytes_remote, pairs_, r.messages, want))
end
print(("ok: traffic: 32 x %d remote (node, key) pairs + 40 x messages, every epoch"):format(pairs_))
EOF
run ftrl1 1 optimizer=ftrl epochs=6 l1=1 batch=200
run ftrl2 2 optimizer=ftrl epochs=6 l1=1 batch=200
run ada 1 optimizer=adagrad epochs=6 l1=0 l2=1 batch=200

# tol=: a rising objective stops the run and says so (on stderr, even
# quiet); a converged one says it fell by at most tol
timeout 60 "$BIN" run examples/logreg.lua -- data="$tmp/d.svm" lr=20 blocks=1 tol=1e-6 epochs=20 eval=0 quiet=1 \
    >"$tmp/rise.out" 2>&1 || { cat "$tmp/rise.out"; fail "rise: exited non-zero"; }
grep -q "the objective rose from .* in epoch 2: stopped" "$tmp/rise.out" || { cat "$tmp/rise.out"; fail "rise: not reported"; }
grep -q "epochs=2 " "$tmp/rise.out" || { cat "$tmp/rise.out"; fail "rise: did not stop at epoch 2"; }
timeout 60 "$BIN" run examples/logreg.lua -- data="$tmp/d.svm" tol=1e-2 epochs=40 eval=0 >"$tmp/tol.out" 2>&1 ||
    { cat "$tmp/tol.out"; fail "tol: exited non-zero"; }
grep -q "fell by at most tol = 0.01 of itself" "$tmp/tol.out" && ! grep -q "rose" "$tmp/tol.out" ||
    { cat "$tmp/tol.out"; fail "tol: no convergence stop"; }
echo "ok: tol stops (rise reported, convergence)"

bad() { # name expected-message args...
    local name=$1 want=$2
    shift 2
    if timeout 60 "$BIN" run examples/logreg.lua "$@" >"$tmp/$name.out" 2>&1; then fail "$name: exited 0"; fi
    grep -q -- "$want" "$tmp/$name.out" || { cat "$tmp/$name.out"; fail "$name: expected '$want'"; }
    [ "$(grep -c . "$tmp/$name.out")" -le 3 ] || { cat "$tmp/$name.out"; fail "$name: not a short message"; }
    grep -q "stack traceback" "$tmp/$name.out" && fail "$name: a traceback"
    echo "ok: $name"
}
{ head -5 "$tmp/d.svm"; echo "+1 3:1 2:x"; } >"$tmp/bad.svm"
bad malformed "bad.svm:6:" -- data="$tmp/bad.svm"
bad optimizer "unknown optimizer 'sgdx'" -- data="$tmp/d.svm" optimizer=sgdx
bad negative_l1 "l1 must be >= 0" -- data="$tmp/d.svm" l1=-1
bad adagrad_l1 "adagrad has no L1" -- data="$tmp/d.svm" optimizer=adagrad l1=1
printf '# crescent placement 1\nk 1\nexamples 2\nkeys 3\nu 0 0\nu 1 0\nv 0 0\nv 1 0\nv 2 0\n' >"$tmp/other.place"
bad placement "other.place" -- data="$tmp/d.svm" placement="$tmp/other.place"
bad placement_nodes "placement for 2 machines, the job has 1 nodes" --nodes 1 -- data="$tmp/d.svm" placement="$tmp/d.place"
echo "logreg_small: all ok"
