#!/usr/bin/env bash
# A hostile model script (tests/models/hostile.lua): io, os.execute,
# require, bytecode, string.dump, debug through metatables, package.loadlib,
# collectgarbage misuse and memory bombs are each refused with an error that
# names the script and line; no cr.core function reads /etc/passwd or writes
# a file; the job stays usable after each, and an uncaught one ends the job
# with exit 1. A worker spinning in pure Lua while another fails is stopped
# within seconds (the count hook sees the cancel).
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
echo original >"$TMP/victim"
printf '%%%%MatrixMarket matrix coordinate real general\n3 2 1\n1 1 1.5\n' >"$TMP/data.mmc"
printf '%%%%MatrixMarket matrix coordinate real general\n4 2 1\n1 1 1.5\n' >"$TMP/data2.mmc"
cp "$TMP/data.mmc" "$TMP/undeclared.mmc"
expect() { # probe-name pattern
    grep -q "^probe $1: error worker [0-9] (node [01]): tests/models/hostile.lua:[0-9]*: $2" "$TMP/out" \
        || fail "probe $1: expected an error matching '$2'"
}
for nodes in 1 2; do
    for bomb in rep30 grow; do
        timeout 120 "$CRESCENT_BIN" run "$JOBS/sandbox_model.lua" $nodes $bomb "$TMP/victim" "$TMP/data.mmc" \
            "$TMP/data2.mmc" "$TMP/undeclared.mmc" >"$TMP/out" 2>&1
        rc=$?
        cat "$TMP/out"
        [ $rc -eq 1 ] || fail "exit status $rc, expected 1"
        grep -q "not reached" "$TMP/out" && fail "the job went on after an uncaught memory bomb"
        grep -q "^crescent: worker [0-9] (node [01]): tests/models/hostile.lua:[0-9]*: model script exceeded 64 MB" \
            "$TMP/out" || fail "the memory bomb must end the job naming the script, line and the cap"
    done
    expect io "undefined global 'io'"
    expect os_execute "attempt to call a nil value (field 'execute')"
    expect require "undefined global 'require'"
    expect bytecode "load: only text chunks"
    expect bytecode_text "attempt to load a binary chunk"
    expect string_dump "attempt to call a nil value (field 'dump')"
    expect debug_mt "attempt to index a nil value (field 'debug')"
    expect debug "undefined global 'debug'"
    expect string_mt "the string metatable is read-only"
    expect loadlib "undefined global 'package'"
    expect gc_stop "collectgarbage: option 'stop' is not allowed"
    expect rep31 "resulting string too large"
    expect rep30 "model script exceeded 64 MB (option memory_mb)"
    expect grow "model script exceeded 64 MB (option memory_mb)"
    expect write_text "attempt to call a nil value (field 'write_text')"
    expect mf_load "kernels.mf_load: reading '/etc/passwd' is not allowed in a model script"
    expect text "data.text: reading '/etc/passwd' is not allowed in a model script"
    [ "$(grep -c '^sweep [0-9]: leaks=\[\]$' "$TMP/out")" -eq $((nodes * 2)) ] || fail "a cr.core function leaked data"
    grep -q "^allowed rows=3$" "$TMP/out" || fail "the data file named in the model's options must be readable"
    grep -q "^allowed by allow_read rows=4$" "$TMP/out" || fail "a file named in allow_read must be readable"
    grep -q "^undeclared: .*hostile.lua:[0-9]*: kernels.mm_header: reading '.*undeclared.mmc' is not allowed" "$TMP/out" \
        || fail "a file the job did not name must not be readable"
    grep -q "^bad memory_mb: .*model option 'memory_mb' must be an integer number of MB" "$TMP/out" \
        || fail "a bad memory_mb must be refused"
    grep -q "^bad allow_read: .*model option 'allow_read': '/dev' is not a regular file" "$TMP/out" \
        || fail "a bad allow_read must be refused"
    grep -q "^still usable: $((nodes * 2))$" "$TMP/out" || fail "the job must stay usable after refused probes"
    [ "$(cat "$TMP/victim")" = original ] || fail "the victim file was written"
done
for nodes in 1 2; do
    run_timed "$JOBS/sandbox_spin.lua" $nodes
    [ $rc -eq 1 ] || fail "exit status $rc, expected 1"
    grep -q "worker 0 (node 0): tests/models/hostile.lua:[0-9]*: worker 0 fails on purpose" "$TMP/out" \
        || fail "the first error must be reported"
    [ "$ms" -lt 10000 ] || fail "a spinning worker kept the job alive for $ms ms"
done
no_orphans || exit 1
