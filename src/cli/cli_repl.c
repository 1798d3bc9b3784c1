#include <stdio.h>

#include "cli/cli.h"

int cr_cli_repl(int argc, char **argv) {
    (void)argc;
    fprintf(stderr, "crescent %s: not built yet\n", argv[0]);
    return 2;
}
