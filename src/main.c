/* crescent: command-line entry. Dispatches to one function per command. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"run", cr_cli_run, "run JOB.lua [--nodes N] [--workers W] [--policy NAME[:k=v,...]] ..."},
    {"repl", cr_cli_repl, "repl [JOB.lua]           interactive Lua prompt on the scheduler"},
    {"node", cr_cli_node, "node --scheduler tcp://HOST:PORT [--bind ADDR] [--advertise ADDR]"},
    {"data", cr_cli_data, "data NAME ... --out PATH  generate or convert a dataset"},
    {"partition", cr_cli_partition, "partition FILE -k K [--method a,b|all] ..."},
    {"keygen", cr_cli_keygen, "keygen                   print a CURVE key pair"},
    {"ckpt", cr_cli_ckpt, "ckpt FILE...             verify checkpoints and describe their tables"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: crescent COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %s\n", commands[i].help);
}

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "crescent: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
