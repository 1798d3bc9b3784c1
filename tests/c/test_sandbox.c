/* The sandbox of model and policy scripts (src/lua/l_sandbox.c,
 * l_sandbox_core.c): each thing a hostile script tries is refused or
 * stopped with a clear error, and the state stays usable afterwards. */
#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <sys/wait.h>

#include "base/cr_time.h"
#include "cr_test.h"
#include "lua/l_sandbox.h"
#include "lua/l_sandbox_core.h"
#include "lua/l_worker_serial.h"

static char msg[CR_SANDBOX_MSG_MAX];

/* Run src as chunk "=probe"; msg gets the error message or the result as a
 * string. Returns the status. */
static int run(lua_State *L, const char *src) {
    cr_sandbox_reset(L);
    int rc = cr_sandbox_load(L, src, strlen(src), "=probe", 0);
    if (rc == LUA_OK) rc = lua_pcall(L, 0, 1, 0);
    if (rc != LUA_OK) cr_sandbox_message(L, rc, msg, sizeof msg);
    else snprintf(msg, sizeof msg, "%s", luaL_tolstring(L, -1, NULL));
    lua_settop(L, 0);
    return rc;
}

/* src must fail with a message containing want. */
static int refused(lua_State *L, const char *src, const char *want) {
    if (run(L, src) == LUA_OK || !strstr(msg, want)) {
        printf("  %s\n    -> %s (wanted an error with \"%s\")\n", src, msg, want);
        return 0;
    }
    return 1;
}

/* src must succeed and return something whose tostring is want. */
static int gives(lua_State *L, const char *src, const char *want) {
    if (run(L, src) != LUA_OK || strcmp(msg, want) != 0) {
        printf("  %s\n    -> %s (wanted %s)\n", src, msg, want);
        return 0;
    }
    return 1;
}

/* One probe: src run in the sandbox GIVES want, or is REFUSED with an error
 * containing want. */
enum { REFUSED, GIVES };
typedef struct {
    int how;
    const char *src, *want;
} probe;

/* Runs every probe in order (each one reports its own failure); 1 iff all
 * behaved as expected. */
static int probes_pass(lua_State *L, const probe *p, size_t n) {
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        if (!(p[i].how == GIVES ? gives(L, p[i].src, p[i].want) : refused(L, p[i].src, p[i].want))) ok = 0;
    return ok;
}
#define PROBES_PASS(L, arr) probes_pass((L), (arr), sizeof(arr) / sizeof *(arr))

static void test_no_io_os_require_debug(void) {
    static const probe p[] = {
        {REFUSED, "return io.open('/etc/passwd')", "probe:1: undefined global 'io'"},
        {REFUSED, "os.execute('true')", "field 'execute'"},
        {GIVES, "return tostring(os.exit) .. tostring(os.getenv) .. tostring(os.remove)", "nilnilnil"},
        {GIVES, "return type(os.time()) .. type(os.clock()) .. type(os.date('%Y'))", "numbernumberstring"},
        {REFUSED, "return require('os')", "undefined global 'require'"},
        {REFUSED, "return package.loadlib('libc.so.6', 'system')", "undefined global 'package'"},
        {REFUSED, "return debug.getregistry()", "undefined global 'debug'"},
        {REFUSED, "return dofile('/etc/passwd')", "undefined global 'dofile'"},
        {REFUSED, "return loadfile('/etc/passwd')", "undefined global 'loadfile'"},
        {REFUSED, "return load('return io')()", "undefined global 'io'"},
        {GIVES,
         "return type(string.format) .. type(table.concat) .. type(math.floor) .. type(utf8.char) .. "
         "type(coroutine.wrap)",
         "functionfunctionfunctionfunctionfunction"},
    };
    lua_State *L = cr_sandbox_new(64, "model script");
    CR_CHECK(L);
    CR_CHECK(PROBES_PASS(L, p));
    cr_sandbox_close(&L);
    CR_CHECK(!L);
}

static void test_no_bytecode_no_dump(void) {
    lua_State *full = luaL_newstate(), *L = cr_sandbox_new(64, "model script");
    CR_CHECK(full && L);
    luaL_openlibs(full);
    CR_CHECK(luaL_dostring(full, "return string.dump(function() return 42 end)") == LUA_OK);
    size_t n;
    const char *bc = lua_tolstring(full, -1, &n);
    lua_pushlstring(L, bc, n);
    lua_setglobal(L, "BC");
    CR_CHECK(gives(L, "local f, err = load(BC) return err", "attempt to load a binary chunk (mode is 't')"));
    CR_CHECK(refused(L, "return load(BC, 'x', 'b')", "only text chunks"));
    CR_CHECK(refused(L, "return load(BC, 'x', 'bt')", "only text chunks"));
    CR_CHECK(gives(L, "return load('return 7', 'x', 't')()", "7"));
    CR_CHECK(gives(L, "local e = {y = 3} return load('return y', 'x', nil, e)()", "3"));
    CR_CHECK(gives(L, "return tostring(string.dump) .. tostring(('x').dump)", "nilnil"));
    CR_CHECK(bc[0] == '\x1b');
    /* the interpreter itself refuses bytecode given to the loader */
    CR_CHECK(cr_sandbox_load(L, bc, n, "=bc", 0) != LUA_OK);
    lua_close(full);
    cr_sandbox_close(&L);
}

static void test_metatables_lead_nowhere(void) {
    static const probe p[] = {
        {GIVES, "return getmetatable('').__index.rep == string.rep", "true"},
        {REFUSED, "getmetatable('').__index.rep = print", "the string metatable is read-only"},
        {GIVES, "return tostring(getmetatable('').__index.dump)", "nil"},
        {REFUSED, "getmetatable('').__index = {}", "the string metatable is read-only"},
        {REFUSED, "getmetatable('').__gc = print", "the string metatable is read-only"},
        {GIVES, "return getmetatable(getmetatable(''))", "false"},
        {GIVES, "return ('abc'):upper()", "ABC"},
        {GIVES, "return getmetatable(_G)", "false"},
        {REFUSED, "setmetatable(_G, nil)", "cannot change a protected metatable"},
        {REFUSED, "return undefined_name", "probe:1: undefined global 'undefined_name'"},
        {GIVES, "x_defined = 5 return x_defined", "5"},
        {REFUSED, "setmetatable({}, {__gc = function() while true do end end})", "__gc metamethods are not allowed"},
        {GIVES, "return setmetatable({}, {__index = {a = 1}}).a", "1"},
        /* an __index that adds __gc while setmetatable looks for it: the
         * finalizer ran, with hooks off (a `while true do end` there hung
         * the worker for good) */
        {GIVES,
         "local mt = setmetatable({}, {__index = function(t, k) rawset(t, k, function() fired = true end) end})\n"
         "setmetatable({}, mt) collectgarbage() collectgarbage() return tostring(rawget(_G, 'fired'))",
         "nil"},
    };
    lua_State *L = cr_sandbox_new(64, "model script");
    CR_CHECK(L);
    CR_CHECK(PROBES_PASS(L, p));
    cr_sandbox_close(&L);
}

static void test_collectgarbage(void) {
    static const probe p[] = {
        {GIVES, "return type(collectgarbage('count'))", "number"},
        {GIVES, "return collectgarbage()", "0"},
        {GIVES, "return collectgarbage('collect')", "0"},
        {GIVES, "return type(collectgarbage('step'))", "boolean"},
        {GIVES, "return collectgarbage('isrunning')", "true"},
    };
    lua_State *L = cr_sandbox_new(64, "model script");
    CR_CHECK(L);
    CR_CHECK(PROBES_PASS(L, p));
    const char *bad[] = {"stop", "restart", "setpause", "setstepmul", "incremental", "generational"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char src[100];
        snprintf(src, sizeof src, "collectgarbage('%s', 1)", bad[i]);
        CR_CHECK(refused(L, src, "is not allowed in a sandboxed script"));
    }
    CR_CHECK(gives(L, "return collectgarbage('isrunning')", "true"));
    cr_sandbox_close(&L);
}

static void test_memory_cap(void) {
    lua_State *L = cr_sandbox_new(32, "model script");
    CR_CHECK(L);
    CR_CHECK(cr_sandbox_limit(L) == 32);
    static const probe p[] = {
        {REFUSED, "local s = string.rep('x', 2^31)", "probe:1: "}, /* Lua's own limit: too large */
        {REFUSED, "local s = string.rep('x', 2^30)", "probe:1: model script exceeded 32 MB (option memory_mb)"},
        {REFUSED, "local s = ('x'):rep(2^29) .. ('y'):rep(2^29)", "probe:1: model script exceeded 32 MB"},
        {REFUSED, "local t = {}\nfor i = 1, 1e9 do t[i] = i end", "probe:2: model script exceeded 32 MB (option memory_mb)"},
        {REFUSED, "local t = {}\nfor i = 1, 1e9 do t[i] = tostring(i) .. 'abc' end", "exceeded 32 MB"},
        {REFUSED, "local t = {} for i = 1, 40 do t[i] = string.rep('y', 1 << 20) .. i end", "exceeded 32 MB"},
        {GIVES, "return #string.rep('x', 1 << 20)", "1048576"},
    };
    CR_CHECK(PROBES_PASS(L, p));
    CR_CHECK(cr_sandbox_used(L) < (32u << 20));
    /* a caught memory error is just an error: the script goes on */
    CR_CHECK(gives(L, "return (pcall(string.rep, 'x', 2^31))", "false"));
    CR_CHECK(cr_sandbox_set_label(L, "policy script") != NULL);
    CR_CHECK(refused(L, "return string.rep('x', 2^30)", "policy script exceeded 32 MB"));
    CR_CHECK(cr_sandbox_set_limit(L, 0) < 0 && cr_sandbox_set_limit(L, CR_SANDBOX_MAX_MB + 1) < 0);
    CR_CHECK(cr_sandbox_set_limit(L, 200) == 0);
    CR_CHECK(gives(L, "return #string.rep('x', 60 << 20)", "62914560"));
    CR_CHECK(!cr_sandbox_new(0, "x") && !cr_sandbox_new(CR_SANDBOX_MAX_MB + 1, "x"));
    cr_sandbox_close(&L);
}

static int hooks_seen;
static const char *stop_after(void *arg) {
    (void)arg;
    return ++hooks_seen > 50 ? "stopped on purpose" : NULL;
}

static void test_interrupt(void) {
    lua_State *L = cr_sandbox_new(64, "model script");
    CR_CHECK(L);
    cr_sandbox_set_interrupt(L, stop_after, NULL);
    hooks_seen = 0;
    CR_CHECK(refused(L, "while true do end", "probe:1: stopped on purpose"));
    hooks_seen = 0; /* pcall cannot swallow it */
    CR_CHECK(refused(L, "while true do pcall(function() while true do end end) end", "stopped on purpose"));
    hooks_seen = 0;
    CR_CHECK(refused(L, "while true do xpcall(function() while true do end end, tostring) end", "stopped on purpose"));
    hooks_seen = 0;
    CR_CHECK(refused(L, "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
                     "stopped on purpose"));
    hooks_seen = 0;
    CR_CHECK(refused(L, "local t = setmetatable({}, {__index = function() while true do end end}) return t.x",
                     "stopped on purpose"));
    cr_sandbox_set_interrupt(L, NULL, NULL);
    CR_CHECK(gives(L, "local n = 0 for i = 1, 1e6 do n = n + 1 end return n", "1000000"));
    CR_CHECK(gives(L, "return select(2, pcall(error, 'e', 0))", "e"));
    cr_sandbox_close(&L);
}

/* Code that runs while an error unwinds: xpcall's message handler (Lua
 * calls it with hooks off when the error came from the count hook, and
 * calls it again for an error inside it), __close handlers (a coroutine
 * the stop killed keeps hooks off for good), coroutines and metamethods
 * inside handlers, trees of short coroutines (each counts instructions
 * from zero). Each probe must stop within a few seconds of the interrupt
 * (the message names where it was: the probe, or a chunk it loaded),
 * and the state must work after a reset. Each runs in a child with an
 * alarm, so that a probe that escapes fails the test instead of hanging it. */
static const char *const unwinding[] = {
    "xpcall(error, function() while true do end end)",
    "xpcall(function() while true do end end, function() while true do end end)",
    "while true do xpcall(error, function() while true do pcall(error) end end) end",
    "xpcall(error, function() xpcall(error, function() while true do end end) end)",
    "xpcall(error, function() while true do coroutine.wrap(function() end)() end end)",
    "coroutine.wrap(function() xpcall(error, function() while true do end end) end)()",
    "xpcall(error, function(e) return 'x' .. setmetatable({}, {__concat = function() while true do end end}) end)",
    "xpcall(error, function() while true do ('x'):rep(100):gsub('x', function() end) end end)",
    "xpcall(error, function() local t = {} for i = 1, 100 do t[i] = i end\n"
    "  while true do table.sort(t, function(a, b) return a > b end) end end)",
    "xpcall(error, function() while true do load('return 1')() end end)",
    "xpcall(error, tostring, setmetatable({}, {__tostring = function() while true do end end}))",
    "xpcall(error, function(e) return tostring(e) end, setmetatable({}, {__tostring = function() while true do end end}))",
    "local co = coroutine.wrap(function() while true do coroutine.yield() end end)\n"
    "xpcall(error, function() while true do co() end end)",
    "local co = coroutine.create(function()\n"
    "  local x <close> = setmetatable({}, {__close = function() while true do end end}) while true do end end)\n"
    "coroutine.resume(co) coroutine.close(co)",
    "coroutine.wrap(function()\n"
    "  local x <close> = setmetatable({}, {__close = function() while true do end end}) while true do end end)()",
    "do local x <close> = setmetatable({}, {__close = function() while true do end end}) while true do end end",
    "local function f(d) for i = 1, 500 do pcall(coroutine.wrap(f), d + 1) end end f(0)",
    "local function f(d) for i = 1, 500 do coroutine.resume(coroutine.create(f), d + 1) end end f(0)",
    "local mt = {__close = function() for i = 1, 9000 do end end}\n"
    "local function f(d) local x <close> = setmetatable({}, mt) if d < 100000 then return f(d + 1) + 0 end\n"
    "  while true do end end f(0)",
};

static double stop_at;
static const char *past_stop(void *arg) {
    (void)arg;
    return cr_now() > stop_at ? "stopped on purpose" : NULL;
}

/* In a child: src is stopped 0.2 s in (the message names the probe), and
 * the state then runs a plain chunk. Exit status 0 iff both. */
static int stop_child(const char *src) {
    alarm(5);
    lua_State *L = cr_sandbox_new(64, "model script");
    cr_sandbox_set_interrupt(L, past_stop, NULL);
    stop_at = cr_now() + 0.2;
    int ok = refused(L, src, "stopped on purpose");
    stop_at = cr_now() + 60;
    ok = ok && gives(L, "local n = 0 for i = 1, 1e5 do n = n + 1 end return n", "100000");
    cr_sandbox_close(&L);
    return ok ? 0 : 1;
}

static void test_interrupt_unwinding(void) {
    int bad = 0;
    for (size_t i = 0; i < sizeof unwinding / sizeof *unwinding; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) _exit(stop_child(unwinding[i]));
        int st;
        CR_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            printf("  %s\n    -> %s\n", unwinding[i], WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? "not stopped within 5 s"
                                                    : WIFSIGNALED(st) ? "killed by a signal" : "wrong message");
            bad++;
        }
    }
    CR_CHECK(bad == 0);
}

/* What the stop guards leave alone: handlers, __close and wrap's closing
 * behave as in Lua when nothing is stopped. */
static void test_unwinding_unstopped(void) {
    lua_State *L = cr_sandbox_new(64, "model script");
    CR_CHECK(L);
    static const probe p[] = {
        {GIVES, "return select(2, xpcall(error, function(e) return 'h:' .. e end, 'x', 0))", "h:x"},
        {GIVES, "local n = 0 xpcall(function() local c <close> = setmetatable({}, {__close = function() n = n + 1 end})\n"
                "error('e') end, function(e) n = n + 10 return e end) return n", "11"},
        {GIVES, "local n = 0 pcall(coroutine.wrap(function()\n"
                "local c <close> = setmetatable({}, {__close = function() n = n + 1 end}) error('e') end)) return n", "1"},
        {GIVES, "local co = coroutine.create(function() local c <close> = setmetatable({}, {__close = function() end})\n"
                "coroutine.yield(1) end) local ok, v = coroutine.resume(co) return tostring(ok) .. v .. tostring(coroutine.close(co))",
                "true1true"},
        {GIVES, "local ok, e = coroutine.resume(coroutine.create(function() error('boom', 0) end)) return tostring(ok) .. e",
                "falseboom"},
        {REFUSED, "coroutine.wrap(function() error('boom') end)()", "probe:1: boom"},
        {GIVES, "local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)\n"
                "return co(1) + co(5)", "12"},
        {GIVES, "local co = coroutine.create(print) coroutine.resume(co) return select(2, coroutine.resume(co))",
                "cannot resume dead coroutine"},
        {REFUSED, "return coroutine.resume(1)", "bad argument #1 to 'resume' (thread expected, got number)"},
    };
    CR_CHECK(PROBES_PASS(L, p));
    cr_sandbox_close(&L);
}

/* A chain of coroutines whose __close each closes the one before: Lua
 * 5.4.4 counts none of it against its C-call limit, and 100,000 levels
 * overflowed the C stack (a crash). The chain now ends with an error at
 * the 9th nested close; a shallow chain still works. */
static const char chain[] =
    "local co = false\n"
    "for i = 1, %d do\n"
    "  local prev = co\n"
    "  co = coroutine.create(function()\n"
    "    local c <close> = setmetatable({}, {__close = function()\n"
    "      if prev then local ok, e = coroutine.close(prev) if not ok then error(e, 0) end end end})\n"
    "    coroutine.yield()\n"
    "  end)\n"
    "  coroutine.resume(co)\n"
    "end\n"
    "local ok, e = coroutine.close(co) if not ok then error(e, 0) end return 'closed'\n";

static void test_nested_close(void) {
    lua_State *L = cr_sandbox_new(512, "model script");
    CR_CHECK(L);
    char src[sizeof chain + 16];
    snprintf(src, sizeof src, chain, 8);
    CR_CHECK(gives(L, src, "closed"));
    snprintf(src, sizeof src, chain, 100000);
    CR_CHECK(refused(L, src, "probe:6: coroutine.close: nested more than 8 deep in a sandboxed script"));
    CR_CHECK(refused(L, "return coroutine.close(1)", "bad argument #1 to 'close' (thread expected, got number)"));
    CR_CHECK(refused(L, "return coroutine.close(coroutine.running())", "cannot close a running coroutine"));
    CR_CHECK(gives(L, "return coroutine.close(coroutine.create(print))", "true"));
    cr_sandbox_close(&L);
}

/* A pattern match runs inside one C call, out of the count hook's reach:
 * ("a*"):rep(3) .. "b" against 250 a's takes Lua about a second,
 * ("a*"):rep(30) longer than anyone waits. In a sandbox the call is refused
 * when its worst case exceeds CR_PATTERN_STEPS, before it starts; ordinary
 * patterns, methods and plain finds work as in Lua. (Each refused probe
 * takes a second or less without the bound, so the test fails, not hangs.) */
static void test_pattern_bound(void) {
    lua_State *L = cr_sandbox_new(64, "model script");
    CR_CHECK(L);
    static const probe p[] = {
        {REFUSED, "return ('a'):rep(250):find(('a*'):rep(3) .. 'b')", "probe:1: string.find: pattern too costly for a sandboxed script"},
        {REFUSED, "return ('a'):rep(250):match(('a*'):rep(3) .. 'b')", "string.match: pattern too costly"},
        {REFUSED, "for w in ('a'):rep(250):gmatch(('a*'):rep(3) .. 'b') do end", "string.gmatch: pattern too costly"},
        {REFUSED, "return (('a'):rep(250):gsub(('a*'):rep(3) .. 'b', ''))", "string.gsub: pattern too costly"},
        {REFUSED, "return ('(('):rep(20000):find('%b()')", "pattern too costly"},
        {REFUSED, "return ('a'):rep(200000):find(('a'):rep(2000) .. '.b')", "pattern too costly"},
        {REFUSED, "return string.find('x', '[a')", "malformed pattern"},
        {GIVES, "return ('a'):rep(200):find(('a*'):rep(3) .. 'b', 1, true)", "nil"},
        {GIVES, "return ('a'):rep(200):find('^' .. ('a*'):rep(3) .. 'b')", "nil"},
        {GIVES, "return select(2, ('x'):rep(10000):gsub('x', 'y'))", "10000"},
        {GIVES, "return ('  key = value  '):match('^%s*(.-)%s*$')", "key = value"},
        {GIVES, "local k, v = ('lr=0.5'):match('^(%w+)=(.*)$') return k .. '|' .. v", "lr|0.5"},
        {GIVES, "local n = 0 for w in ('a bb ccc'):gmatch('%a+') do n = n + #w end return n", "6"},
        {GIVES, "return (string.gsub('a,b;c', '[,;]', {[','] = '+', [';'] = '-'}))", "a+b-c"},
        {GIVES, "return (('abc'):gsub('%w', function(c) return c:upper() end))", "ABC"},
        {GIVES, "return ('THE (quick) fox'):find('%f[%a]%a+', 5)", "6"},
        {GIVES, "return ('x' .. ('1'):rep(20000)):find('%d+')", "2"},
    };
    CR_CHECK(PROBES_PASS(L, p));
    CR_CHECK(cr_pattern_steps(250, "a*a*a*b", 7, 1) > CR_PATTERN_STEPS);
    CR_CHECK(cr_pattern_steps(250, "^a*a*a*b", 8, 1) < CR_PATTERN_STEPS);
    CR_CHECK(cr_pattern_steps(250, "^a*a*a*b", 8, 0) > CR_PATTERN_STEPS); /* gmatch: ^ does not anchor */
    CR_CHECK(cr_pattern_steps(10, "abc", 3, 1) == 11 * 3);                /* 11 starts, 3 items */
    CR_CHECK(cr_pattern_steps(10, "[%]a]*", 6, 1) == 66);                 /* one set, repeated: C(12, 2) */
    cr_sandbox_close(&L);
}

/* A worker serializes a model's result outside lua_pcall (l_worker.c,
 * reply_top). A script that returns a deeply nested table after filling its
 * state to the cap with live data left no room for the Lua stack to grow:
 * the serializer raised with nothing to catch it and the node aborted. It
 * now fails with a message. */
static void test_result_at_cap(void) {
    static const char src[] =
        "nest = {} local t = nest for i = 1, 60 do t.x = {} t = t.x end\n"
        "collectgarbage() -- shrinks the stack\n"
        "keep = {} for i = 1, 1000 do keep[i] = false end\n"
        "local n, sz, rep = 0, 1 << 20, string.rep\n"
        "local function f() n = n + 1 keep[n] = rep('x', sz) end\n"
        "while sz > 0 do if not pcall(f) then n, sz = n - 1, sz // 2 end end\n"
        "return nest";
    lua_State *L = cr_sandbox_new(16, "model script");
    CR_CHECK(L);
    CR_CHECK(cr_sandbox_load(L, src, strlen(src), "=probe", 0) == LUA_OK);
    lua_pushvalue(L, -1); /* the chunk stays alive, as a model's functions do */
    CR_CHECK(lua_pcall(L, 0, 1, 0) == LUA_OK);
    char *out = NULL, err[300] = "";
    size_t n;
    CR_CHECK(cr_lser_dump(L, -1, &out, &n, err, sizeof err) < 0);
    CR_CHECK(strstr(err, "value.x.x.x") && strstr(err, ": no memory left to serialize it (the state is at its memory cap)"));
    free(out);
    cr_sandbox_close(&L);
}

static void test_env_for_policies(void) {
    lua_State *L = cr_sandbox_new(64, "model script");
    CR_CHECK(L);
    CR_CHECK(gives(L, "secret = 1 return secret", "1"));
    cr_sandbox_push_env(L);
    const char *src = "return type(string) .. type(rawget(_G, 'secret')) .. tostring(_G == _ENV)";
    CR_CHECK(cr_sandbox_load(L, src, strlen(src), "=p", -1) == LUA_OK);
    CR_CHECK(lua_pcall(L, 0, 1, 0) == LUA_OK);
    CR_CHECK_STR(lua_tostring(L, -1), "tablenil" "true");
    lua_settop(L, 0);
    /* a policy changing the libraries it sees: the model's are not those
     * (a policy set math.max and the model's step size became its number) */
    cr_sandbox_push_env(L);
    src = "math.max = function() return 1e30 end table.insert = error\n"
          "string.format = function() return 'policy' end\n"
          "return pcall(function() getmetatable('').__index.format = string.format end)";
    CR_CHECK(cr_sandbox_load(L, src, strlen(src), "=p", -1) == LUA_OK);
    CR_CHECK(lua_pcall(L, 0, 1, 0) == LUA_OK && !lua_toboolean(L, -1));
    lua_settop(L, 0);
    CR_CHECK(gives(L, "local t = {} table.insert(t, 1) return math.max(1, 2) .. ('%d'):format(#t) .. string.format('x')",
                   "21x"));
    cr_sandbox_close(&L);
}

/* ---- what a model script may call from crescent */

static char tmpdir[64];

static void write_file(const char *name, const char *text, char *path) {
    snprintf(path, 256, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static lua_State *worker_like(void) {
    lua_State *L = cr_sandbox_new(64, "model script");
    if (!L) return NULL;
    cr_sandbox_push_worker_core(L);
    lua_setglobal(L, "cr");
    cr_sandbox_protect_metatables(L);
    return L;
}

static void test_worker_core_readers(void) {
    char mm[256], dict[256], link[256], src[1024];
    write_file("m.mmc", "%%MatrixMarket matrix coordinate real general\n3 2 2\n1 1 1.5\n3 2 2\n", mm);
    write_file("d.tsv", "0\tzero\n1\tone\n", dict);
    snprintf(link, sizeof link, "%s/passwd_link", tmpdir);
    CR_CHECK(symlink("/etc/passwd", link) == 0);
    lua_State *L = worker_like();
    CR_CHECK(L);
    CR_CHECK(cr_sandbox_allow_read(L, mm) == 1 && cr_sandbox_allow_read(L, dict) == 1);
    CR_CHECK(cr_sandbox_allow_read(L, tmpdir) == 0 && cr_sandbox_allow_read(L, "/dev/null") == 0);
    snprintf(src, sizeof src, "return cr.core.kernels.mm_header('%s').rows", mm);
    CR_CHECK(gives(L, src, "3"));
    snprintf(src, sizeof src, "local r = cr.core.data.mm_open('%s') return select(3, r:header())", mm);
    CR_CHECK(gives(L, src, "2"));
    snprintf(src, sizeof src, "local d = cr.core.data.dict('%s') return #d .. tostring(d.write)", dict);
    CR_CHECK(gives(L, src, "2nil"));
    const char *readers[] = {"kernels.mm_header", "kernels.mf_load", "data.mm_open", "data.libsvm", "data.edges",
                             "data.triples", "data.text", "data.dict"};
    for (size_t i = 0; i < sizeof readers / sizeof *readers; i++) {
        snprintf(src, sizeof src, "return cr.core.%s('/etc/passwd')", readers[i]);
        CR_CHECK(refused(L, src, "reading '/etc/passwd' is not allowed in a model script"));
        snprintf(src, sizeof src, "return cr.core.%s('%s')", readers[i], link);
        CR_CHECK(refused(L, src, "is not allowed in a model script"));
    }
    snprintf(src, sizeof src, "return cr.core.data.triples('%s', {entities = '/etc/passwd'})", mm);
    CR_CHECK(refused(L, src, "reading '/etc/passwd' is not allowed"));
    /* options behind an __index: the check saw the allowed dictionary, the
     * reader then got the undeclared secret one (its 3 names in n_ent) */
    char secret[256], triples[256];
    write_file("secret.tsv", "0\tsecret\n1\tx\n2\ty\n", secret);
    write_file("t.tsv", "a\tr\tb\n", triples);
    CR_CHECK(cr_sandbox_allow_read(L, triples) == 1);
    snprintf(src, sizeof src,
             "local n = 0 local o = setmetatable({grow = true}, {__index = function(t, k)\n"
             "  if k == 'entities' then n = n + 1 return n == 1 and '%s' or '%s' end end})\n"
             "local r, err = cr.core.data.triples('%s', o) return r and r.n_ent or err",
             dict, secret, triples);
    CR_CHECK(gives(L, src, "2"));
    CR_CHECK(refused(L, "return cr.core.eval.analogy(cr.core.util.matrix(1, 1), {}, '/etc/passwd')", "not allowed"));
    CR_CHECK(refused(L, "return cr.core.eval.synonyms(cr.core.util.matrix(1, 1), {}, '/etc/shadow')", "not allowed"));
    cr_sandbox_clear_reads(L);
    snprintf(src, sizeof src, "return cr.core.kernels.mm_header('%s')", mm);
    CR_CHECK(refused(L, src, "not allowed"));
    cr_sandbox_close(&L);
}

static void test_worker_core_no_writers(void) {
    lua_State *L = worker_like();
    CR_CHECK(L);
    const char *gone[] = {"data.write_matrix_market", "data.write_libsvm", "data.write_edges", "data.write_triples",
                          "data.write_text", "data.matrix_market", "partition", "ps", "sandbox"};
    char src[256];
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++) {
        snprintf(src, sizeof src, "return tostring(cr.core.%s)", gone[i]);
        CR_CHECK(gives(L, src, "nil"));
    }
    CR_CHECK(gives(L, "return type(cr.core.util.matrix) .. type(cr.core.kernels.mf_sgd) .. type(cr.core.eval.rmse)",
                   "functionfunctionfunction"));
    /* the userdata metatables are hidden: no __gc by hand */
    CR_CHECK(gives(L, "return tostring(getmetatable(cr.core.util.matrix(1, 1)))", "false"));
    CR_CHECK(gives(L, "return cr.core.util.matrix(2, 3):cols()", "3"));
    /* userdata counts against the cap too */
    CR_CHECK(refused(L, "return cr.core.util.matrix(1e5, 1e5)", "probe:1: model script exceeded 64 MB"));
    CR_CHECK(refused(L, "return cr.core.util.ints(1e9)", "probe:1: model script exceeded 64 MB"));
    /* no memory, but 2^62 rows for C loops (its m:norms() never returned) */
    CR_CHECK(refused(L, "return cr.core.util.matrix(1 << 62, 0)",
                     "probe:1: matrix too large (4611686018427387904 x 0; at most 2147483647 rows and columns)"));
    CR_CHECK(refused(L, "return cr.core.util.matrix(0, 1 << 31)", "matrix too large"));
    CR_CHECK(gives(L, "return tostring(cr.core.util.matrix(2147483647, 0))", "crescent.Matrix(2147483647 x 0)"));
    cr_sandbox_close(&L);
}

/* the word2vec kernels are on the worker allow-list */
static void test_worker_core_w2v(void) {
    lua_State *L = worker_like();
    CR_CHECK(L);
    CR_CHECK(gives(L,
                   "local k = cr.core.kernels return type(k.w2v_sgns) .. type(k.w2v_cbow) .. type(k.w2v_subsample) .. "
                   "type(k.w2v_init)",
                   "functionfunctionfunctionfunction"));
    cr_sandbox_close(&L);
}

/* ---- the policy check used by the scheduler */

/* The KGE kernels touch no files: a model script may call them. */
static void test_worker_core_kge(void) {
    lua_State *L = worker_like();
    CR_CHECK(L);
    CR_CHECK(gives(L,
                   "local K, u = cr.core.kernels, cr.core.util "
                   "local E, R = u.matrix(2, 2), u.matrix(1, 2) "
                   "local l = K.kge_step('distmult', E, R, nil, nil, {s = {0}, r = {0}, o = {1}, y = {1}}) "
                   "return string.format('%.4f %d', l, K.kge_score_all('distmult', E, R, {0}, {0}):cols())",
                   "0.6931 2"));
    /* and so does the batcher that feeds them */
    CR_CHECK(gives(L,
                   "local b = cr.core.kernels.kge_batches({s = {0, 1}, r = {0, 0}, o = {1, 0}}, "
                   "{batch = 2, neg = 1, entities = 2, relations = 1}) "
                   "local ek, rk, batch, pos = b:next() "
                   "return string.format('%d %d %d %d', #ek, #rk, #batch.s, pos)",
                   "2 1 6 2"));
    cr_sandbox_close(&L);
}

/* C buffers allocated for a model count against its cap: a batcher whose
 * options ask for more than the cap is refused before anything is
 * allocated, naming the script's line; one that fits is counted while it
 * lives (twenty of 8 MB each fit in 64 MB only because the dropped ones
 * are collected and given back). */
static void test_worker_core_c_buffers(void) {
    lua_State *L = worker_like();
    CR_CHECK(L);
    static const probe p[] = {
        {REFUSED, "local t = {s = {0}, r = {0}, o = {1}, n_ent = 2, n_rel = 1}\n"
                  "local b = cr.core.kernels.kge_batches(t, {batch = 4, neg = 2e7})\nreturn b:next()",
         "probe:2: kge_batches: model script exceeded 64 MB (option memory_mb): C buffers of 4239 MB"},
        {GIVES, "local t = {s = {0, 1, 0, 1}, r = {0, 0, 0, 0}, o = {1, 0, 1, 0}, n_ent = 2, n_rel = 1}\n"
                "for i = 1, 20 do local b = cr.core.kernels.kge_batches(t, {batch = 4, neg = 1e4}) b:next() end\n"
                "return 'ok'", "ok"},
    };
    CR_CHECK(PROBES_PASS(L, p));
    /* every other binding that sizes C buffers by what the script asks */
    char data[256], src[1024];
    write_file("any.txt", "1 1:1\n", data);
    CR_CHECK(cr_sandbox_allow_read(L, data) == 1);
    snprintf(src, sizeof src, "return cr.core.kernels.logreg_load('%s', {features = 2147483647})", data);
    CR_CHECK(refused(L, src, "probe:1: logreg_load: model script exceeded 64 MB (option memory_mb): C buffers of 10240 MB"));
    snprintf(src, sizeof src, "return cr.core.kernels.lda_load('%s', {V = 2147483647})", data);
    CR_CHECK(refused(L, src, "probe:1: lda_load: model script exceeded 64 MB (option memory_mb): C buffers of 8192 MB"));
    snprintf(src, sizeof src, "return cr.core.kernels.w2v_reader('%s', 'a 1\\n', {batch = 2^30})", data);
    CR_CHECK(refused(L, src, "probe:1: w2v_reader: model script exceeded 64 MB (option memory_mb): C buffers of 24"));
    CR_CHECK(refused(L,
                     "local u = cr.core.util local t = {s = {}, r = {}, o = {}}\n"
                     "for i = 1, 512 do t.s[i], t.r[i], t.o[i] = 0, 0, 1 end\n"
                     "return cr.core.eval.link_prediction{model = 'distmult', entities = u.matrix(2e6, 1),\n"
                     "  relations = u.matrix(1, 1), test = t, block = 512}",
                     "probe:3: link_prediction: model script exceeded 64 MB (option memory_mb): C buffers of 39"));
    lua_gc(L, LUA_GCCOLLECT);
    size_t base = cr_sandbox_used(L);
    CR_CHECK(gives(L, "B = cr.core.kernels.kge_batches({s = {0, 1, 0, 1}, r = {0, 0, 0, 0}, o = {1, 0, 1, 0}, n_ent = 2, n_rel = 1}, "
                      "{batch = 4, neg = 1e4}) return 'kept'", "kept"));
    CR_CHECK(cr_sandbox_used(L) > base + (4u << 20));
    CR_CHECK(gives(L, "B = nil collectgarbage() return 'dropped'", "dropped"));
    CR_CHECK(cr_sandbox_used(L) < base + (1u << 20));
    cr_sandbox_close(&L);
}

static int check(lua_State *L, const char *src, const char *opts, int mb) {
    if (luaL_dostring(L, opts) != LUA_OK) return -2;
    int rc = cr_sandbox_check_policy(L, src, strlen(src), "pol.lua", -1, mb);
    snprintf(msg, sizeof msg, "%s", rc == 0 ? "ok" : lua_tostring(L, -1));
    lua_settop(L, 0);
    return rc;
}

static int policy_refused(lua_State *L, const char *body, const char *want) {
    char src[512];
    snprintf(src, sizeof src, "return function(opts)\n%s\nreturn {may_proceed = function() return true end} end",
             body);
    if (check(L, src, "return {}", 16) == 0 || !strstr(msg, want)) {
        printf("  policy %s\n    -> %s (wanted \"%s\")\n", body, msg, want);
        return 0;
    }
    return 1;
}

static void test_check_policy(void) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    const char *ssp = "return function(opts) local s = opts.staleness\n"
                      "  opts.staleness = 99\n"
                      "  return {may_proceed = function(m, n) return m - n <= s end} end";
    CR_CHECK(check(L, ssp, "T = {staleness = 2} return T", 16) == 0);
    CR_CHECK(luaL_dostring(L, "return T.staleness") == LUA_OK && lua_tointeger(L, -1) == 2); /* a copy */
    lua_settop(L, 0);
    static const char *const bad[][2] = {
        {"io.open('/etc/passwd')", "bad policy file: pol.lua:2: undefined global 'io'"},
        {"os.execute('touch /tmp/crescent_pwned')", "pol.lua:2: attempt to call a nil value"},
        {"require('io')", "undefined global 'require'"},
        {"load(string.dump(print))", "attempt to call a nil value (field 'dump')"},
        {"load('\\27Lua', 'x', 'b')", "only text chunks"},
        {"assert(load('\\27LuaT'))", "attempt to load a binary chunk"},
        {"getmetatable('').__index.x = debug", "undefined global 'debug'"},
        {"getmetatable('').__index = 1", "read-only"},
        {"package.loadlib('x', 'y')", "undefined global 'package'"},
        {"collectgarbage('stop')", "not allowed in a sandboxed script"},
        {"local s = string.rep('x', 2^31)", "pol.lua:2: "},
        {"local s = string.rep('x', 2^30)", "pol.lua:2: policy script exceeded 16 MB"},
        {"local t = {} for i = 1, 1e9 do t[i] = i end", "pol.lua:2: policy script exceeded 16 MB"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CR_CHECK(policy_refused(L, bad[i][0], bad[i][1]));
    CR_CHECK(access("/tmp/crescent_pwned", F_OK) != 0);
    CR_CHECK(check(L, "return 42", "return {}", 16) < 0);
    CR_CHECK(strstr(msg, "bad policy file pol.lua: must return a constructor function(opts)"));
    CR_CHECK(check(L, "return function() return {} end", "return {}", 16) < 0);
    CR_CHECK(strstr(msg, "the constructor must return a table with may_proceed"));
    CR_CHECK(check(L, "return function( end", "return {}", 16) < 0);
    CR_CHECK(strstr(msg, "bad policy file: pol.lua:1:"));
    CR_CHECK(check(L, ssp, "return {f = print}", 16) < 0 && strstr(msg, "bad policy options"));
    lua_close(L);
}

static void test_check_policy_runaway(void) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    CR_CHECK(policy_refused(L, "while true do pcall(function() while true do end end) end",
                            "policy script ran longer than 5 s"));
    lua_close(L);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cr_sandbox_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    CR_RUN(test_no_io_os_require_debug);
    CR_RUN(test_no_bytecode_no_dump);
    CR_RUN(test_metatables_lead_nowhere);
    CR_RUN(test_collectgarbage);
    CR_RUN(test_memory_cap);
    CR_RUN(test_interrupt);
    CR_RUN(test_interrupt_unwinding);
    CR_RUN(test_unwinding_unstopped);
    CR_RUN(test_nested_close);
    CR_RUN(test_pattern_bound);
    CR_RUN(test_result_at_cap);
    CR_RUN(test_env_for_policies);
    CR_RUN(test_worker_core_readers);
    CR_RUN(test_worker_core_no_writers);
    CR_RUN(test_worker_core_kge);
    CR_RUN(test_worker_core_c_buffers);
    CR_RUN(test_worker_core_w2v);
    CR_RUN(test_check_policy);
    CR_RUN(test_check_policy_runaway);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) return 1;
    return cr_test_done();
}
