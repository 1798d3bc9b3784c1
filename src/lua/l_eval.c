/* crescent.core.eval (placeholder: filled in by the eval work). */
#include <lua.h>

#include "lua/l_modules.h"

int cr_lopen_eval(lua_State *L) {
    lua_newtable(L);
    return 1;
}
