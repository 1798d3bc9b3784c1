/* `crescent run`: a job script in a scheduler Lua state, then the REPL. */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>

#include "lua/l_host.h"
#include "lua/l_ps.h"
#include "lua/l_repl.h"


static void set_overrides(lua_State *L, const cr_run_overrides *ov) {
    lua_newtable(L);
    if (ov->nodes >= 0) lua_pushinteger(L, ov->nodes), lua_setfield(L, -2, "nodes");
    if (ov->workers >= 0) lua_pushinteger(L, ov->workers), lua_setfield(L, -2, "workers");
    if (ov->seed >= 0) lua_pushinteger(L, ov->seed), lua_setfield(L, -2, "seed");
    if (ov->policy) lua_pushstring(L, ov->policy), lua_setfield(L, -2, "policy");
    if (ov->metrics) lua_pushstring(L, ov->metrics), lua_setfield(L, -2, "metrics");
    if (ov->sampling) lua_pushstring(L, ov->sampling), lua_setfield(L, -2, "sampling");
    if (ov->world > 0) lua_pushinteger(L, ov->world), lua_setfield(L, -2, "world");
    if (ov->local_nodes > 0) lua_pushinteger(L, ov->local_nodes), lua_setfield(L, -2, "local_nodes");
    if (ov->external) lua_pushboolean(L, 1), lua_setfield(L, -2, "external");
    if (ov->listen) lua_pushstring(L, ov->listen), lua_setfield(L, -2, "listen");
    if (ov->launcher) lua_pushstring(L, ov->launcher), lua_setfield(L, -2, "launcher");
    if (ov->checkpoint) lua_pushstring(L, ov->checkpoint), lua_setfield(L, -2, "checkpoint");
    if (ov->checkpoint_every > 0) lua_pushinteger(L, ov->checkpoint_every), lua_setfield(L, -2, "checkpoint_every");
    if (ov->restarts > 0) lua_pushinteger(L, ov->restarts), lua_setfield(L, -2, "restarts");
    if (ov->checkpoint_seconds > 0)
        lua_pushinteger(L, ov->checkpoint_seconds), lua_setfield(L, -2, "checkpoint_seconds");
    if (ov->rejoin > 0) lua_pushinteger(L, ov->rejoin), lua_setfield(L, -2, "rejoin");
    lua_setfield(L, LUA_REGISTRYINDEX, "crescent.overrides");
}

/* 1 if the script loaded the library and a job it left open lost a node. */
static int node_died(lua_State *L) {
    int top = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "crescent.job");
    int died = 0;
    if (lua_istable(L, -1) && lua_getfield(L, -1, "any_failed") == LUA_TFUNCTION && lua_pcall(L, 0, 1, 0) == LUA_OK)
        died = lua_toboolean(L, -1);
    lua_settop(L, top);
    return died;
}

/* require("crescent.job").close_all(), if the script loaded the library:
 * every job it left open is shut down (its nodes stopped) before the state
 * goes. LUA_OK, or an error status with the message on the stack. */
static int close_jobs(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "crescent.job");
    lua_remove(L, -2);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return LUA_OK;
    }
    lua_getfield(L, -1, "close_all");
    lua_remove(L, -2);
    return lua_pcall(L, 0, 0, 0);
}

int cr_lps_run(const char *home, const char *path, const cr_run_overrides *ov, int repl, int argc, char **argv) {
    lua_State *L = cr_lhost_new(home);
    if (!L) {
        fprintf(stderr, "crescent: out of memory\n");
        return 1;
    }
    set_overrides(L, ov);
    lua_createtable(L, argc, 1);
    lua_pushstring(L, path);
    lua_rawseti(L, -2, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setglobal(L, "arg");
    int status = cr_lhost_dofile(L, path, argc, argv) == 0 ? 0 : 1;
    if (status && node_died(L)) status = CR_RUN_NODE_DIED;
    if (status == 0 && repl) {
        int q = cr_repl_run(L);
        if (q) status = q;
    }
    if (close_jobs(L) != LUA_OK) {
        fprintf(stderr, "crescent: %s\n", lua_tostring(L, -1));
        status = 1;
    }
    lua_close(L);
    fflush(stdout);
    return status;
}
