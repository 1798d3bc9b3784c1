#!/usr/bin/env bash
# examples/kge.lua on bad input: each case exits non-zero with a one-line
# message naming the file and line (or the option), prints no result line
# and leaves no node behind: an unknown model name, a test triple naming an
# entity train lacks, a .del triple with an id past the dictionary, a line
# with two fields, a missing data directory, a directory without triples,
# and lua/models/kge.lua's own check of the model name (via a job script).
set -u
BIN=${CRESCENT_BIN:?} ROOT=${CRESCENT_ROOT:?}
. "$ROOT/tests/integration/jobs/lib.sh"
cd "$ROOT"
if "$BIN" run /dev/null 2>&1 | grep -q "not built yet"; then
    echo "crescent run is not built in this tree yet"; exit 77
fi
export OPENBLAS_NUM_THREADS=1
bash tests/integration/jobs/kge_graph.sh "$TMP/g" 1 || fail "fixture"
expect() { # message-pattern, then crescent run arguments
    local want=$1
    shift
    run_timed "$@"
    [ $rc -ne 0 ] || fail "exit 0 for: $*"
    grep -q -- "$want" "$TMP/out" || fail "no message '$want' for: $*"
    # one line (+ run_timed's own), except that errors raised in a worker come with its traceback
    [ -n "${TRACE:-}" ] || [ "$(grep -c . "$TMP/out")" -le 2 ] || fail "more than one message line for: $*"
    grep -q "^kge result" "$TMP/out" && fail "a result line after an error for: $*"
    no_orphans || fail "nodes left behind after: $*"
}
expect "examples/kge.lua: unknown model 'complx' (complex, distmult, transe_l1, transe_l2, rescal)" \
    examples/kge.lua -- data="$TMP/g" model=complx
cp -r "$TMP/g" "$TMP/unknown"
printf 'e1\tsame\tnobody\n' >>"$TMP/unknown/test.txt"
n=$(wc -l <"$TMP/unknown/test.txt")
expect "$TMP/unknown/test.txt:$n: unknown object 'nobody'" examples/kge.lua --nodes 2 -- data="$TMP/unknown" epochs=1
cp -r "$TMP/g" "$TMP/short"
printf 'e1\tsame\n' >>"$TMP/short/valid.txt"
n=$(wc -l <"$TMP/short/valid.txt")
expect "$TMP/short/valid.txt:$n: expected 3 tab-separated fields" examples/kge.lua -- data="$TMP/short" epochs=1
mkdir -p "$TMP/del"
printf '0\ta\n1\tb\n' >"$TMP/del/entity_ids.del"
printf '0\tr\n' >"$TMP/del/relation_ids.del"
printf '0\t0\t1\n1\t0\t2\n' >"$TMP/del/train.del"
expect "$TMP/del/train.del:2: object id 2 out of range 0..1" examples/kge.lua -- data="$TMP/del" epochs=1
expect "examples/kge.lua: data directory '$TMP/none' not found" examples/kge.lua -- data="$TMP/none"
mkdir -p "$TMP/empty"
expect "examples/kge.lua: no training triples in '$TMP/empty'" examples/kge.lua -- data="$TMP/empty"
# the model script checks the name too (a job script of one's own)
cat >"$TMP/job.lua" <<LUA
local cr = require "crescent"
local job = cr.job { nodes = 1, workers = 1 }
job:table { name = "E", keys = 300, dim = 4, optimizer = cr.optim.adagrad { lr = 0.1 } }
job:table { name = "R", keys = 2, dim = 4, optimizer = cr.optim.adagrad { lr = 0.1 } }
job:model("kge", { model = "holE", train = "$TMP/g/train.txt", sampling = false })
LUA
TRACE=1 expect "worker 0 (node 0): kge: unknown model 'holE'" "$TMP/job.lua"
echo ok
