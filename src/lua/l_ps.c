/* crescent.core.ps: the C half of the scheduler side of a job
 * (lua/crescent builds the user API on top). This file assembles the module
 * from its parts and holds the small functions that belong to none:
 *
 * ps.start{...} -> Job                 (l_job.c)
 * ps.progress(label, total) -> P       (l_progress.c)
 * ps.ckpt_writer(path), ps.ckpt_reader(path)  (l_ckpt.c)
 * ps.serialize(v) -> string; ps.deserialize(s) -> v  (l_worker_serial.c)
 * ps.state_dim(optimizer, dim) -> floats of optimizer state per row
 * ps.overrides() -> the command line's overrides table (or nil)
 * `crescent run` itself is l_run.c. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>

#include "lua/l_modules.h"
#include "lua/l_ps_impl.h"
#include "lua/l_worker_serial.h"
#include "optim/cr_optim.h"

static int l_serialize(lua_State *L) {
    char *out, err[300];
    size_t len;
    if (cr_lser_dump(L, 1, &out, &len, err, sizeof err) < 0) return luaL_error(L, "%s", err);
    lua_pushlstring(L, out, len);
    free(out);
    return 1;
}

static int l_deserialize(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    if (cr_lser_load(L, s, n) < 0) return luaL_error(L, "cannot deserialize: %s", lua_tostring(L, -1));
    return 1;
}

static int l_state_dim(lua_State *L) {
    cr_optim o = {0};
    cr_err e;
    if (cr_optim_parse(&o, luaL_checkstring(L, 1), &e) < 0) return luaL_error(L, "%s", e.msg);
    lua_pushinteger(L, cr_optim_state_dim(&o, (int32_t)luaL_checkinteger(L, 2)));
    return 1;
}

static int l_overrides(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "crescent.overrides");
    return 1;
}

int cr_lopen_ps(lua_State *L) {
    static const luaL_Reg fns[] = {{"start", cr_ljob_start},         {"serialize", l_serialize},
                                   {"deserialize", l_deserialize},   {"state_dim", l_state_dim},
                                   {"overrides", l_overrides},       {"progress", cr_lprogress_new},
                                   {"ckpt_writer", cr_lckpt_writer}, {"ckpt_reader", cr_lckpt_reader},
                                   {NULL, NULL}};
    cr_ljob_register(L);
    cr_lprogress_register(L);
    cr_lckpt_register(L);
    luaL_newlib(L, fns);
    return 1;
}
