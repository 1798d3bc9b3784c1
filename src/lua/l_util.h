#ifndef CR_L_UTIL_H
#define CR_L_UTIL_H
/* Shared userdata for all bindings: "crescent.Matrix", a float32 row-major
 * matrix whose storage lives inside the userdata (freed by Lua's GC). */

#include <lua.h>

#include "base/cr_mat.h"

#define CR_MATRIX_MT "crescent.Matrix"

/* [-0, +1] Push a new zero-filled rows x cols matrix; returns its cr_mat view
 * (valid while the userdata is alive). Raises on negative sizes. */
cr_mat *cr_lmat_new(lua_State *L, int64_t rows, int64_t cols);

/* [-0, +0] The matrix at idx; raises a "bad argument" error if it is not one. */
cr_mat *cr_lmat_check(lua_State *L, int idx);

/* [-0, +0] The matrix at idx, or NULL. */
cr_mat *cr_lmat_test(lua_State *L, int idx);

#endif
