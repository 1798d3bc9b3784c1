/* crescent node --scheduler tcp://HOST:PORT [--bind ADDR] [--advertise ADDR]
 * Joins a scheduler started elsewhere; runs until it says shutdown (exit 0)
 * or goes silent (exit 1). */
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#include "cli/cli.h"
#include "lua/l_worker.h"
#include "ps/cr_node.h"

int cr_cli_node(int argc, char **argv) {
    cr_node_opts o = {.hooks = &cr_lworker_hooks};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **dst = !strcmp(a, "--scheduler") ? &o.scheduler
                           : !strcmp(a, "--bind")    ? &o.bind
                           : !strcmp(a, "--advertise") ? &o.advertise
                                                       : NULL;
        if (!dst) {
            fprintf(stderr, "crescent node: unknown option '%s'\n", a);
            goto usage;
        }
        if (!v) {
            fprintf(stderr, "crescent node: %s needs a value\n", a);
            goto usage;
        }
        *dst = v;
        i++;
    }
    if (!o.scheduler) goto usage;
    cr_err e;
    if (cr_curve_from_env(&o.curve, &e) < 0) {
        fprintf(stderr, "crescent node: %s\n", e.msg);
        return 2;
    }
    if (cr_node_run(&o, &e) < 0) {
        fprintf(stderr, "crescent node: %s\n", e.msg);
        return 1;
    }
    return 0;
usage:
    fprintf(stderr, "usage: crescent node --scheduler tcp://HOST:PORT [--bind ADDR] [--advertise ADDR]\n");
    return 2;
}

/* crescent keygen: print a new CURVE key pair (Z85), for authenticated
 * connections off loopback. */
int cr_cli_keygen(int argc, char **argv) {
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: crescent keygen\n");
        return 2;
    }
    char pub[41], sec[41];
    if (zmq_curve_keypair(pub, sec) != 0) {
        fprintf(stderr, "crescent keygen: this ZeroMQ has no CURVE support\n");
        return 1;
    }
    printf("public %s\nsecret %s\n", pub, sec);
    return 0;
}
