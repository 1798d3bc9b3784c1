/* crescent.core.kernels (placeholder: filled in by the kernels work). */
#include <lua.h>

#include "lua/l_modules.h"

int cr_lopen_kernels(lua_State *L) {
    lua_newtable(L);
    return 1;
}
