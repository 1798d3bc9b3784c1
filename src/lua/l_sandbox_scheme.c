/* Sampling scheme scripts (configs/sampling/NAME.lua or a user's file) run
 * on the scheduler in a sandboxed state of their own: the same allow-list
 * as model and policy scripts, a memory cap and a time limit. The script
 * returns a constructor function(opts); what the constructor returns must
 * be plain data (the configuration of the C sampling manager), copied back
 * into the caller's state. lua/crescent/sampling.lua checks its fields. */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/cr_time.h"
#include "lua/l_sandbox.h"
#include "lua/l_worker_serial.h"

typedef struct srun {
    const char *src, *chunk, *opts;
    size_t n, optsn;
    double deadline;
    char *out; /* the constructor's result, serialized */
    size_t outn;
} srun;

#define STR_(x) #x
#define STR(x) STR_(x)

static const char *past_deadline(void *arg) {
    const srun *c = arg;
    return cr_now() > c->deadline ? "sampling scheme ran longer than " STR(CR_SANDBOX_CHECK_SECONDS) " s (stopped)"
                                  : NULL;
}

static int bad_file(lua_State *P, int status) {
    char msg[CR_SANDBOX_MSG_MAX];
    lua_pushfstring(P, "bad sampling scheme: %s", cr_sandbox_message(P, status, msg, sizeof msg));
    return 1;
}

/* ---- options the constructor never looked at ----
 * The constructor gets a proxy of its options: reading a key through it
 * (opts.pool) or walking them (pairs(opts)) marks keys as seen; a key never
 * seen is an option the scheme does not know, refused by name even when
 * the script forgets to check. Upvalues: 1 the options, 2 the seen keys. */

static int opt_index(lua_State *P) {
    lua_pushvalue(P, 2);
    lua_pushboolean(P, 1);
    lua_rawset(P, lua_upvalueindex(2));
    lua_pushvalue(P, 2);
    lua_rawget(P, lua_upvalueindex(1));
    return 1;
}

static int opt_pairs(lua_State *P) {
    for (lua_pushnil(P); lua_next(P, lua_upvalueindex(1)); lua_pop(P, 1)) {
        lua_pushvalue(P, -2);
        lua_pushboolean(P, 1);
        lua_rawset(P, lua_upvalueindex(2));
    }
    lua_getglobal(P, "next");
    lua_pushvalue(P, lua_upvalueindex(1));
    lua_pushnil(P);
    return 3;
}

static int opt_newindex(lua_State *P) {
    lua_settop(P, 3);
    lua_rawset(P, lua_upvalueindex(1));
    return 0;
}

/* [-1, +1] Replace the options table at the top by its proxy; the options
 * and the seen set go to *opts_idx and *seen_idx (absolute). */
static void proxy_opts(lua_State *P, int *opts_idx, int *seen_idx) {
    if (!lua_istable(P, -1)) {
        lua_pop(P, 1);
        lua_newtable(P);
    }
    *opts_idx = lua_gettop(P);
    lua_newtable(P);
    *seen_idx = lua_gettop(P);
    lua_newtable(P); /* the proxy */
    lua_createtable(P, 0, 3);
    static const struct { const char *name; lua_CFunction f; } mm[] = {
        {"__index", opt_index}, {"__pairs", opt_pairs}, {"__newindex", opt_newindex}};
    for (int i = 0; i < 3; i++) {
        lua_pushvalue(P, *opts_idx);
        lua_pushvalue(P, *seen_idx);
        lua_pushcclosure(P, mm[i].f, 2);
        lua_setfield(P, -2, mm[i].name);
    }
    lua_setmetatable(P, -2);
}

/* The first option never seen, or NULL. */
static const char *unseen(lua_State *P, int opts_idx, int seen_idx) {
    for (lua_pushnil(P); lua_next(P, opts_idx); lua_pop(P, 1)) {
        lua_pushvalue(P, -2);
        if (lua_rawget(P, seen_idx) == LUA_TNIL) {
            lua_pop(P, 2);
            return luaL_tolstring(P, -1, NULL);
        }
        lua_pop(P, 1);
    }
    return NULL;
}

/* [-0, +1] In the scheme's own state, protected: pushes nil with c->out
 * set, or the message. */
static int scheme_body(lua_State *P) {
    srun *c = lua_touserdata(P, 1);
    lua_pushfstring(P, "@%s", c->chunk);
    int rc = cr_sandbox_load(P, c->src, c->n, lua_tostring(P, -1), 0);
    if (rc == LUA_OK) rc = lua_pcall(P, 0, 1, 0);
    if (rc != LUA_OK) return bad_file(P, rc);
    if (!lua_isfunction(P, -1))
        return lua_pushfstring(P, "bad sampling scheme %s: must return a constructor function(opts)", c->chunk), 1;
    if (cr_lser_load(P, c->opts, c->optsn) < 0)
        return lua_pushfstring(P, "bad sampling scheme options: %s", lua_tostring(P, -1)), 1;
    int opts_idx, seen_idx;
    proxy_opts(P, &opts_idx, &seen_idx);
    lua_pushvalue(P, opts_idx - 1); /* the constructor, then the proxy */
    lua_insert(P, -2);
    rc = lua_pcall(P, 1, 1, 0);
    if (rc != LUA_OK) return bad_file(P, rc);
    const char *k = unseen(P, opts_idx, seen_idx);
    if (k) return lua_pushfstring(P, "bad sampling scheme %s: unknown option '%s' (the scheme never reads it)", c->chunk, k), 1;
    if (!lua_istable(P, -1))
        return lua_pushfstring(P, "bad sampling scheme %s: the constructor must return a table (got %s)", c->chunk,
                               luaL_typename(P, -1)), 1;
    char err[300];
    if (cr_lser_dump(P, -1, &c->out, &c->outn, err, sizeof err) < 0)
        return lua_pushfstring(P, "bad sampling scheme %s: the constructor must return plain data: %s", c->chunk,
                               err), 1;
    lua_pushnil(P);
    return 1;
}

/* run_scheme(src, chunkname, opts [, memory_mb]) -> config table | nil, message */
static int l_run_scheme(lua_State *L) {
    srun c = {0};
    c.src = luaL_checklstring(L, 1, &c.n);
    c.chunk = luaL_checkstring(L, 2);
    luaL_checkany(L, 3);
    lua_Integer mb = luaL_optinteger(L, 4, CR_SANDBOX_DEFAULT_MB);
    luaL_argcheck(L, mb >= 1 && mb <= CR_SANDBOX_MAX_MB, 4, "memory_mb out of range");
    char *opts, err[300];
    if (cr_lser_dump(L, 3, &opts, &c.optsn, err, sizeof err) < 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "bad sampling scheme options: %s", err);
        return 2;
    }
    c.opts = opts;
    c.deadline = cr_now() + CR_SANDBOX_CHECK_SECONDS;
    lua_State *P = cr_sandbox_new((int)mb, "sampling scheme");
    if (!P) {
        free(opts);
        return luaL_error(L, "sampling scheme: cannot create a Lua state of %d MB", (int)mb);
    }
    cr_sandbox_set_interrupt(P, past_deadline, &c);
    lua_pushcfunction(P, scheme_body);
    lua_pushlightuserdata(P, &c);
    int rc = lua_pcall(P, 1, 1, 0);
    free(opts);
    if (rc != LUA_OK || !lua_isnil(P, -1)) {
        const char *msg = lua_tostring(P, -1);
        lua_pushnil(L);
        lua_pushstring(L, msg ? msg : "bad sampling scheme: error object is not a string");
        cr_sandbox_close(&P);
        free(c.out);
        return 2;
    }
    cr_sandbox_close(&P);
    int ok = cr_lser_load(L, c.out, c.outn) == 0;
    free(c.out);
    if (!ok) return lua_error(L);
    return 1;
}

void cr_lsandbox_add_scheme(lua_State *L) {
    lua_pushcfunction(L, l_run_scheme);
    lua_setfield(L, -2, "run_scheme");
}
