#!/usr/bin/env bash
# job:load refuses a checkpoint whose second table does not match the job,
# and leaves the first table as it was (no half-restored job).
set -u
BIN=${CRESCENT_BIN:?}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/job.lua" <<LUA
local cr = require "crescent"
local job = cr.job { nodes = 1, workers = 1, seed = 1 }
local dimB = tonumber(arg[1])
local A = job:table { name = "A", keys = 10, dim = 4, init = cr.init.normal(0, 1) }
local B = job:table { name = "B", keys = 5, dim = dimB, init = cr.init.normal(0, 1) }
if arg[2] == "save" then job:save("$TMP/c.ckpt"); return end
A:set(3, { 7, 7, 7, 7 })
local ok, err = pcall(job.load, job, "$TMP/c.ckpt")
assert(not ok, "mismatched checkpoint accepted")
print(err)
assert(err:find("table 'B' has 5 keys x dim 3, the job's has 5 x 2", 1, true), err)
local row = A:get(3)
for j = 1, 4 do assert(row[j] == 7, "table A was changed by the refused load") end
print("A unchanged")
LUA
timeout 60 "$BIN" run "$TMP/job.lua" -- 3 save || { echo "FAIL: save"; exit 1; }
out=$(timeout 60 "$BIN" run "$TMP/job.lua" -- 2 load 2>&1) || { echo "$out"; echo "FAIL: load job"; exit 1; }
echo "$out"
echo "$out" | grep -q "A unchanged" || { echo "FAIL"; exit 1; }
