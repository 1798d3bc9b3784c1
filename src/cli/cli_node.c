/* crescent node --scheduler tcp://HOST:PORT [--bind ADDR] [--advertise ADDR]
 * Joins a scheduler started elsewhere; runs until it says shutdown (exit 0)
 * or goes silent (exit 1). */
#include <stddef.h>
#include <stdio.h>
#include <zmq.h>

#include "cli/cli.h"
#include "lua/l_worker.h"
#include "net/cr_auth.h"
#include "ps/cr_node.h"

typedef struct node_args {
    const char *scheduler, *bind, *advertise;
} node_args;

static const cr_opt node_opts[] = {
    {"scheduler", CR_OPT_STRING, offsetof(node_args, scheduler), CR_OPT_REQUIRED, 0, 0, NULL, "tcp://HOST:PORT",
     "the scheduler's address (crescent run prints it)", NULL, NULL},
    {"bind", CR_OPT_STRING, offsetof(node_args, bind), 0, 0, 0, NULL, "ADDR",
     "address to bind the data socket to (default loopback)", NULL, NULL},
    {"advertise", CR_OPT_STRING, offsetof(node_args, advertise), 0, 0, 0, NULL, "ADDR",
     "address other nodes reach this one at (default: the bound one)", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

static const cr_opt_cmd node_cmd = {
    "crescent node", "--scheduler tcp://HOST:PORT [--bind ADDR] [--advertise ADDR]",
    "  Join a job whose scheduler was started elsewhere; run until it says shutdown\n"
    "  (exit 0) or goes silent (exit 1). Off loopback, CURVE keys come from the\n"
    "  environment (see crescent keygen).\n",
    node_opts, 0, 0, 0};

int cr_cli_node(int argc, char **argv) {
    node_args a = {NULL, NULL, NULL};
    cr_opt_res r;
    int rc = cr_cli_parse(&node_cmd, argc, argv, &a, &r);
    if (rc >= 0) return rc;
    cr_opt_res_free(&r);
    cr_node_opts o = {.hooks = &cr_lworker_hooks, .scheduler = a.scheduler, .bind = a.bind, .advertise = a.advertise};
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
}

static const cr_opt_cmd keygen_cmd = {
    "crescent keygen", NULL,
    "  Print a new CURVE key pair (Z85: \"public KEY\" and \"secret KEY\" lines), for\n"
    "  authenticated connections off loopback.\n",
    NULL, 0, 0, 0};

/* crescent keygen: print a new CURVE key pair (Z85), for authenticated
 * connections off loopback. */
int cr_cli_keygen(int argc, char **argv) {
    cr_opt_res r;
    int rc = cr_cli_parse(&keygen_cmd, argc, argv, NULL, &r);
    if (rc >= 0) return rc;
    cr_opt_res_free(&r);
    char pub[41], sec[41];
    if (zmq_curve_keypair(pub, sec) != 0) {
        fprintf(stderr, "crescent keygen: this ZeroMQ has no CURVE support\n");
        return 1;
    }
    printf("public %s\nsecret %s\n", pub, sec);
    return 0;
}
