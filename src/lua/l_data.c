/* crescent.core.data: readers and generators as Lua functions.
 *
 * Convention: every reader here returns its result, or nil plus a one-line
 * message ("file:line: what is wrong") for expected failures (missing file,
 * bad line, truncated gzip). Wrong argument types raise. lua/crescent/data.lua
 * wraps these and re-raises with error(msg, 2), so a user's script sees the
 * message with its own file:line in front. Results are plain tables holding
 * crescent.Ints / crescent.Matrix userdata: never one Lua value per element. */
#include <lauxlib.h>
#include <lua.h>
#include <string.h>

#include "data/cr_gen.h"
#include "data/cr_mm.h"
#include "lua/l_modules.h"
#include "lua/l_util.h"

/* Option t[key] as a boolean, with default dflt; raises on a non-boolean. */
static int opt_bool(lua_State *L, int t, const char *key, int dflt) {
    if (lua_isnoneornil(L, t)) return dflt;
    int ty = lua_getfield(L, t, key);
    int v = ty == LUA_TNIL ? dflt : lua_toboolean(L, -1);
    if (ty != LUA_TNIL && ty != LUA_TBOOLEAN) luaL_error(L, "option '%s' must be a boolean", key);
    lua_pop(L, 1);
    return v;
}

/* Reject keys of the options table t that are not in allowed (NULL-ended). */
static void check_keys(lua_State *L, int t, const char *const *allowed) {
    if (lua_isnoneornil(L, t)) return;
    luaL_checktype(L, t, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        int ok = 0;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int i = 0; allowed[i]; i++) ok |= !strcmp(lua_tostring(L, -1), allowed[i]);
        if (!ok) luaL_error(L, "unknown option '%s'", luaL_tolstring(L, -1, NULL));
    }
}

/* ---- matrix_market ---- */

typedef struct coo_ud {
    lua_State *L;
    int base; /* stack top before the three arrays */
} coo_ud;

/* cr_coo_alloc: the arrays are userdata left on the Lua stack at base+1..3. */
static int coo_alloc(void *p, cr_coo *m, cr_err *e) {
    (void)e;
    coo_ud *u = p;
    lua_settop(u->L, u->base);
    m->row = cr_lints_new(u->L, m->nnz)->data;
    m->col = cr_lints_new(u->L, m->nnz)->data;
    m->val = cr_lmat_new(u->L, m->nnz, 1)->data;
    return 0;
}

/* matrix_market(path [, {cache=true, rebuild=false}]) -> {rows, cols, nnz,
 * row = Ints, col = Ints (0-based), val = Matrix nnz x 1, cached = bool}
 * | nil, msg */
static int l_matrix_market(lua_State *L) {
    static const char *const keys[] = {"cache", "rebuild", NULL};
    const char *path = luaL_checkstring(L, 1);
    check_keys(L, 2, keys);
    int flags = (opt_bool(L, 2, "cache", 1) ? 0 : CR_MM_NO_CACHE) | (opt_bool(L, 2, "rebuild", 0) ? CR_MM_REBUILD : 0);
    coo_ud u = {L, lua_gettop(L)};
    cr_coo m;
    cr_err e;
    int cached;
    if (cr_mm_load(path, flags, coo_alloc, &u, &m, &cached, &e) != 0) {
        lua_settop(L, u.base);
        luaL_pushfail(L);
        lua_pushstring(L, e.msg);
        return 2;
    }
    lua_createtable(L, 0, 8);
    lua_rotate(L, u.base + 1, 1); /* result table below the three arrays */
    lua_setfield(L, u.base + 1, "val");
    lua_setfield(L, u.base + 1, "col");
    lua_setfield(L, u.base + 1, "row");
    lua_pushinteger(L, m.rows);
    lua_setfield(L, -2, "rows");
    lua_pushinteger(L, m.cols);
    lua_setfield(L, -2, "cols");
    lua_pushinteger(L, m.nnz);
    lua_setfield(L, -2, "nnz");
    lua_pushboolean(L, cached);
    lua_setfield(L, -2, "cached");
    lua_pushstring(L, path);
    lua_setfield(L, -2, "path");
    return 1;
}

/* write_matrix_market(path, {rows=, cols=, row=Ints, col=Ints, val=Matrix}
 * [, pattern]) -> true | nil, msg */
static int l_write_matrix_market(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    int pattern = lua_toboolean(L, 3);
    cr_coo m;
    lua_getfield(L, 2, "rows");
    lua_getfield(L, 2, "cols");
    m.rows = luaL_checkinteger(L, -2);
    m.cols = luaL_checkinteger(L, -1);
    lua_getfield(L, 2, "row");
    lua_getfield(L, 2, "col");
    lua_getfield(L, 2, "val");
    cr_ints *r = cr_lints_check(L, -3), *c = cr_lints_check(L, -2);
    cr_mat *v = pattern && lua_isnil(L, -1) ? NULL : cr_lmat_check(L, -1);
    m.nnz = r->n;
    if (c->n != m.nnz || (v && v->rows * v->cols != m.nnz))
        return luaL_error(L, "row, col and val must have the same length");
    for (int64_t i = 0; i < m.nnz; i++)
        if (r->data[i] < 0 || r->data[i] >= m.rows || c->data[i] < 0 || c->data[i] >= m.cols)
            return luaL_error(L, "entry %d: (%d, %d) outside %d x %d", (int)i + 1, (int)r->data[i],
                              (int)c->data[i], (int)m.rows, (int)m.cols);
    m.row = r->data;
    m.col = c->data;
    float one = 1;
    m.val = v ? v->data : &one;
    if (!v && m.nnz > 1) pattern = 1;
    cr_err e;
    if (cr_mm_write(path, &m, pattern, &e) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, e.msg);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"matrix_market", l_matrix_market},
    {"write_matrix_market", l_write_matrix_market},
    {NULL, NULL},
};

int cr_lopen_data(lua_State *L) {
    luaL_newlib(L, funcs);
    return 1;
}
