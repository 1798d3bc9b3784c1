#ifndef CR_L_HOST_H
#define CR_L_HOST_H
/* Lua states created by the crescent binary. */

#include <lua.h>

/* A full (unsandboxed) state for the scheduler, the REPL and CLI scripts:
 * standard libraries, `crescent.core` preloaded, package.path pointing at
 * HOME/lua (HOME = directory of the binary) before the default path.
 * Returns NULL only when out of memory. */
lua_State *cr_lhost_new(const char *home);

/* Run a chunk (file `path`, or `code` named `name` if path is NULL) under
 * lua_pcall with a traceback handler. On error prints "crescent: MESSAGE"
 * with the traceback to stderr and returns -1. */
int cr_lhost_dofile(lua_State *L, const char *path, int nargs_from_argv,
                    char **argv);

#endif
