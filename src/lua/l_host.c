#include "lua/l_host.h"

#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/l_modules.h"

lua_State *cr_lhost_new(const char *home) {
    lua_State *L = luaL_newstate();
    if (!L) return NULL;
    luaL_openlibs(L);
    /* package.preload["crescent.core"] = luaopen_crescent_core; HOME/lua comes
     * first on package.path, so crescent.home finds HOME (the source tree, or
     * PREFIX/share/crescent once installed) from its own file's path. */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_crescent_core);
    lua_setfield(L, -2, "crescent.core");
    lua_pop(L, 1);
    lua_getglobal(L, "package");
    lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;", home, home);
    lua_getfield(L, -2, "path");
    lua_concat(L, 2);
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);
    return L;
}

/* Message handler for the job script. An error raised from a C function
 * (error(), or a binding's luaL_error) is a deliberate message that already
 * names the script line it is about: it is printed as it is, one line. A
 * runtime error in Lua code (indexing nil, bad arithmetic) also gets a
 * traceback; CRESCENT_TRACEBACK=1 gives one for every error. */
static int traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = luaL_tolstring(L, 1, NULL);
    lua_Debug ar;
    const char *force = getenv("CRESCENT_TRACEBACK");
    int deliberate = lua_getstack(L, 1, &ar) && lua_getinfo(L, "S", &ar) && ar.what[0] == 'C';
    if (deliberate && !(force && force[0] == '1')) {
        lua_pushstring(L, msg);
        return 1;
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int cr_lhost_dofile(lua_State *L, const char *path, int nargs, char **argv) {
    lua_pushcfunction(L, traceback);
    int base = lua_gettop(L);
    FILE *f = fopen(path, "r"); /* the file errors' one wording, not Lua's "cannot open PATH" */
    if (!f) {
        fprintf(stderr, "crescent: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    fclose(f);
    if (luaL_loadfile(L, path) != LUA_OK) {
        fprintf(stderr, "crescent: %s\n", lua_tostring(L, -1));
        lua_settop(L, base - 1);
        return -1;
    }
    for (int i = 0; i < nargs; i++) lua_pushstring(L, argv[i]);
    if (lua_pcall(L, nargs, 0, base) != LUA_OK) {
        fprintf(stderr, "crescent: %s\n", lua_tostring(L, -1));
        lua_settop(L, base - 1);
        return -1;
    }
    lua_settop(L, base - 1);
    return 0;
}
