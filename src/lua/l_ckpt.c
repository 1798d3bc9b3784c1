/* crescent.core.ps checkpoint files (src/ps/cr_ckpt.h):
 * ps.ckpt_writer(path) -> Wr | nil, msg
 *   Wr:meta(k, v); Wr:table(name, keys, dim, optimizer, sdim [, dtype "f32"|"i32" [, sparse]]);
 *   Wr:rows(values, state|nil); Wr:commit(); Wr:abort()  (raise on failure)
 * ps.ckpt_reader(path) -> Rd | nil, msg   (the whole file is verified here)
 *   Rd:next_table() -> {name=, keys=, dim=, optimizer=, state_dim=, dtype=, sparse=} | nil;
 *   (sparse: the keys ride in the first two state columns, ps/cr_ckpt.h)
 *   Rd:rows(count, dim, sdim [, dtype]) -> values (a Matrix of that dtype), state; Rd:meta(k) -> string|nil;
 *   Rd:version() -> format version of the file; Rd:close() */
#include <lauxlib.h>
#include <lua.h>

#include "lua/l_ps_impl.h"
#include "lua/l_util.h"
#include "ps/cr_ckpt.h"

#define CKW_MT "crescent.CkptWriter"
#define CKR_MT "crescent.CkptReader"

static cr_ckpt_writer **check_ckw(lua_State *L) {
    cr_ckpt_writer **w = luaL_checkudata(L, 1, CKW_MT);
    if (!*w) luaL_error(L, "checkpoint writer is closed");
    return w;
}

static cr_ckpt_reader **check_ckr(lua_State *L) {
    cr_ckpt_reader **r = luaL_checkudata(L, 1, CKR_MT);
    if (!*r) luaL_error(L, "checkpoint reader is closed");
    return r;
}

int cr_lckpt_writer(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_ckpt_writer **w = lua_newuserdatauv(L, sizeof *w, 0);
    *w = NULL;
    luaL_setmetatable(L, CKW_MT);
    cr_err e;
    if (!(*w = cr_ckpt_writer_open(path, &e))) return cr_lfail(L, e.msg);
    return 1;
}

static int ckw_fail(lua_State *L, cr_ckpt_writer **w, cr_err *e) {
    cr_ckpt_writer_abort(w);
    return luaL_error(L, "%s", e->msg);
}

static int ckw_meta(lua_State *L) {
    cr_ckpt_writer **w = check_ckw(L);
    cr_err e;
    if (cr_ckpt_put_meta(*w, luaL_checkstring(L, 2), luaL_checkstring(L, 3), &e) < 0) return ckw_fail(L, w, &e);
    return 0;
}

/* [-0, +0] Optional dtype name at idx ("f32" default, "i32") -> CR_CKPT_*. */
static int opt_dtype(lua_State *L, int idx) {
    static const char *const names[] = {"f32", "i32", NULL};
    return luaL_checkoption(L, idx, "f32", names) == 1 ? CR_CKPT_I32 : CR_CKPT_F32;
}

static int ckw_table(lua_State *L) {
    cr_ckpt_writer **w = check_ckw(L);
    int dtype = opt_dtype(L, 7) | (lua_toboolean(L, 8) ? CR_CKPT_SPARSE : 0);
    cr_err e;
    if (cr_ckpt_put_table_typed(*w, luaL_checkstring(L, 2), luaL_checkinteger(L, 3),
                                (int32_t)luaL_checkinteger(L, 4), luaL_optstring(L, 5, ""),
                                (int32_t)luaL_optinteger(L, 6, 0), dtype, &e) < 0)
        return ckw_fail(L, w, &e);
    return 0;
}

/* Values of either value type: the file keeps their 4-byte patterns. */
static int ckw_rows(lua_State *L) {
    cr_ckpt_writer **w = check_ckw(L);
    cr_mat *v = cr_lmat_check(L, 2), *st = cr_lmat_test(L, 3);
    cr_err e;
    if (cr_ckpt_put_rows(*w, v->rows, v->data, st && st->cols ? st->data : NULL, &e) < 0) return ckw_fail(L, w, &e);
    return 0;
}

static int ckw_commit(lua_State *L) {
    cr_ckpt_writer **w = check_ckw(L);
    cr_err e;
    if (cr_ckpt_writer_commit(w, &e) < 0) return luaL_error(L, "%s", e.msg);
    return 0;
}

static int ckw_gc(lua_State *L) {
    cr_ckpt_writer_abort(luaL_checkudata(L, 1, CKW_MT));
    return 0;
}

int cr_lckpt_reader(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_ckpt_reader **r = lua_newuserdatauv(L, sizeof *r, 0);
    *r = NULL;
    luaL_setmetatable(L, CKR_MT);
    cr_err e;
    if (!(*r = cr_ckpt_reader_open(path, &e))) return cr_lfail(L, e.msg);
    return 1;
}

static int ckr_next(lua_State *L) {
    cr_ckpt_reader **r = check_ckr(L);
    cr_ckpt_table_info info;
    cr_err e;
    int rc = cr_ckpt_next_table(*r, &info, &e);
    if (rc < 0) return luaL_error(L, "%s", e.msg);
    if (rc == 0) return 0;
    lua_createtable(L, 0, 6);
    lua_pushstring(L, (info.dtype & ~CR_CKPT_SPARSE) == CR_CKPT_I32 ? "i32" : "f32");
    lua_setfield(L, -2, "dtype");
    lua_pushboolean(L, (info.dtype & CR_CKPT_SPARSE) != 0);
    lua_setfield(L, -2, "sparse");
    lua_pushstring(L, info.name);
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, info.keys);
    lua_setfield(L, -2, "keys");
    lua_pushinteger(L, info.dim);
    lua_setfield(L, -2, "dim");
    lua_pushstring(L, info.optimizer);
    lua_setfield(L, -2, "optimizer");
    lua_pushinteger(L, info.state_dim);
    lua_setfield(L, -2, "state_dim");
    return 1;
}

static int ckr_rows(lua_State *L) {
    cr_ckpt_reader **r = check_ckr(L);
    lua_Integer n = luaL_checkinteger(L, 2);
    int dtype = opt_dtype(L, 5);
    lua_settop(L, 4);
    cr_mat *v = cr_lmat_new_typed(L, n, luaL_checkinteger(L, 3), dtype == CR_CKPT_I32 ? CR_LDT_I32 : CR_LDT_F32);
    cr_mat *st = cr_lmat_new(L, n, luaL_checkinteger(L, 4));
    cr_err e;
    if (cr_ckpt_get_rows(*r, n, v->data, st->cols ? st->data : NULL, &e) < 0) return luaL_error(L, "%s", e.msg);
    return 2;
}

static int ckr_meta(lua_State *L) {
    const char *v = cr_ckpt_get_meta(*check_ckr(L), luaL_checkstring(L, 2));
    if (v) lua_pushstring(L, v);
    else lua_pushnil(L);
    return 1;
}

static int ckr_version(lua_State *L) {
    lua_pushinteger(L, cr_ckpt_version(*check_ckr(L)));
    return 1;
}

static int ckr_close(lua_State *L) {
    cr_ckpt_reader_close(luaL_checkudata(L, 1, CKR_MT));
    return 0;
}

void cr_lckpt_register(lua_State *L) {
    static const luaL_Reg wm[] = {{"meta", ckw_meta}, {"table", ckw_table}, {"rows", ckw_rows},
                                  {"commit", ckw_commit}, {"abort", ckw_gc}, {NULL, NULL}};
    static const luaL_Reg rm[] = {{"next_table", ckr_next}, {"rows", ckr_rows}, {"meta", ckr_meta},
                                  {"version", ckr_version}, {"close", ckr_close}, {NULL, NULL}};
    cr_lmetatable(L, CKW_MT, wm, ckw_gc, NULL);
    cr_lmetatable(L, CKR_MT, rm, ckr_close, NULL);
}

