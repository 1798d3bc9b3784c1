#ifndef CR_L_UTIL_H
#define CR_L_UTIL_H
/* Shared userdata for all bindings: "crescent.Matrix", a row-major matrix of
 * 4-byte values whose storage lives inside the userdata (freed by Lua's GC).
 * Its value type is float32 (CR_LDT_F32, the default) or int32 (CR_LDT_I32,
 * the counts of dtype = "i32" tables): the cr_mat view's data then holds
 * int32_t bit patterns and must be read through cr_lmat_ints. m:get, m:row
 * and m:totable return Lua integers for int32 matrices; m:set refuses a
 * non-integer or a value outside int32 there. */

#include <lauxlib.h>
#include <lua.h>

#include "base/cr_mat.h"

#define CR_MATRIX_MT "crescent.Matrix"

/* [-0, +1] Push a new zero-filled rows x cols matrix; returns its cr_mat view
 * (valid while the userdata is alive). Raises on negative sizes. */
cr_mat *cr_lmat_new(lua_State *L, int64_t rows, int64_t cols);

enum { CR_LDT_F32 = 0, CR_LDT_I32 = 1 };

/* [-0, +1] Push a new zero-filled rows x cols matrix of value type dtype
 * (CR_LDT_F32 or CR_LDT_I32). */
cr_mat *cr_lmat_new_typed(lua_State *L, int64_t rows, int64_t cols, int dtype);
/* [-0, +0] Value type of the matrix at idx (which must be one). */
int cr_lmat_dtype(lua_State *L, int idx);
/* [-0, +0] The int32 matrix at idx as its cr_mat view and its int32 data;
 * raises "bad argument #idx (int32 matrix expected, got ...)" otherwise. */
cr_mat *cr_lmat_check_i32(lua_State *L, int idx, int32_t **ints);
/* The int32 data of a cr_mat view of an int32 matrix. */
static inline int32_t *cr_lmat_ints(const cr_mat *m) { return (int32_t *)(void *)m->data; }

/* [-0, +0] The matrix at idx; raises a "bad argument" error if it is not one. */
cr_mat *cr_lmat_check(lua_State *L, int idx);

/* [-0, +0] The matrix at idx, or NULL. */
cr_mat *cr_lmat_test(lua_State *L, int idx);

/* "crescent.Ints": an int64 vector (keys for pull/push, ids from readers).
 * Lua: util.ints(n) (zeros) or util.ints{1, 2, 3}; v:get(i), v:set(i, x)
 * (1-based positions, values as stored), #v, v:totable(). */
#define CR_INTS_MT "crescent.Ints"

typedef struct cr_ints {
    int64_t n;
    int64_t *data; /* storage inside the userdata */
} cr_ints;

/* [-0, +1] Push a new zero-filled vector of n values. */
cr_ints *cr_lints_new(lua_State *L, int64_t n);
/* [-0, +0] The vector at idx; raises "bad argument" if it is not one. */
cr_ints *cr_lints_check(lua_State *L, int idx);
cr_ints *cr_lints_test(lua_State *L, int idx);
/* [-0, +1] Keys argument at idx as an int64 array: an Ints userdata is used
 * as is; a Lua table of integers is converted into a new Ints pushed on the
 * stack (so it stays alive). Raises a clear error on a non-integer entry. */
cr_ints *cr_lints_from_arg(lua_State *L, int idx);

/* [-0, +2] nil, msg: the expected-failure return of a binding
 * (`return cr_lfail(L, e.msg);`). */
int cr_lfail(lua_State *L, const char *msg);

/* [-0, +0] Register the metatable `name` of a userdata type, once (nothing
 * if it exists): `methods` (may be NULL) as its __index table, `release` as
 * both __gc and __close, and `meta` (may be NULL) as further metamethods
 * (__len, __tostring, an __index function). One function for both because
 * a to-be-closed variable releases the object and the collector finalizes
 * it later again: release must be idempotent, and every method must refuse
 * a released object. */
void cr_lmetatable(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction release,
                   const luaL_Reg *meta);

#endif
