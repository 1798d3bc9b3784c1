#!/usr/bin/env bash
# A hostile consistency policy (tests/policies/hostile.lua) on the workers,
# in its constructor and in may_proceed: each forbidden thing is refused
# with the policy's file and line, the job stays usable, nothing is written.
# The scheduler's pre-check (core.sandbox.check_policy) refuses the same
# things before anything is sent.
set -u
. "$CRESCENT_ROOT/tests/integration/jobs/lib.sh"
echo original >"$TMP/victim"
timeout 120 "$CRESCENT_BIN" run "$JOBS/sandbox_policy.lua" 2 "$TMP/victim" >"$TMP/out" 2>&1
rc=$?
grep -v "^epoch" "$TMP/out"
[ $rc -eq 0 ] || fail "exit status $rc, expected 0"
expect() { # probe-name pattern
    # load: the scheduler's check refuses the file before it is shipped;
    # decide: the same probe inside may_proceed, on a worker.
    grep -q "^policy $1 load: error bad policy file: tests/policies/hostile.lua:[0-9]*: $2" \
        "$TMP/out" || fail "policy $1 (load): expected the scheduler's refusal matching '$2'"
    grep -q "^policy $1 decide: error worker [0-9] (node [01]): tests/models/count.lua:[0-9]*: .*tests/policies/hostile.lua:[0-9]*: $2" \
        "$TMP/out" || fail "policy $1 (decide): expected an error matching '$2'"
}
expect io "undefined global 'io'"
expect os_execute "attempt to call a nil value (field 'execute')"
expect require "undefined global 'require'"
expect bytecode "load: only text chunks"
expect string_dump "attempt to call a nil value (field 'dump')"
expect debug_mt "attempt to index a nil value (field 'debug')"
expect loadlib "undefined global 'package'"
expect gc_stop "collectgarbage: option 'stop' is not allowed"
expect rep31 "resulting string too large"
expect rep30 "policy script exceeded [0-9]* MB (option memory_mb)"
expect model_globals "undefined global 'cr'"
grep -q "^after: steps=8$" "$TMP/out" || fail "the job must stay usable after refused policies"
[ "$(cat "$TMP/victim")" = original ] || fail "the victim file was written"

# The scheduler's check, as a job script calls it.
cat >"$TMP/check.lua" <<'LUA'
local core = require("crescent").core
local function try(body)
    local src = "return function(opts)\n" .. body .. "\nreturn {may_proceed = function() return true end} end"
    local ok, err = core.sandbox.check_policy(src, "p.lua", { victim = arg[1] }, 16)
    print(ok and "ok" or err)
end
try("local x = 1")
try("io.open('/etc/passwd')")
try("os.execute('echo pwned > ' .. opts.victim)")
try("require('os')")
try("load(string.dump(print))")
try("getmetatable('').__index.debug.sethook()")
try("package.loadlib('libc.so.6', 'system')")
try("collectgarbage('stop')")
try("local s = string.rep('x', 2^30)")
try("while true do end")
LUA
timeout 60 "$CRESCENT_BIN" run "$TMP/check.lua" "$TMP/victim" >"$TMP/out" 2>&1
cat "$TMP/out"
want=("ok"
      "bad policy file: p.lua:2: undefined global 'io'"
      "bad policy file: p.lua:2: attempt to call a nil value (field 'execute')"
      "bad policy file: p.lua:2: undefined global 'require'"
      "bad policy file: p.lua:2: attempt to call a nil value (field 'dump')"
      "bad policy file: p.lua:2: attempt to index a nil value (field 'debug')"
      "bad policy file: p.lua:2: undefined global 'package'"
      "bad policy file: p.lua:2: collectgarbage: option 'stop' is not allowed in a sandboxed script"
      "bad policy file: p.lua:2: policy script exceeded 16 MB (option memory_mb)"
      "bad policy file: p.lua:2: policy script ran longer than 5 s (stopped)")
for i in "${!want[@]}"; do
    [ "$(sed -n "$((i + 1))p" "$TMP/out")" = "${want[$i]}" ] || fail "check_policy line $((i + 1)): expected '${want[$i]}'"
done
[ "$(cat "$TMP/victim")" = original ] || fail "the victim file was written by the scheduler's check"

# Through `crescent run --policy`: lua/crescent checks with core.sandbox.check_policy.
printf 'os.execute("echo pwned > %s")\nreturn function(o) return {may_proceed = function() return true end} end\n' \
    "$TMP/victim" >"$TMP/evil.lua"
timeout 60 "$CRESCENT_BIN" run "$JOBS/count.lua" --policy "$TMP/evil.lua" >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ $rc -eq 1 ] || fail "--policy evil.lua: exit status $rc, expected 1"
grep -q "bad policy file: .*evil.lua:1: attempt to call a nil value (field 'execute')" "$TMP/out" \
    || fail "--policy evil.lua: expected the sandbox's refusal"
[ "$(cat "$TMP/victim")" = original ] || fail "the scheduler ran the policy's os.execute"
no_orphans || exit 1
