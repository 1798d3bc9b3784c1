/* crescent.core.partition (placeholder: filled in by the partition work). */
#include <lua.h>

#include "lua/l_modules.h"

int cr_lopen_partition(lua_State *L) {
    lua_newtable(L);
    return 1;
}
