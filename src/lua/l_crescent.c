/* crescent.core: the C half of `require "crescent"`, one field per module,
 * and the version. */
#include <lauxlib.h>
#include <lua.h>

#include "base/cr_version.h"
#include "lua/l_modules.h"
#include "lua/l_sandbox.h"
#include "lua/l_sketch.h"

static const luaL_Reg modules[] = {
    {"util", cr_lopen_util},           {"data", cr_lopen_data},
    {"eval", cr_lopen_eval},           {"partition", cr_lopen_partition},
    {"ps", cr_lopen_ps},               {"kernels", cr_lopen_kernels},
    {"table", cr_lopen_table},         {"sandbox", cr_lopen_sandbox},
    {"sketch", cr_lopen_sketch},       {"optim", cr_lopen_optim},
    {NULL, NULL},
};

int luaopen_crescent_core(lua_State *L) {
    lua_newtable(L);
    for (const luaL_Reg *m = modules; m->name; m++) {
        m->func(L);
        lua_setfield(L, -2, m->name);
    }
    lua_pushliteral(L, CR_VERSION);
    lua_setfield(L, -2, "version");
    return 1;
}
