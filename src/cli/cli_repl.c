/* crescent repl [JOB.lua] [run options]
 * With a job script: exactly `crescent run JOB.lua --repl [options]`.
 * Without: a scheduler-side Lua state with `cr = require "crescent"`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "cli/cli.h"
#include "lua/l_host.h"
#include "lua/l_repl.h"

static void usage(FILE *f) {
    fprintf(f, "usage: crescent repl [JOB.lua [run options]]\n"
               "  without a job script: a Lua prompt with cr = require \"crescent\"\n"
               "  with one: same as crescent run JOB.lua --repl [run options]\n");
}

/* argv = {"repl", JOB.lua, opts...} -> {"run", "--repl", JOB.lua, opts...}:
 * --repl goes first, since what follows the run options belongs to the script. */
static int run_with_repl(int argc, char **argv) {
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) return 1;
    args[0] = "run";
    args[1] = "--repl";
    for (int i = 1; i < argc; i++) args[i + 1] = argv[i];
    int rc = cr_cli_run(argc + 1, args);
    free(args);
    return rc;
}

static int bare_repl(void) {
    lua_State *L = cr_lhost_new(cr_cli_home());
    if (!L) {
        fprintf(stderr, "crescent repl: out of memory\n");
        return 1;
    }
    lua_getglobal(L, "require");
    lua_pushliteral(L, "crescent");
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        fprintf(stderr, "crescent repl: %s\n", lua_tostring(L, -1));
        lua_close(L);
        return 1;
    }
    lua_setglobal(L, "cr");
    int rc = cr_repl_run(L);
    lua_close(L); /* closes any job opened at the prompt (its __gc) */
    return rc;
}

int cr_cli_repl(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && argv[1][0] == '-') {
        fprintf(stderr, "crescent repl: run options need a job script first (got '%s')\n", argv[1]);
        usage(stderr);
        return 2;
    }
    return argc >= 2 ? run_with_repl(argc, argv) : bare_repl();
}
