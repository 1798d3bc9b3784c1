/* crescent.core.util: the Matrix userdata, seeded rng, monotonic time.
 *
 * Matrix: cr.core.util.matrix(rows, cols [, "f32" | "i32"]) (each at most
 * 2^31 - 1) or matrix({{...},{...}} [, dtype]); m:rows(), m:cols(), m:dtype(), m:get(i, j),
 * m:set(i, j, v) (1-based), m:row(i) -> table, m:totable(), #m == rows,
 * m:norms([col]) -> sum |x|, sum x^2, non-zeros (f32), tostring(m).
 * Ints: cr.core.util.ints(n) or ints{...}; see l_util.h. */
#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/cr_time.h"
#include "lua/l_modules.h"
#include "lua/l_util.h"

typedef struct {
    cr_mat m;
    int dtype;
    float data[];
} lmat;

cr_mat *cr_lmat_new(lua_State *L, int64_t rows, int64_t cols) { return cr_lmat_new_typed(L, rows, cols, CR_LDT_F32); }

cr_mat *cr_lmat_new_typed(lua_State *L, int64_t rows, int64_t cols, int dtype) {
    if (rows < 0 || cols < 0) luaL_error(L, "matrix size must be non-negative");
    /* Each side is bounded, not only the bytes: a matrix of 0 columns takes
     * no memory whatever its rows, and a loop over 2^62 of them (m:norms)
     * ran in C, where not even a cancel stops it. */
    if (rows > INT32_MAX || cols > INT32_MAX)
        luaL_error(L, "matrix too large (%I x %I; at most %d rows and columns)", (lua_Integer)rows,
                   (lua_Integer)cols, INT32_MAX);
    if (cols > 0 && rows > (int64_t)((SIZE_MAX - sizeof(lmat)) / sizeof(float)) / cols)
        luaL_error(L, "matrix too large");
    size_t n = (size_t)(rows * cols);
    lmat *u = lua_newuserdatauv(L, sizeof(lmat) + n * sizeof(float), 0);
    u->m.rows = rows;
    u->m.cols = cols;
    u->m.data = u->data;
    u->dtype = dtype == CR_LDT_I32 ? CR_LDT_I32 : CR_LDT_F32;
    memset(u->data, 0, n * sizeof(float));
    luaL_setmetatable(L, CR_MATRIX_MT);
    return &u->m;
}

int cr_lmat_dtype(lua_State *L, int idx) { return ((lmat *)luaL_checkudata(L, idx, CR_MATRIX_MT))->dtype; }

cr_mat *cr_lmat_check_i32(lua_State *L, int idx, int32_t **ints) {
    lmat *u = luaL_testudata(L, idx, CR_MATRIX_MT);
    if (!u || u->dtype != CR_LDT_I32) {
        const char *got = u ? "float32 matrix" : luaL_typename(L, idx);
        luaL_argerror(L, idx, lua_pushfstring(L, "int32 matrix expected, got %s", got));
    }
    if (ints) *ints = cr_lmat_ints(&u->m);
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
        luaL_error(L, "%s index %I out of range [1, %I]", what, (LUAI_UACINT)i, (LUAI_UACINT)n);
    return i - 1;
}

static int check_dtype(lua_State *L, int arg) {
    static const char *const names[] = {"f32", "i32", NULL};
    return luaL_checkoption(L, arg, "f32", names) == 1 ? CR_LDT_I32 : CR_LDT_F32;
}

/* Store the value at arg into m[i] (0-based flat index) by the matrix's
 * value type; raises on a value it cannot hold, naming the cell (row and
 * col 1-based; 0: m:set). */
static void store(lua_State *L, lmat *u, int64_t i, int arg, int row, int col) {
    int ok;
    if (u->dtype == CR_LDT_I32) {
        lua_Integer x = lua_tointegerx(L, arg, &ok);
        if (ok && x >= INT32_MIN && x <= INT32_MAX) {
            cr_lmat_ints(&u->m)[i] = (int32_t)x;
            return;
        }
    } else {
        lua_Number v = lua_tonumberx(L, arg, &ok);
        if (ok) {
            u->m.data[i] = (float)v;
            return;
        }
    }
    char where[64] = "matrix set";
    if (row) snprintf(where, sizeof where, "matrix row %d, column %d", row, col);
    if (u->dtype == CR_LDT_I32)
        luaL_error(L, "%s: int32 value expected, got %s", where,
                   lua_isnumber(L, arg) ? lua_tostring(L, arg) : luaL_typename(L, arg));
    luaL_error(L, "%s: number expected", where);
}

static void push_value(lua_State *L, const lmat *u, int64_t i) {
    if (u->dtype == CR_LDT_I32) lua_pushinteger(L, cr_lmat_ints(&u->m)[i]);
    else lua_pushnumber(L, u->m.data[i]);
}

/* matrix(rows, cols [, dtype]) | matrix({{row}, ...} [, dtype]) */
static int l_matrix(lua_State *L) {
    if (lua_istable(L, 1)) {
        int dtype = check_dtype(L, 2);
        lua_Integer rows = luaL_len(L, 1), cols = 0;
        if (rows > 0) {
            lua_geti(L, 1, 1);
            luaL_checktype(L, -1, LUA_TTABLE);
            cols = luaL_len(L, -1);
            lua_pop(L, 1);
        }
        cr_mat *m = cr_lmat_new_typed(L, rows, cols, dtype);
        lmat *u = (lmat *)m;
        for (lua_Integer i = 1; i <= rows; i++) {
            lua_geti(L, 1, i);
            if (!lua_istable(L, -1) || luaL_len(L, -1) != cols)
                return luaL_error(L, "matrix row %d: expected a table of %d numbers", (int)i, (int)cols);
            for (lua_Integer j = 1; j <= cols; j++) {
                lua_geti(L, -1, j);
                store(L, u, (i - 1) * cols + (j - 1), -1, (int)i, (int)j);
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
        return 1;
    }
    cr_lmat_new_typed(L, luaL_checkinteger(L, 1), luaL_checkinteger(L, 2), check_dtype(L, 3));
    return 1;
}

static int m_rows(lua_State *L) { lua_pushinteger(L, cr_lmat_check(L, 1)->rows); return 1; }
static int m_cols(lua_State *L) { lua_pushinteger(L, cr_lmat_check(L, 1)->cols); return 1; }

static int m_dtype(lua_State *L) {
    lua_pushstring(L, cr_lmat_dtype(L, 1) == CR_LDT_I32 ? "i32" : "f32");
    return 1;
}

static int m_get(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    int64_t i = check_index(L, 2, m->rows, "row"), j = check_index(L, 3, m->cols, "column");
    push_value(L, (lmat *)m, i * m->cols + j);
    return 1;
}

static int m_set(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    int64_t i = check_index(L, 2, m->rows, "row"), j = check_index(L, 3, m->cols, "column");
    luaL_checkany(L, 4);
    store(L, (lmat *)m, i * m->cols + j, 4, 0, 0);
    return 0;
}

static void push_row(lua_State *L, const cr_mat *m, int64_t i) {
    lua_createtable(L, (int)m->cols, 0);
    for (int64_t j = 0; j < m->cols; j++) {
        push_value(L, (const lmat *)m, i * m->cols + j);
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

/* m:norms([col]) -> sum |x|, sum x^2, non-zeros: over column col (1-based),
 * or over every value. f32 matrices. */
static int m_norms(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    if (((lmat *)m)->dtype != CR_LDT_F32) luaL_error(L, "norms: an f32 matrix expected");
    int64_t c0 = 0, c1 = m->cols;
    if (!lua_isnoneornil(L, 2)) c0 = check_index(L, 2, m->cols, "column"), c1 = c0 + 1;
    double a = 0, b = 0;
    int64_t nz = 0;
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = c0; j < c1; j++) {
            double x = m->data[i * m->cols + j];
            a += fabs(x), b += x * x, nz += x != 0;
        }
    lua_pushnumber(L, a);
    lua_pushnumber(L, b);
    lua_pushinteger(L, nz);
    return 3;
}

static int m_tostring(lua_State *L) {
    cr_mat *m = cr_lmat_check(L, 1);
    lua_pushfstring(L, "crescent.Matrix(%d x %d%s)", (int)m->rows, (int)m->cols,
                    ((lmat *)m)->dtype == CR_LDT_I32 ? ", i32" : "");
    return 1;
}

typedef struct {
    cr_ints v;
    int64_t data[];
} lints;

cr_ints *cr_lints_new(lua_State *L, int64_t n) {
    if (n < 0) luaL_error(L, "vector size must be non-negative");
    if ((uint64_t)n > (SIZE_MAX - sizeof(lints)) / sizeof(int64_t)) luaL_error(L, "vector too large");
    lints *u = lua_newuserdatauv(L, sizeof(lints) + (size_t)n * sizeof(int64_t), 0);
    u->v.n = n;
    u->v.data = u->data;
    memset(u->data, 0, (size_t)n * sizeof(int64_t));
    luaL_setmetatable(L, CR_INTS_MT);
    return &u->v;
}

cr_ints *cr_lints_test(lua_State *L, int idx) {
    lints *u = luaL_testudata(L, idx, CR_INTS_MT);
    return u ? &u->v : NULL;
}

cr_ints *cr_lints_check(lua_State *L, int idx) {
    lints *u = luaL_checkudata(L, idx, CR_INTS_MT);
    return &u->v;
}

static void fill_from_table(lua_State *L, int idx, cr_ints *v) {
    for (int64_t i = 0; i < v->n; i++) {
        lua_geti(L, idx, i + 1);
        int ok;
        lua_Integer x = lua_tointegerx(L, -1, &ok);
        if (!ok) luaL_error(L, "entry %d: integer expected, got %s", (int)(i + 1), luaL_typename(L, -1));
        v->data[i] = x;
        lua_pop(L, 1);
    }
}

cr_ints *cr_lints_from_arg(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    cr_ints *v = cr_lints_test(L, idx);
    if (v) {
        lua_pushvalue(L, idx);
        return v;
    }
    if (!lua_istable(L, idx)) {
        luaL_typeerror(L, idx, "table of integers or crescent.Ints");
        return NULL;
    }
    v = cr_lints_new(L, (int64_t)luaL_len(L, idx));
    fill_from_table(L, idx, v);
    return v;
}

static int l_ints(lua_State *L) {
    if (lua_istable(L, 1)) {
        cr_lints_from_arg(L, 1);
        return 1;
    }
    cr_lints_new(L, luaL_checkinteger(L, 1));
    return 1;
}

static int v_get(lua_State *L) {
    cr_ints *v = cr_lints_check(L, 1);
    lua_pushinteger(L, v->data[check_index(L, 2, v->n, "vector")]);
    return 1;
}

static int v_set(lua_State *L) {
    cr_ints *v = cr_lints_check(L, 1);
    v->data[check_index(L, 2, v->n, "vector")] = luaL_checkinteger(L, 3);
    return 0;
}

static int v_len(lua_State *L) {
    lua_pushinteger(L, cr_lints_check(L, 1)->n);
    return 1;
}

static int v_totable(lua_State *L) {
    cr_ints *v = cr_lints_check(L, 1);
    lua_createtable(L, (int)v->n, 0);
    for (int64_t i = 0; i < v->n; i++) {
        lua_pushinteger(L, v->data[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int v_tostring(lua_State *L) {
    lua_pushfstring(L, "crescent.Ints(%d)", (int)cr_lints_check(L, 1)->n);
    return 1;
}

int cr_lfail(lua_State *L, const char *msg) {
    luaL_pushfail(L);
    lua_pushstring(L, msg);
    return 2;
}

void cr_lmetatable(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction release,
                   const luaL_Reg *meta) {
    if (luaL_newmetatable(L, name)) {
        if (methods) {
            lua_newtable(L);
            luaL_setfuncs(L, methods, 0);
            lua_setfield(L, -2, "__index");
        }
        lua_pushcfunction(L, release);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, release);
        lua_setfield(L, -2, "__close");
        if (meta) luaL_setfuncs(L, meta, 0);
    }
    lua_pop(L, 1);
}

static int l_now(lua_State *L) { lua_pushnumber(L, cr_now()); return 1; }

int cr_lopen_util(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"rows", m_rows}, {"cols", m_cols}, {"get", m_get}, {"set", m_set},
        {"row", m_row},   {"totable", m_totable}, {"dtype", m_dtype}, {"norms", m_norms}, {NULL, NULL}};
    if (luaL_newmetatable(L, CR_MATRIX_MT)) {
        luaL_newlib(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, m_len);
        lua_setfield(L, -2, "__len");
        lua_pushcfunction(L, m_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    static const luaL_Reg vmethods[] = {
        {"get", v_get}, {"set", v_set}, {"totable", v_totable}, {NULL, NULL}};
    if (luaL_newmetatable(L, CR_INTS_MT)) {
        luaL_newlib(L, vmethods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, v_len);
        lua_setfield(L, -2, "__len");
        lua_pushcfunction(L, v_tostring);
        lua_setfield(L, -2, "__tostring");
    }
    lua_pop(L, 1);
    static const luaL_Reg fns[] = {
        {"matrix", l_matrix}, {"ints", l_ints}, {"now", l_now}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
