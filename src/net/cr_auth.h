#ifndef CR_AUTH_H
#define CR_AUTH_H
/* CURVE authentication for connections off loopback.
 *
 * A cluster shares one key pair (`crescent keygen`), given to every process
 * as CRESCENT_CURVE_PUBLIC / CRESCENT_CURVE_SECRET. Servers (scheduler
 * ROUTER, node data ROUTERs) encrypt with it, clients present it, and a ZAP
 * handler in each server's context admits only clients presenting the
 * cluster's public key: holding the secret is what makes a member. Without
 * keys, sockets may only bind to loopback. */

#include "base/cr_err.h"

typedef struct cr_curve {
    int on;
    char pub[41], sec[41]; /* Z85, 40 characters */
} cr_curve;

/* Read the key pair from the environment into c (c->on = 0 if neither is
 * set). Both or neither must be given, each 40 Z85 characters, and they must
 * form a pair. Returns 0 or -1 with a message. */
int cr_curve_from_env(cr_curve *c, cr_err *e);

/* 1 if endpoint stays on this machine (inproc://, ipc://, tcp://127.x.y.z:,
 * tcp://localhost:, tcp://[::1]:). */
int cr_endpoint_is_loopback(const char *endpoint);

/* Refuse endpoint if it leaves loopback without keys: -1 with a message. */
int cr_curve_check_bind(const cr_curve *c, const char *endpoint, cr_err *e);

/* Configure sock (before bind / connect) as a CURVE server / client when
 * c->on; no-op otherwise. Returns 0 or -1 (errno from zmq). */
int cr_curve_server(void *sock, const cr_curve *c);
int cr_curve_client(void *sock, const cr_curve *c);

/* ZAP handler thread in zmq context ctx admitting only c's public key (no-op
 * when !c->on: *out = NULL). Stop it before terminating the context. */
typedef struct cr_zap cr_zap;
int cr_zap_start(void *ctx, const cr_curve *c, cr_zap **out, cr_err *e);
void cr_zap_stop(cr_zap **z);

#endif
