#ifndef CR_L_HOST_H
#define CR_L_HOST_H
/* Lua states created by the crescent binary. */

#include <lua.h>

/* A full (unsandboxed) state for the scheduler, the REPL and CLI scripts:
 * standard libraries, `crescent.core` preloaded, package.path pointing at
 * HOME/lua before the default path (HOME = cr_cli_home(): the binary's
 * directory in a source tree, PREFIX/share/crescent once installed), and
 * require("crescent.home").dir giving HOME (configs are HOME/configs). home is
 * copied. Returns NULL only when out of memory. */
lua_State *cr_lhost_new(const char *home);

/* Run a chunk (file `path`, or `code` named `name` if path is NULL) under
 * lua_pcall with a traceback handler. On error prints "crescent: MESSAGE"
 * with the traceback to stderr and returns -1. */
int cr_lhost_dofile(lua_State *L, const char *path, int nargs_from_argv,
                    char **argv);

#endif
