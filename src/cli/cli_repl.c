/* crescent repl [JOB.lua] [run options]
 * With a job script: exactly `crescent run JOB.lua --repl [options]`.
 * Without: a scheduler-side Lua state with `cr = require "crescent"`
 * (src/lua/l_repl.c; src/cli holds no Lua). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lua/l_repl.h"

static const cr_opt_cmd repl_cmd = {
    "crescent repl", "[JOB.lua [options] [ARGS...] [-- ARGS...]]",
    "  Without a job script: a Lua prompt with cr = require \"crescent\".\n"
    "  With one: the same as crescent run JOB.lua --repl [options] (the options are run's).\n",
    cr_cli_run_opts, 0, -1, CR_OPT_POS_STOPS};

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

int cr_cli_repl(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        cr_cli_help(&repl_cmd, stdout);
        return 0;
    }
    if (argc >= 2 && argv[1][0] == '-') {
        fprintf(stderr, "crescent repl: run options need a job script first (got '%s')\n", argv[1]);
        fprintf(stderr, "usage: crescent repl %s\n", repl_cmd.args);
        return 2;
    }
    return argc >= 2 ? run_with_repl(argc, argv) : cr_repl_main(cr_cli_home());
}
