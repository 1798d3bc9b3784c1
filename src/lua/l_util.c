/* crescent.core.util: the Matrix userdata, seeded rng, monotonic time.
 *
 * Matrix: cr.core.util.matrix(rows, cols) or matrix{{...},{...}};
 * m:rows(), m:cols(), m:get(i, j), m:set(i, j, v) (1-based), m:row(i) -> table,
 * m:totable(), #m == rows, tostring(m). */
#include <lauxlib.h>
#include <lua.h>
#include <string.h>

#include "base/cr_time.h"
#include "lua/l_modules.h"
#include "lua/l_util.h"

typedef struct {
    cr_mat m;
    float data[];
} lmat;

cr_mat *cr_lmat_new(lua_State *L, int64_t rows, int64_t cols) {
    if (rows < 0 || cols < 0) luaL_error(L, "matrix size must be non-negative");
    if (cols > 0 && rows > (int64_t)((SIZE_MAX - sizeof(lmat)) / sizeof(float)) / cols)
        luaL_error(L, "matrix too large");
    size_t n = (size_t)(rows * cols);
    lmat *u = lua_newuserdatauv(L, sizeof(lmat) + n * sizeof(float), 0);
    u->m.rows = rows;
    u->m.cols = cols;
    u->m.data = u->data;
    memset(u->data, 0, n * sizeof(float));
    luaL_setmetatable(L, CR_MATRIX_MT);
    return &u->m;
}

cr_mat *cr_lmat_test(lua_State *L, int idx) {
    lmat *u = luaL_testudata(L, idx, CR_MATRIX_MT);
    return u ? &u->m : NULL;
}

cr_mat *cr_lmat_check(lua_State *L, int idx) {
    lmat *u = luaL_checkudata(L, idx, CR_MATRIX_MT);
    return &u->m;
}

static int64_t check_index(lua_State *L, int arg, int64_t n, const char *what) {
    lua_Integer i = luaL_checkinteger(L, arg);
    if (i < 1 || i > n)
        luaL_error(L, "%s index %d out of range [1, %d]", what, (int)i, (int)n);
    return i - 1;
}

/* matrix(rows, cols) | matrix{{row}, ...} */
static int l_matrix(lua_State *L) {
    if (lua_istable(L, 1)) {
        lua_Integer rows = luaL_len(L, 1), cols = 0;
        if (rows > 0) {
            lua_geti(L, 1, 1);
            luaL_checktype(L, -1, LUA_TTABLE);
            cols = luaL_len(L, -1);
            lua_pop(L, 1);
        }
        cr_mat *m = cr_lmat_new(L, rows, cols);
        for (lua_Integer i = 1; i <= rows; i++) {
            lua_geti(L, 1, i);
            if (!lua_istable(L, -1) || luaL_len(L, -1) != cols)
                return luaL_error(L, "matrix row %d: expected a table of %d numbers", (int)i, (int)cols);
            for (lua_Integer j = 1; j <= cols; j++) {
                lua_geti(L, -1, j);
                int ok;
                lua_Number v = lua_tonumberx(L, -1, &ok);
                if (!ok) return luaL_error(L, "matrix row %d, column %d: number expected", (int)i, (int)j);
                m->data[(i - 1) * cols + (j - 1)] = (float)v;
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
        return 1;
    }
    cr_lmat_new(L, luaL_checkinteger(L, 1), luaL_checkinteger(L, 2));
    return 1;
}

static int m_rows(lua_State *L) { lua_pushinteger(L, cr_lmat_check(L, 1)->rows); return 1; }
static int m_cols(lua_State *L) { lua_pushinteger(L, cr_lmat_check(L, 1)->cols); return 1; }

static int m_get(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    int64_t i = check_index(L, 2, m->rows, "row"), j = check_index(L, 3, m->cols, "column");
    lua_pushnumber(L, m->data[i * m->cols + j]);
    return 1;
}

static int m_set(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    int64_t i = check_index(L, 2, m->rows, "row"), j = check_index(L, 3, m->cols, "column");
    m->data[i * m->cols + j] = (float)luaL_checknumber(L, 4);
    return 0;
}

static void push_row(lua_State *L, const cr_mat *m, int64_t i) {
    lua_createtable(L, (int)m->cols, 0);
    for (int64_t j = 0; j < m->cols; j++) {
        lua_pushnumber(L, m->data[i * m->cols + j]);
        lua_rawseti(L, -2, j + 1);
    }
}

static int m_row(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    push_row(L, m, check_index(L, 2, m->rows, "row"));
    return 1;
}

static int m_totable(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    lua_createtable(L, (int)m->rows, 0);
    for (int64_t i = 0; i < m->rows; i++) {
        push_row(L, m, i);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int m_len(lua_State *L) { return m_rows(L); }

static int m_tostring(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    lua_pushfstring(L, "crescent.Matrix(%d x %d)", (int)m->rows, (int)m->cols);
    return 1;
}

static int l_now(lua_State *L) { lua_pushnumber(L, cr_now()); return 1; }

int cr_lopen_util(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"rows", m_rows}, {"cols", m_cols}, {"get", m_get}, {"set", m_set},
        {"row", m_row},   {"totable", m_totable}, {NULL, NULL}};
    if (luaL_newmetatable(L, CR_MATRIX_MT)) {
        luaL_newlib(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, m_len);
        lua_setfield(L, -2, "__len");
        lua_pushcfunction(L, m_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    static const luaL_Reg fns[] = {{"matrix", l_matrix}, {"now", l_now}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
