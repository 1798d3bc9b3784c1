/* Sandboxed Lua states: an allow-list of the standard library, a capped
 * allocator and an interruptible count hook. See l_sandbox.h. */
#include "lua/l_sandbox.h"

#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"
#include "lua/l_worker_serial.h"

#define TEMPLATE_KEY "crescent.sandbox.template"

/* Per-state accounting, the allocator's ud (so reachable from any thread of
 * the state through lua_getallocf, without the registry). */
typedef struct sbox {
    size_t used, cap;
    int refused;        /* an allocation was refused since the last reset */
    int stopped;        /* the interrupt fired: raise at every hook */
    int closing;        /* coroutine.close calls in progress (sb_coclose) */
    char stop_msg[300]; /* "script:line: why" of the first raise */
    char where[200];    /* "script:line: " of the last refusal, or "" */
    lua_State *L;       /* main thread once built: where refusals happen */
    const char *label;  /* "model script", ... */
    cr_sandbox_interrupt_fn intr;
    void *intr_arg;
} sbox;

static sbox *box_of(lua_State *L) {
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

/* The first Lua frame of L's stack as "script:line: ". Runs inside the
 * allocator: lua_getstack and lua_getinfo("Sl") read the call chain and
 * allocate nothing, and the state is consistent at every allocation (a
 * garbage collection may run there too). */
static void note_where(sbox *s) {
    lua_Debug ar;
    s->where[0] = '\0';
    for (int lvl = 0; s->L && lua_getstack(s->L, lvl, &ar); lvl++) {
        if (lua_getinfo(s->L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(s->where, sizeof s->where, "%s:%d: ", ar.short_src, ar.currentline);
            return;
        }
    }
}

/* Why refuse rather than fail later: Lua answers a NULL by collecting
 * garbage and trying once more, so only live data counts against the cap. */
static void *sb_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    sbox *s = ud;
    size_t old = ptr ? osize : 0; /* with ptr NULL, osize is a type tag */
    if (nsize == 0) {
        free(ptr);
        s->used -= old;
        return NULL;
    }
    if (nsize > old && nsize - old > s->cap - s->used) {
        s->refused = 1;
        note_where(s);
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p) s->used = s->used - old + nsize;
    return p;
}

/* ---------- interrupts ----------
 *
 * Why more than a hook that raises: Lua runs with hooks off whatever runs
 * while an error raised from a hook is on its way (ldo.c: luaD_hook clears
 * L->allowhook around the hook; luaG_errormsg calls the message handler
 * before unwinding), and a coroutine that dies of such an error keeps them
 * off for good (lua_resume does not restore allowhook, lua_resetthread
 * runs its __close handlers that way). So once the interrupt fired:
 *   - xpcall's handler is not called (sb_msgh), pcall and xpcall raise at
 *     once, and what they catch goes on upwards (finish_pcall);
 *   - coroutine.resume, wrap and close raise at once, and a coroutine the
 *     stop was raised in is marked (its hook becomes sb_hook_killed): close
 *     and wrap never run its __close handlers, not even after a reset;
 *   - every thread the stop is raised in counts one instruction per hook,
 *     so the __close handlers unwinding runs each raise before their first
 *     instruction (with 10,000 each, a deep recursion with a handler per
 *     frame ran for minutes).
 * And each coroutine counts instructions from zero (lua_newthread), so a
 * tree of short coroutines never reached a hook: resume and wrap ask the
 * interrupt test themselves. */

static void sb_hook(lua_State *L, lua_Debug *ar);

/* The hook of a coroutine the stop was raised in: the same hook, under a
 * name of its own that marks the coroutine (see above). */
static void sb_hook_killed(lua_State *L, lua_Debug *ar) { sb_hook(L, ar); }

static int killed(lua_State *co) { return lua_gethook(co) == sb_hook_killed; }

/* buf = "script:line: " of the first Lua frame of L with a line, or "" (in
 * a hook, level 0 is the script's function). */
static void where_in(lua_State *L, char *buf, size_t n) {
    lua_Debug ar;
    buf[0] = '\0';
    for (int lvl = 0; lua_getstack(L, lvl, &ar); lvl++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(buf, n, "%s:%d: ", ar.short_src, ar.currentline);
            return;
        }
    }
}

/* stop_msg = "script:line: why". */
static void note_stop(sbox *s, lua_State *L, const char *why) {
    char at[200];
    where_in(L, at, sizeof at);
    snprintf(s->stop_msg, sizeof s->stop_msg, "%s%s", at, why);
}

/* Whether the state is stopped, asking the interrupt test if not yet. */
static int stop_now(lua_State *L, sbox *s) {
    const char *why;
    if (!s->stopped && s->intr && (why = s->intr(s->intr_arg))) {
        s->stopped = 1;
        note_stop(s, L, why);
    }
    return s->stopped;
}

/* Raise the stop in L. The hook is changed first: pushing the message may
 * fail, and that error leaves the hook too. */
static int raise_stop(lua_State *L, sbox *s) {
    lua_sethook(L, L == s->L ? sb_hook : sb_hook_killed, LUA_MASKCOUNT, 1);
    lua_pushstring(L, s->stop_msg);
    return lua_error(L);
}

static void sb_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    sbox *s = box_of(L);
    if (stop_now(L, s)) raise_stop(L, s);
}

/* pcall and xpcall as in lbaselib.c, except that an error raised while the
 * state is stopped goes on upwards: a script cannot swallow its own
 * cancellation in a `while true do pcall(f) end`. */
static int finish_pcall(lua_State *L, int status, lua_KContext extra) {
    if (status != LUA_OK && status != LUA_YIELD) {
        sbox *s = box_of(L);
        if (s->stopped) return raise_stop(L, s); /* not what a message handler made of it */
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

static int sb_pcall(lua_State *L) {
    sbox *s = box_of(L);
    if (s->stopped) return raise_stop(L, s);
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    int status = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, 0, finish_pcall);
    return finish_pcall(L, status, 0);
}

/* xpcall's message handler: the script's (upvalue 1), unless the state is
 * stopped; then the error goes on as it is. */
static int sb_msgh(lua_State *L) {
    if (box_of(L)->stopped) {
        lua_settop(L, 1);
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static int sb_xpcall(lua_State *L) {
    sbox *s = box_of(L);
    if (s->stopped) return raise_stop(L, s);
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, sb_msgh, 1);
    lua_replace(L, 2);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, finish_pcall);
    return finish_pcall(L, status, 2);
}

/* ---------- coroutines (lcorolib.c, with the checks above) ---------- */

static lua_State *getco(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    luaL_argexpected(L, co, 1, "thread");
    return co;
}

/* Resume co with the narg values at the top of L: the number of results
 * moved to L, or -1 with the error message pushed. Raises the stop. */
static int auxresume(lua_State *L, lua_State *co, int narg) {
    sbox *s = box_of(L);
    if (stop_now(L, s)) return raise_stop(L, s);
    if (!lua_checkstack(co, narg)) {
        lua_pushliteral(L, "too many arguments to resume");
        return -1;
    }
    lua_xmove(L, co, narg);
    int nres, status = lua_resume(co, L, narg, &nres);
    if (s->stopped) {
        if (status == LUA_OK || status == LUA_YIELD) lua_pop(co, nres);
        return raise_stop(L, s);
    }
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nres + 1)) {
            lua_pop(co, nres);
            lua_pushliteral(L, "too many results to resume");
            return -1;
        }
        lua_xmove(co, L, nres);
        return nres;
    }
    lua_xmove(co, L, 1);
    return -1;
}

static int sb_coresume(lua_State *L) {
    lua_State *co = getco(L);
    int r = auxresume(L, co, lua_gettop(L) - 1);
    if (r < 0) {
        lua_pushboolean(L, 0);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_insert(L, -(r + 1));
    return r + 1;
}

/* A function made by coroutine.wrap: closes a coroutine that failed (its
 * __close handlers run), except one the stop was raised in. */
static int sb_auxwrap(lua_State *L) {
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    int r = auxresume(L, co, lua_gettop(L));
    if (r >= 0) return r;
    int stat = lua_status(co);
    if (stat != LUA_OK && stat != LUA_YIELD && !killed(co)) {
        lua_pop(L, 1);
        stat = lua_resetthread(co);
        sbox *s = box_of(L);
        if (s->stopped) return raise_stop(L, s); /* in a __close handler */
        lua_xmove(co, L, 1);
    }
    if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

static int sb_cowrap(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, sb_auxwrap, 1);
    return 1;
}

/* ---------- base functions that need a guard ---------- */

/* load(chunk [, name [, mode [, env]]]): the original with mode "t". */
static int sb_load(lua_State *L) {
    int n = lua_gettop(L);
    if (n < 3) lua_settop(L, n = 3);
    if (!lua_isnil(L, 3) && strcmp(luaL_checkstring(L, 3), "t") != 0)
        return luaL_error(L, "load: only text chunks (mode \"t\") are allowed in a sandboxed script");
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
}

/* collectgarbage(opt): reading and helping the collector is fine; stopping
 * it or retuning it is not the script's business. */
static int sb_collectgarbage(lua_State *L) {
    static const char *const ok[] = {"count", "step", "collect", "isrunning", NULL};
    const char *opt = luaL_optstring(L, 1, "collect");
    for (int i = 0; ok[i]; i++) {
        if (!strcmp(opt, ok[i])) {
            lua_pushvalue(L, lua_upvalueindex(1));
            lua_insert(L, 1);
            lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
            return lua_gettop(L);
        }
    }
    return luaL_error(L, "collectgarbage: option '%s' is not allowed in a sandboxed script", opt);
}

/* __index of the globals: reading a name nobody set is a mistake. */
static int sb_undefined(lua_State *L) {
    return luaL_error(L, "undefined global '%s'", luaL_tolstring(L, 2, NULL));
}

/* setmetatable(t, mt) without __gc: a finalizer would run script code at
 * any allocation and at lua_close with hooks off, where nothing can
 * interrupt it. The check is raw, as Lua's own: lua_getfield would call an
 * __index of mt's metatable, which could rawset mt.__gc before Lua looks. */
static int sb_setmetatable(lua_State *L) {
    lua_settop(L, 2);
    lua_pushliteral(L, "__gc");
    if (lua_istable(L, 2) && lua_rawget(L, 2) != LUA_TNIL)
        return luaL_error(L, "setmetatable: __gc metamethods are not allowed in a sandboxed script");
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, 1);
    return 1;
}

/* coroutine.close(co), nested at most MAX_CLOSE deep. Lua 5.4.4 runs co's
 * __close handlers on co's own count of C calls, not the caller's: a
 * __close that closes a coroutine whose __close closes another, and so on,
 * is never stopped by LUAI_MAXCCALLS and overflows the C stack (a crash,
 * fixed upstream in 5.4.5). Each level may hold ~200 C calls of its own,
 * so the bound keeps the worst case well inside a thread's stack. */
#define MAX_CLOSE 8

static int sb_coclose(lua_State *L) {
    sbox *s = box_of(L);
    lua_State *co = getco(L);
    if (s->stopped) return raise_stop(L, s);
    if (killed(co) && lua_status(co) != LUA_OK && lua_status(co) != LUA_YIELD) {
        lua_pushboolean(L, 0);
        lua_pushliteral(L, "coroutine.close: the coroutine was stopped (cancelled or out of time); "
                           "its __close handlers do not run");
        return 2;
    }
    if (s->closing >= MAX_CLOSE)
        return luaL_error(L, "coroutine.close: nested more than %d deep in a sandboxed script", MAX_CLOSE);
    s->closing++;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    int rc = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    s->closing--;
    if (s->stopped) return raise_stop(L, s); /* in a __close handler */
    return rc == LUA_OK ? lua_gettop(L) : lua_error(L);
}

static int sb_readonly(lua_State *L) { return luaL_error(L, "the string metatable is read-only"); }

/* ---------- building the state ---------- */

/* [-1, +0] Copy t[name] for each name (NULL-ended) into the table below t. */
static void copy_names(lua_State *L, const char *const *names) {
    for (int i = 0; names[i]; i++) {
        lua_getfield(L, -1, names[i]);
        lua_setfield(L, -3, names[i]);
    }
    lua_pop(L, 1);
}

/* [-1, +0] Wrap t[name] (t at -1) in the C closure f (original as upvalue)
 * and store it into the table below t. */
static void wrap(lua_State *L, const char *name, lua_CFunction f) {
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, f, 1);
    lua_setfield(L, -3, name);
}

static void add_base(lua_State *L) {
    static const char *const base[] = {"assert", "error",    "getmetatable", "ipairs", "next",
                                       "pairs",  "print",    "rawequal",     "rawget", "rawlen",
                                       "rawset", "select",   "tonumber",     "tostring",
                                       "type",   "_VERSION", NULL};
    luaL_requiref(L, "_G", luaopen_base, 0); /* fills the state's own globals */
    wrap(L, "load", sb_load);
    wrap(L, "collectgarbage", sb_collectgarbage);
    wrap(L, "setmetatable", sb_setmetatable);
    copy_names(L, base);
    lua_pushcfunction(L, sb_pcall);
    lua_setfield(L, -2, "pcall");
    lua_pushcfunction(L, sb_xpcall);
    lua_setfield(L, -2, "xpcall");
}

/* [-0, +1] A read-only view of the table at -1: reads go through, writes
 * raise, and its metatable is hidden. */
static void push_readonly(lua_State *L) {
    lua_newtable(L);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, sb_readonly);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
}

/* [-0, +0] Hide the string metatable behind a read-only view, so that
 * getmetatable("") leads only to the allowed string table (at -1), and
 * only to a read-only view of it: string methods ("x"):rep are shared by
 * every environment of the state (a policy's and its model's), so no
 * script may replace them under another. */
static void protect_string_mt(lua_State *L) {
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushvalue(L, -3);
    push_readonly(L);               /* the methods */
    lua_remove(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "__index");
    lua_createtable(L, 0, 1);       /* what reading the view finds */
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "__index");
    push_readonly(L);               /* the view returned by getmetatable("") */
    lua_remove(L, -2);
    lua_setfield(L, -3, "__metatable");
    lua_pop(L, 3);
}

static void add_lib(lua_State *L, const char *name, lua_CFunction open, const char *const *only, const char *skip) {
    luaL_requiref(L, name, open, 0);
    lua_newtable(L);
    for (lua_pushnil(L); lua_next(L, -3); lua_pop(L, 1)) {
        const char *k = lua_tostring(L, -2);
        int keep = !skip || strcmp(k, skip);
        if (only) {
            keep = 0;
            for (int i = 0; only[i]; i++) keep |= !strcmp(k, only[i]);
        }
        if (!keep) continue;
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);
        lua_settable(L, -5);
    }
    if (!strcmp(name, "string")) {
        cr_sandbox_bound_patterns(L);
        protect_string_mt(L);
    }
    if (!strcmp(name, "coroutine")) {
        lua_getfield(L, -1, "close");
        lua_pushcclosure(L, sb_coclose, 1);
        lua_setfield(L, -2, "close");
        lua_pushcfunction(L, sb_coresume);
        lua_setfield(L, -2, "resume");
        lua_pushcfunction(L, sb_cowrap);
        lua_setfield(L, -2, "wrap");
    }
    lua_setfield(L, -3, name);
    lua_pop(L, 1);
}

/* [-0, +1] The template: every allowed global, not yet strict. */
static void make_template(lua_State *L) {
    static const char *const os_ok[] = {"time", "clock", "date", NULL};
    lua_newtable(L);
    add_base(L);
    add_lib(L, "string", luaopen_string, NULL, "dump");
    add_lib(L, "table", luaopen_table, NULL, NULL);
    add_lib(L, "math", luaopen_math, NULL, NULL);
    add_lib(L, "utf8", luaopen_utf8, NULL, NULL);
    add_lib(L, "coroutine", luaopen_coroutine, NULL, NULL);
    add_lib(L, "os", luaopen_os, os_ok, NULL);
}

/* [-0, +0] Make the table at idx strict: undefined reads raise, and its
 * metatable cannot be changed or read. */
static void make_strict(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_createtable(L, 0, 2);
    lua_pushcfunction(L, sb_undefined);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, idx);
}

void cr_sandbox_push_rawcopy(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);
        lua_rawset(L, -5);
    }
}

/* [-0, +1] A globals table from the template; with copy, each library
 * table (string, math, ...) is a copy of its own. */
static void push_env(lua_State *L, int copy) {
    lua_newtable(L);
    lua_getfield(L, LUA_REGISTRYINDEX, TEMPLATE_KEY);
    lua_pushnil(L);
    while (lua_next(L, -2)) { /* [env, template, k, v] */
        if (copy && lua_istable(L, -1)) {
            cr_sandbox_push_rawcopy(L, -1);
            lua_remove(L, -2);
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -5); /* leaves k for lua_next */
    }
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "_G");
    make_strict(L, -1);
}

/* Why copies: a policy runs in its model's state, and the library tables
 * of the state's globals are the model's. A policy that set math.max or
 * table.insert there would run its code inside the model, with the
 * model's values (a word2vec step size, the tables it pushes). */
void cr_sandbox_push_env(lua_State *L) { push_env(L, 1); }

/* Runs under lua_pcall: a memory error while building is caught. */
static int build(lua_State *L) {
    make_template(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, TEMPLATE_KEY);
    push_env(L, 0);
    lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    return 0;
}

static size_t mb_bytes(int mb) { return (size_t)mb << 20; }

lua_State *cr_sandbox_new(int memory_mb, const char *label) {
    if (memory_mb < 1 || memory_mb > CR_SANDBOX_MAX_MB) return NULL;
    sbox *s = cr_xcalloc(1, sizeof *s);
    s->cap = mb_bytes(memory_mb);
    s->label = label;
    lua_State *L = lua_newstate(sb_alloc, s);
    if (!L) {
        free(s);
        return NULL;
    }
    lua_pushcfunction(L, build);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        cr_sandbox_close(&L);
        return NULL;
    }
    s->L = L;
    lua_sethook(L, sb_hook, LUA_MASKCOUNT, CR_SANDBOX_HOOK_COUNT);
    return L;
}

void cr_sandbox_close(lua_State **Lp) {
    if (!Lp || !*Lp) return;
    sbox *s = box_of(*Lp);
    s->L = NULL;
    lua_close(*Lp);
    free(s);
    *Lp = NULL;
}

int cr_sandbox_set_limit(lua_State *L, int memory_mb) {
    sbox *s = box_of(L);
    if (memory_mb < 1 || memory_mb > CR_SANDBOX_MAX_MB || mb_bytes(memory_mb) < s->used) return -1;
    s->cap = mb_bytes(memory_mb);
    return 0;
}

int cr_sandbox_limit(lua_State *L) { return (int)(box_of(L)->cap >> 20); }

size_t cr_sandbox_used(lua_State *L) { return box_of(L)->used; }

int cr_sandbox_charge(lua_State *L, size_t bytes) {
    sbox *s = box_of(L);
    if (bytes > s->cap - s->used) return -1;
    s->used += bytes;
    return 0;
}

void cr_sandbox_uncharge(lua_State *L, size_t bytes) {
    if (bytes) box_of(L)->used -= bytes;
}

size_t cr_lsandbox_reserve(lua_State *L, double bytes, const char *fn) {
    if (lua_getallocf(L, NULL) != sb_alloc || !(bytes > 0)) return 0;
    sbox *s = box_of(L);
    if (bytes > (double)(s->cap - s->used)) lua_gc(L, LUA_GCCOLLECT); /* garbage may hold buffers */
    if (bytes > (double)(s->cap - s->used)) {
        char at[200];
        where_in(L, at, sizeof at); /* the script's line, past C wrappers such as the readers' path check */
        lua_pushfstring(L, "%s%s: %s exceeded %d MB (option memory_mb): C buffers of %I MB, %d MB free", at, fn,
                        s->label, cr_sandbox_limit(L), (lua_Integer)fmin(ceil(bytes / 1048576.0), 9e15),
                        (int)((s->cap - s->used) >> 20));
        lua_error(L);
    }
    s->used += (size_t)bytes;
    return (size_t)bytes;
}

const char *cr_sandbox_set_label(lua_State *L, const char *label) {
    sbox *s = box_of(L);
    const char *old = s->label;
    s->label = label;
    return old;
}

void cr_sandbox_set_interrupt(lua_State *L, cr_sandbox_interrupt_fn fn, void *arg) {
    sbox *s = box_of(L);
    s->intr = fn;
    s->intr_arg = arg;
}

void cr_sandbox_reset(lua_State *L) {
    sbox *s = box_of(L);
    /* A refusal may leave garbage that buffers (string.rep, table.concat)
     * cannot reclaim: they allocate without Lua's collect-and-retry. With
     * no finalizer in Lua code (sb_setmetatable), collecting runs no script. */
    if (s->refused) lua_gc(L, LUA_GCCOLLECT);
    s->refused = s->stopped = s->closing = 0;
    if (s->L) lua_sethook(s->L, sb_hook, LUA_MASKCOUNT, CR_SANDBOX_HOOK_COUNT); /* raise_stop made it 1 */
    s->stop_msg[0] = '\0';
    s->where[0] = '\0';
}

int cr_sandbox_load(lua_State *L, const char *src, size_t n, const char *chunkname, int env_idx) {
    if (env_idx) env_idx = lua_absindex(L, env_idx);
    int rc = luaL_loadbufferx(L, src, n, chunkname, "t");
    if (rc == LUA_OK && env_idx) {
        lua_pushvalue(L, env_idx);
        if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
    }
    return rc;
}

const char *cr_sandbox_message(lua_State *L, int status, char *buf, size_t n) {
    sbox *s = box_of(L);
    const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (status == LUA_ERRMEM || (s->refused && msg && !strcmp(msg, "not enough memory")))
        snprintf(buf, n, "%s%s exceeded %d MB (option memory_mb)", s->where, s->label, cr_sandbox_limit(L));
    else if (msg)
        snprintf(buf, n, "%s", msg);
    else
        snprintf(buf, n, "(error object is a %s value)", luaL_typename(L, -1));
    return buf;
}

/* ---------- the policy check (scheduler side) ---------- */

typedef struct pcheck {
    const char *src, *chunk, *opts;
    size_t n, optsn;
    double deadline;
} pcheck;

#define STR_(x) #x
#define STR(x) STR_(x)

static const char *past_deadline(void *arg) {
    const pcheck *c = arg;
    return cr_now() > c->deadline ? "policy script ran longer than " STR(CR_SANDBOX_CHECK_SECONDS) " s (stopped)"
                                  : NULL;
}

/* [-1, +1] pol.may_proceed, through __index if the policy has one. */
static int policy_field(lua_State *P) {
    lua_getfield(P, 1, "may_proceed");
    return 1;
}

static int bad_file(lua_State *P, int status) {
    char msg[CR_SANDBOX_MSG_MAX];
    lua_pushfstring(P, "bad policy file: %s", cr_sandbox_message(P, status, msg, sizeof msg));
    return 1;
}

/* [-0, +1] Runs in the policy's own state, protected: pushes nil when the
 * policy is fine, or its message ("bad policy file: ...", as
 * lua/crescent/policy.lua raises it). */
static int policy_body(lua_State *P) {
    const pcheck *c = lua_touserdata(P, 1);
    lua_pushfstring(P, "@%s", c->chunk);
    int rc = cr_sandbox_load(P, c->src, c->n, lua_tostring(P, -1), 0);
    if (rc == LUA_OK) rc = lua_pcall(P, 0, 1, 0);
    if (rc != LUA_OK) return bad_file(P, rc);
    if (!lua_isfunction(P, -1))
        return lua_pushfstring(P, "bad policy file %s: must return a constructor function(opts)", c->chunk), 1;
    if (cr_lser_load(P, c->opts, c->optsn) < 0)
        return lua_pushfstring(P, "bad policy options: %s", lua_tostring(P, -1)), 1;
    rc = lua_pcall(P, 1, 1, 0);
    if (rc != LUA_OK) return bad_file(P, rc);
    int ok = lua_istable(P, -1);
    if (ok) {
        lua_pushcfunction(P, policy_field);
        lua_insert(P, -2);
        rc = lua_pcall(P, 1, 1, 0);
        if (rc != LUA_OK) return bad_file(P, rc);
        ok = lua_isfunction(P, -1);
    }
    if (!ok)
        return lua_pushfstring(P, "bad policy file %s: the constructor must return a table with "
                                  "may_proceed(my_clock, min_clock, clocks)", c->chunk), 1;
    lua_pushnil(P);
    return 1;
}

int cr_sandbox_check_policy(lua_State *L, const char *src, size_t n, const char *chunkname, int opts_idx,
                            int memory_mb) {
    pcheck c = {src, chunkname, NULL, n, 0, cr_now() + CR_SANDBOX_CHECK_SECONDS};
    char *opts, err[300];
    if (cr_lser_dump(L, opts_idx, &opts, &c.optsn, err, sizeof err) < 0) {
        lua_pushfstring(L, "bad policy options: %s", err);
        return -1;
    }
    c.opts = opts;
    lua_State *P = cr_sandbox_new(memory_mb, "policy script");
    if (!P) {
        free(opts);
        lua_pushfstring(L, "policy check: cannot create a Lua state of %d MB", memory_mb);
        return -1;
    }
    cr_sandbox_set_interrupt(P, past_deadline, &c);
    lua_pushcfunction(P, policy_body);
    lua_pushlightuserdata(P, &c);
    int rc = lua_pcall(P, 1, 1, 0);
    free(opts);
    if (rc != LUA_OK || !lua_isnil(P, -1)) {
        const char *msg = lua_tostring(P, -1);
        lua_pushstring(L, msg ? msg : "bad policy file: error object is not a string");
        cr_sandbox_close(&P);
        return -1;
    }
    cr_sandbox_close(&P);
    return 0;
}

/* check_policy(src, chunkname, opts [, memory_mb]) -> true | nil, message */
static int l_check_policy(lua_State *L) {
    size_t n;
    const char *src = luaL_checklstring(L, 1, &n);
    const char *chunk = luaL_checkstring(L, 2);
    luaL_checkany(L, 3);
    lua_Integer mb = luaL_optinteger(L, 4, CR_SANDBOX_DEFAULT_MB);
    luaL_argcheck(L, mb >= 1 && mb <= CR_SANDBOX_MAX_MB, 4, "memory_mb out of range");
    if (cr_sandbox_check_policy(L, src, n, chunk, 3, (int)mb) < 0) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

int cr_lopen_sandbox(lua_State *L) {
    static const luaL_Reg fns[] = {{"check_policy", l_check_policy}, {NULL, NULL}};
    luaL_newlib(L, fns);
    cr_lsandbox_add_scheme(L);
    lua_pushinteger(L, CR_SANDBOX_DEFAULT_MB);
    lua_setfield(L, -2, "default_memory_mb");
    return 1;
}
