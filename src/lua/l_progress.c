/* crescent.core.ps.progress: a progress bar on stderr for the scheduler
 * (job:epoch), over src/base/cr_progress.h.
 * ps.progress(label, total) -> P; P:add(n); P:done() (also __gc and __close). */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>

#include "base/cr_progress.h"
#include "lua/l_ps_impl.h"
#include "lua/l_util.h"

#define PROGRESS_MT "crescent.Progress"

static cr_progress **check_progress(lua_State *L) { return luaL_checkudata(L, 1, PROGRESS_MT); }

int cr_lprogress_new(lua_State *L) {
    const char *label = luaL_checkstring(L, 1);
    lua_Integer total = luaL_optinteger(L, 2, 0);
    cr_progress **p = lua_newuserdatauv(L, sizeof *p, 0);
    *p = NULL;
    luaL_setmetatable(L, PROGRESS_MT);
    *p = cr_progress_new(label, total > 0 ? (uint64_t)total : 0, stderr);
    return 1;
}

static int p_add(lua_State *L) {
    cr_progress **p = check_progress(L);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (*p && n > 0) cr_progress_add(*p, (uint64_t)n);
    return 0;
}

static int p_done(lua_State *L) {
    cr_progress_done(check_progress(L));
    return 0;
}

void cr_lprogress_register(lua_State *L) {
    static const luaL_Reg pmethods[] = {{"add", p_add}, {"done", p_done}, {NULL, NULL}};
    cr_lmetatable(L, PROGRESS_MT, pmethods, p_done, NULL);
}
