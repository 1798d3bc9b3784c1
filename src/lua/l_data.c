/* crescent.core.data (placeholder: filled in by the data work). */
#include <lua.h>

#include "lua/l_modules.h"

int cr_lopen_data(lua_State *L) {
    lua_newtable(L);
    return 1;
}
