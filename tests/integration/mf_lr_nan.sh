#!/usr/bin/env bash
# Probe defect 7: a denormal learning rate (lr=1e-39, where the bold driver
# of examples/mf.lua used to end after ~1000 epochs) trains without NaN; a
# model whose loss turns NaN ends the job with an error naming the epoch and
# a non-zero exit, not "loss -nan" and exit 0.
set -u
. "${CRESCENT_ROOT:?}/tests/integration/jobs/lib.sh"
BIN=${CRESCENT_BIN:?} tmp=$TMP FAIL_LOG=$TMP/out
cd "$CRESCENT_ROOT"
"$BIN" data zipf-mf --rows 500 --cols 100 --cells 8000 --rank 4 --noise 0.1 --test-fraction 0.1 \
    --seed 3 --out "$tmp/d" >/dev/null || fail "data generation failed"
for nodes in 1 2; do
    timeout 120 "$BIN" run examples/mf.lua --nodes $nodes -- data="$tmp/d" epochs=2 dim=4 lr=1e-39 \
        >"$tmp/out" 2>&1 || fail "lr=1e-39 --nodes $nodes exited $?"
    grep -qi 'nan' "$tmp/out" && fail "lr=1e-39 --nodes $nodes: NaN in the output"
    grep -q '^mf result: test_rmse=[0-9]' "$tmp/out" || fail "lr=1e-39 --nodes $nodes: no result line"
done

# A diverging model: its loss is NaN from epoch 2 on.
cat >"$tmp/nan_model.lua" <<'LUA'
local M = {}
function M.init(ctx, opts) end
function M.epoch(ctx, args)
  ctx:clock()
  return { loss = args.epoch >= 2 and 0 / 0 or 1.0 }
end
return M
LUA
cat >"$tmp/nan_job.lua" <<'LUA'
local cr = require "crescent"
local job = cr.job{ nodes = 1, workers = 2 }
job:table{ name = "W", keys = 4, dim = 1 }
job:model(arg[1], {})
for epoch = 1, 3 do
  local r = job:epoch{ epoch = epoch }
  print("epoch", epoch, r.sum.loss)
end
print("finished")
LUA
timeout 60 "$BIN" run "$tmp/nan_job.lua" -- "$tmp/nan_model.lua" >"$tmp/out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "a NaN loss exited 0"
grep -q 'finished' "$tmp/out" && fail "the job went on after a NaN loss"
grep -q 'nan_job.lua:6: job:epoch: epoch 2: the loss is' "$tmp/out" || fail "the error does not name the epoch and line"
echo "ok"
