#include <stdio.h>

#include "cli/cli.h"

int cr_cli_corpus(int argc, char **argv) {
    fprintf(stderr, "crescent data %s: not built yet\n", argc > 1 ? argv[1] : "?");
    return 2;
}
