#!/usr/bin/env bash
# CLI conventions, the same for every command so that a user can learn each
# one from the command line itself: `crescent --version`, `crescent
# --help`, `crescent help [COMMAND]` and `crescent COMMAND --help` for every
# command and every dataset print on stdout, nothing on stderr, exit 0; the
# help is generated from the option tables, so it names each option and its
# range. Usage errors name the option, go to stderr and exit 2.
set -u
B=${CRESCENT_BIN:-./crescent}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }

ok() { # expected-stdout-substring args...  -> exit 0, stdout has it, stderr empty
    local want=$1; shift
    "$B" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
    [ $rc -eq 0 ] || fail "crescent $*: exit $rc, expected 0"
    [ ! -s "$tmp/err" ] || fail "crescent $*: wrote to stderr"
    grep -qF -- "$want" "$tmp/out" || fail "crescent $*: stdout lacks '$want'"
}
usage_error() { # expected-stderr-substring args...  -> exit 2, message on stderr, stdout empty
    local want=$1; shift
    "$B" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; local rc=$?
    [ $rc -eq 2 ] || fail "crescent $*: exit $rc, expected 2"
    [ ! -s "$tmp/out" ] || fail "crescent $*: wrote to stdout"
    grep -qF -- "$want" "$tmp/err" || fail "crescent $*: stderr lacks '$want'"
}

ok "crescent 0." --version
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "--version: one line expected"
printf 'print("crescent " .. require("crescent").version)\n' >"$tmp/v.lua"
[ "$("$CRESCENT_BIN" run "$tmp/v.lua")" = "$(cat "$tmp/out")" ] || fail "--version and cr.version differ"
for args in --help -h help; do
    ok "commands:" $args
    for c in run repl node data partition ckpt keygen; do grep -q "^  $c" "$tmp/out" || fail "$args does not list $c"; done
done

# every command, with -h and --help and through `help COMMAND`
for c in run repl node data partition ckpt keygen; do
    for h in --help -h; do ok "usage: crescent $c" $c $h; done
    ok "usage: crescent $c" help $c
done
# generated from the tables: options with their ranges and defaults
ok "--nodes N" run --help
grep -qF "(an integer in [1, 4096])" "$tmp/out" || fail "run --help: no range for --nodes"
grep -qF "(an integer in [0, 1024])" "$tmp/out" || fail "run --help: no range for --workers"
ok "--scheduler tcp://HOST:PORT" node --help
ok "--workers W" repl --help
ok "--pair-cap N" partition --help
grep -qF "(an integer in [0, 2147483647]" "$tmp/out" || fail "partition --help: no range for --pair-cap"
ok "--init-blocks A" partition --help
# every dataset of crescent data (generators, check, corpus builders)
for d in zipf-mf bipartite zipf-text check wordnet wordnet-graph gcide-text gcide-docs brown gcide-brown \
         wordnet-synonyms; do
    ok "usage: crescent data $d" data $d --help
    grep -q -- "--help" "$tmp/out" || fail "data $d --help: no --help line"
done
ok "--rank r" data zipf-mf --help
grep -qF "(an integer in [1, 100000]; required)" "$tmp/out" || fail "zipf-mf --help: rank range"
ok "--wordnet-dir DIR" data wordnet --help

# usage errors: one message naming the option, the usage line, exit 2
usage_error "unknown command 'frob'" frob
usage_error "usage: crescent COMMAND" 
usage_error "crescent run: unknown option '--frob'" run --frob x.lua
usage_error "crescent run: --nodes: '0' is not an integer in [1, 4096]" run x.lua --nodes 0
# the ranges are the core's (cr.job{} takes 4096 nodes and 1024 workers per
# node): past them a range error, inside them the machine's thread limit
usage_error "crescent run: --nodes: '4097' is not an integer in [1, 4096]" run x.lua --nodes 4097
usage_error "crescent run: --workers: '1025' is not an integer in [0, 1024]" run x.lua --workers 1025
usage_error "worker threads: this machine runs at most" run x.lua --nodes 2048
usage_error "worker threads: this machine runs at most" run x.lua --workers 512
usage_error "crescent run: --workers needs a value" run x.lua --workers
usage_error "crescent run: missing argument" run
usage_error "crescent node: --scheduler is required" node
usage_error "crescent node: unknown option '--bogus'" node --bogus x
usage_error "crescent keygen: unexpected argument 'x'" keygen x
usage_error "crescent ckpt: missing argument" ckpt
usage_error "crescent partition: -k is required" partition f.libsvm
usage_error "crescent partition: --select: 'x' is not one of examples, neighbours, neighbors" partition f -k 2 --select x
usage_error "crescent data zipf-mf: --noise: 'x' is not a number" data zipf-mf --noise x
usage_error "crescent data wordnet: --valid: '-1' is not an integer >= 0" data wordnet --out x --valid -1
# --x=V works like --x V
usage_error "crescent run: --seed: 'abc' is not an integer" run x.lua --seed=abc
"$B" run --nodes=1 --workers=1 /nonexistent.lua >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "nonexistent.lua: cannot open" "$tmp/err" || fail "--nodes=1 form not accepted"
# after JOB.lua, unknown options (and -h) are the script's
printf 'print("args", ...)\n' >"$tmp/args.lua"
"$B" run "$tmp/args.lua" --nodes 1 -h --mine 3 >"$tmp/out" 2>"$tmp/err" || fail "script arguments refused"
grep -qx "args	-h	--mine	3" "$tmp/out" || fail "script arguments: $(cat "$tmp/out")"
echo "cli help ok"
