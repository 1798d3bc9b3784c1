/* crescent.core.ps (placeholder: filled in by the ps work). */
#include <lua.h>

#include "lua/l_modules.h"

int cr_lopen_ps(lua_State *L) {
    lua_newtable(L);
    return 1;
}
