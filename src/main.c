/* crescent: command-line entry. Dispatches to one function per command.
 * `crescent --version` prints the version; `crescent --help` (or `help`)
 * lists the commands; `crescent help COMMAND` is `crescent COMMAND --help`.
 * Help and version go to stdout with exit 0; usage errors to stderr, exit 2. */
#include <stdio.h>
#include <string.h>

#include "base/cr_version.h"
#include "cli/cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"run", cr_cli_run, "run JOB.lua [options] [-- ARGS]  run a job script (nodes start on loopback)"},
    {"repl", cr_cli_repl, "repl [JOB.lua [options]]        interactive Lua prompt on the scheduler"},
    {"launch", cr_cli_launch, "launch --hosts FILE JOB.lua      run a job on the hosts of FILE over ssh"},
    {"node", cr_cli_node, "node --scheduler tcp://HOST:PORT join a job started elsewhere"},
    {"data", cr_cli_data, "data NAME [options] --out PATH   generate, build or check a dataset"},
    {"partition", cr_cli_partition, "partition FILE -k K [options]    compare data/parameter partitioners"},
    {"ckpt", cr_cli_ckpt, "ckpt FILE...                     verify checkpoints and describe their tables"},
    {"keygen", cr_cli_keygen, "keygen                           print a CURVE key pair"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
    fprintf(f, "usage: crescent COMMAND [ARGS]\n       crescent COMMAND --help | --version | help [COMMAND]\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %s\n", commands[i].help);
}

static int find(const char *name) {
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name)) return (int)i;
    return -1;
}

static int unknown(const char *name) {
    fprintf(stderr, "crescent: unknown command '%s'\n", name);
    usage(stderr);
    return 2;
}

/* `crescent help [COMMAND]` */
static int help(int argc, char **argv) {
    if (argc < 3) {
        usage(stdout);
        return 0;
    }
    int c = find(argv[2]);
    if (c < 0) return unknown(argv[2]);
    char *args[] = {argv[2], "--help", NULL};
    return commands[c].fn(2, args);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("crescent %s\n", CR_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "help")) return help(argc, argv);
    int c = find(argv[1]);
    return c < 0 ? unknown(argv[1]) : commands[c].fn(argc - 1, argv + 1);
}
