/* crescent node --scheduler tcp://HOST:PORT [--bind ADDR] [--advertise ADDR]
 * Joins a scheduler started elsewhere; runs until it says shutdown (exit 0)
 * or goes silent (exit 1). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "cli/cli.h"
#include "lua/l_worker.h"
#include "net/cr_auth.h"
#include "net/cr_iface.h"
#include "ps/cr_node.h"

typedef struct node_args {
    const char *scheduler, *bind, *advertise, *key, *iface;
} node_args;

static const cr_opt node_opts[] = {
    {"scheduler", CR_OPT_STRING, offsetof(node_args, scheduler), CR_OPT_REQUIRED, 0, 0, NULL, "tcp://HOST:PORT",
     "the scheduler's address (crescent run prints it)", NULL, NULL},
    {"bind", CR_OPT_STRING, offsetof(node_args, bind), 0, 0, 0, NULL, "ADDR",
     "address to bind the data socket to (default: the address of the interface that reaches the scheduler, "
     "any port; loopback for a scheduler on loopback)", NULL, NULL},
    {"advertise", CR_OPT_STRING, offsetof(node_args, advertise), 0, 0, 0, NULL, "ADDR",
     "address other nodes reach this one at, tcp://HOST:PORT or tcp://HOST:* for the bound port (default: the "
     "bound one; for a wildcard bind, the address towards the scheduler)", NULL, NULL},
    {"key", CR_OPT_STRING, offsetof(node_args, key), 0, 0, 0, NULL, "FILE",
     "the cluster key pair (crescent keygen > FILE; mode 600), or CRESCENT_KEY_FILE", NULL, NULL},
    {"interface", CR_OPT_STRING, offsetof(node_args, iface), 0, 0, 0, NULL, "NAME",
     "bind and advertise this interface's address (or CRESCENT_INTERFACE)", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

static const cr_opt_cmd node_cmd = {
    "crescent node", "--scheduler tcp://HOST:PORT [--bind ADDR] [--advertise ADDR] [--key FILE] [--interface NAME]",
    "  Join a job whose scheduler was started elsewhere; run until it says shutdown\n"
    "  (exit 0) or goes silent (exit 1). Off loopback, the cluster key comes from\n"
    "  --key FILE, CRESCENT_KEY_FILE or CRESCENT_CURVE_PUBLIC/SECRET (crescent keygen).\n",
    node_opts, 0, 0, 0};

/* The bind and advertised endpoints a node uses when they are not given
 * (or are wildcards): the address of the interface that reaches the
 * scheduler, and never a loopback one for a scheduler off loopback.
 * 0, or -1 after printing what is wrong and which setting chose it. */
static int node_addrs(node_args *a, char *bind, char *adv, size_t n) {
    char host[256], port[16], sip[CR_IP_MAX], ip[CR_IP_MAX], name[CR_IFNAME_MAX] = "";
    cr_err e;
    if (cr_endpoint_split(a->scheduler, host, sizeof host, port, sizeof port, &e) < 0 ||
        cr_iface_resolve(host, sip, &e) < 0) {
        fprintf(stderr, "crescent node: --scheduler: %s\n", e.msg);
        return -1;
    }
    int named = (a->iface && *a->iface) || getenv("CRESCENT_INTERFACE");
    if (cr_ip_is_loopback(sip) && !named) return 0; /* all on this host: the loopback defaults */
    if (cr_cli_local_addr("crescent node", a->iface, sip, ip, name) < 0) return -1;
    if (!a->bind) snprintf(bind, n, "tcp://%s:*", ip), a->bind = bind;
    char bhost[256], bport[16];
    if (cr_endpoint_split(a->bind, bhost, sizeof bhost, bport, sizeof bport, &e) < 0) {
        fprintf(stderr, "crescent node: --bind: %s\n", e.msg);
        return -1;
    }
    if (!a->advertise && cr_ip_is_wildcard(bhost)) snprintf(adv, n, "tcp://%s:*", ip), a->advertise = adv;
    const char *shown = a->advertise ? a->advertise : a->bind;
    if (!cr_ip_is_loopback(sip) && (strstr(shown, "://127.") || strstr(shown, "://localhost:"))) {
        fprintf(stderr, "crescent node: would advertise %s (from %s) to peers of a scheduler at %s, which is not on "
                        "loopback: bind or advertise the address of interface %s (%s) instead\n",
                shown, a->advertise ? "--advertise" : "--bind", sip, name[0] ? name : "?", ip);
        return -1;
    }
    return 0;
}

int cr_cli_node(int argc, char **argv) {
    node_args a = {NULL, NULL, NULL, NULL, NULL};
    cr_opt_res r;
    int rc = cr_cli_parse(&node_cmd, argc, argv, &a, &r);
    if (rc >= 0) return rc;
    cr_opt_res_free(&r);
    char bind[64], adv[64];
    if (cr_cli_key_file("crescent node", a.key) < 0 || node_addrs(&a, bind, adv, sizeof bind) < 0) return 2;
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
