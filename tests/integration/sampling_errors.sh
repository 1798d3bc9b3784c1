#!/usr/bin/env bash
# Bad sampling input: each case ends `crescent run` with a non-zero status
# and a one-line error naming the script and line (job script) or the
# worker, the model script and line (model), never a crash.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
J="$JOBS/sampling_bad.lua"
M="tests/models/sampling.lua"
expect() { # case nodes pattern
    local c=$1 n=$2 pat=$3
    run_timed "$J" -- "$n" "$c" >/dev/null
    [ $rc -ne 0 ] && [ $rc -lt 128 ] || fail "$c: exit status $rc (expected an error)"
    local first
    first=$(head -n 1 "$TMP/out")
    echo "$c: $first"
    echo "$first" | grep -q -- "$pat" || fail "$c: first line does not match '$pat'"
    grep -q "no error" "$TMP/out" && fail "$c: the script went on"
    return 0
}
expect unknown_table 1 "sampling_bad.lua:8: job:distribution{}: unknown table 'X' (the job has: E, R)"
expect short 1 "sampling_bad.lua:9: job:distribution{}: 'neg' over table 'E': weights has 2 entries for the 10 keys"
expect neg 1 "sampling_bad.lua:10: .*weights\[3\] is negative (-1)"
expect nan 1 "sampling_bad.lua:11: .*weights\[3\] is not a number (NaN)"
expect zero 1 "sampling_bad.lua:12: .*all weights are zero"
expect dup 1 "sampling_bad.lua:13: job:distribution{}: distribution 'neg' already exists"
expect kind 1 "sampling_bad.lua:14: job:distribution{}: kind must be \"uniform\" or \"weights\" (got zipf)"
expect m:undeclared 2 "worker [0-9] (node [0-9]): $M:74: prepare_sample: no distribution 'nope' (declared: neg2, neg)"
expect m:wrong_table 2 "$M:75: prepare_sample: distribution 'neg' is over table 'E', not table 'R'"
expect m:closed 1 "$M:79: pull_sample: the handle is closed"
expect m:too_many 2 "$M:82: pull_sample: the handle has 2 samples left, asked for 3"
no_orphans || exit 1
exit 0
