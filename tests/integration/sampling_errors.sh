#!/usr/bin/env bash
# Bad sampling input: each case ends `crescent run` with a non-zero status
# and a one-line error naming the script and line (job script, scheme
# script) or the worker, the model script and line (model), never a crash:
# distributions over unknown tables or with bad weights, undeclared
# distributions, the wrong table, closed or overdrawn handles, handles
# whose samples do not fit the model's memory cap, scheme
# scripts with a syntax or a runtime error or a bad configuration, unknown
# scheme options and names (from job:sampling and from --sampling), level 4
# on a node without weight.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
J="$JOBS/sampling_bad.lua"
M="tests/models/sampling.lua"
expect() { # case nodes pattern [scheme file | run options...]
    local c=$1 n=$2 pat=$3
    shift 3
    if [ "${1:-}" = "--sampling" ]; then run_timed "$J" "$@" -- "$n" "$c" >/dev/null
    else run_timed "$J" -- "$n" "$c" "$@" >/dev/null; fi
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
expect m:undeclared 2 "worker [0-9] (node [0-9]): $M:91: prepare_sample: no distribution 'nope' (declared: neg2, neg)"
expect m:wrong_table 2 "$M:92: prepare_sample: distribution 'neg' is over table 'E', not table 'R'"
expect m:closed 1 "$M:96: pull_sample: the handle is closed"
expect m:too_many 2 "$M:99: pull_sample: the handle has 2 samples left, asked for 3"
expect m:hoard 1 "$M:104: prepare_sample: 16777216 samples need 641 MB, more than is left under the model script's cap of 256 MB (option memory_mb)"
S="sampling_bad.lua:19: job:sampling: bad sampling scheme"
printf 'return function(opts)\n  return { level = "bounded", pool = \n' >"$TMP/syntax.lua"
expect s:file 1 "$S: $TMP/syntax.lua:3: unexpected symbol near <eof>" "$TMP/syntax.lua"
printf '\nreturn function(opts)\n  local t = nil\n  return { level = t.x }\nend\n' >"$TMP/runtime.lua"
expect s:file 2 "$S: $TMP/runtime.lua:4: attempt to index a nil value (local 't')" "$TMP/runtime.lua"
printf 'return function(opts) return { level = 7 } end\n' >"$TMP/level.lua"
expect s:file 1 "$S $TMP/level.lua: the configuration: level must be conform, bounded, longterm, local or 1-4 (got 7)" "$TMP/level.lua"
printf 'return function(opts) return { level = "bounded", postpone = true } end\n' >"$TMP/pp.lua"
expect s:file 1 "$S $TMP/pp.lua: the configuration: postpone needs level longterm (3)" "$TMP/pp.lua"
printf 'return function(opts) return { tables = { E = { level = "local", wat = 1 } } } end\n' >"$TMP/wat.lua"
expect s:file 1 "$S $TMP/wat.lua: tables.E has an unknown field 'wat'" "$TMP/wat.lua"
printf 'return { level = 1 }\n' >"$TMP/nofn.lua"
expect s:file 1 "$S $TMP/nofn.lua: must return a constructor function(opts)" "$TMP/nofn.lua"
expect s:file 1 "sampling_bad.lua:19: job:sampling: sampling scheme file $TMP/none.lua: cannot open" "$TMP/none.lua"
# a scheme that forgets to check its options: one it never reads is refused by name
printf 'return function(opts) return { level = "bounded", pool = opts.pool or 10 } end\n' >"$TMP/lax.lua"
expect s:file 1 "$S $TMP/lax.lua: unknown option 'reuse' (the scheme never reads it)" "$TMP/lax.lua:pool=4,reuse=2"
expect s:unknown_opt 1 "sampling_bad.lua:20: job:sampling: bad sampling scheme: bounded: unknown option 'bogus' (options: pool, reuse)"
expect s:unknown_name 1 "sampling_bad.lua:21: job:sampling: unknown sampling scheme 'nosuch' (known: conform, bounded, longterm, local;"
expect s:bad_opt 1 "sampling_bad.lua:22: job:sampling: bad sampling scheme: bounded: pool must be an integer in \[1, 16777216\] (got 0)"
expect s:local_empty 2 "worker 1 (node 1): $M:101: prepare_sample: 'half' at level 4 (local): node 1 holds no key of table 'E' with a positive weight"
# from the command line: the error is at the script's cr.job{} line
expect none 1 "sampling_lib.lua:8: cr.job{}: sampling: unknown sampling scheme 'nosuch'" --sampling nosuch
expect none 1 "sampling_lib.lua:8: cr.job{}: sampling: bad sampling scheme: longterm: unknown option 'G'" --sampling longterm:G=3
no_orphans || exit 1
exit 0
