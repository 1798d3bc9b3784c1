#ifndef CR_AUTH_H
#define CR_AUTH_H
/* Who may connect to crescent's sockets.
 *
 * A cluster shares one key pair (`crescent keygen`), given to every process
 * as CRESCENT_CURVE_PUBLIC / CRESCENT_CURVE_SECRET. Servers (scheduler
 * ROUTER, node data ROUTERs) encrypt with it, clients present it, and a ZAP
 * handler in each server's context admits only clients presenting the
 * cluster's public key: holding the secret is what makes a member. Without
 * keys, sockets may only bind to loopback.
 *
 * A job whose nodes the scheduler spawns on loopback, without a cluster key,
 * uses a secret made for that job alone (CRESCENT_JOB_SECRET in the nodes'
 * environment): ZeroMQ's PLAIN mechanism, checked by the same ZAP handler.
 * It admits only the job's own processes, at no cost per message (CURVE
 * encrypts every frame: 3x slower on the data plane, see the push/pull
 * bench). It is refused off loopback, where only CURVE is accepted. */

#include "base/cr_curve.h"
#include "base/cr_err.h"

/* Read the key pair from the environment into c (c->on = 0 if neither is
 * set). Both or neither must be given, each 40 Z85 characters, and they must
 * form a pair. Without them, CRESCENT_JOB_SECRET (40 characters) gives the
 * per-job secret. Returns 0 or -1 with a message. */
int cr_curve_from_env(cr_curve *c, cr_err *e);

/* A fresh per-job secret (PLAIN mode) in c. Returns 0 or -1 with a message. */
int cr_curve_job_secret(cr_curve *c, cr_err *e);

/* 1 if endpoint stays on this machine (inproc://, ipc://, tcp://127.x.y.z:,
 * tcp://localhost:, tcp://[::1]:). */
int cr_endpoint_is_loopback(const char *endpoint);

/* Refuse endpoint if it leaves loopback without CURVE keys: -1 with a message. */
int cr_curve_check_bind(const cr_curve *c, const char *endpoint, cr_err *e);

/* Configure sock (before bind / connect) as a CURVE or PLAIN server /
 * client when c->on; no-op otherwise. Returns 0 or -1 (errno from zmq). */
int cr_curve_server(void *sock, const cr_curve *c);
int cr_curve_client(void *sock, const cr_curve *c);

/* ZAP handler thread in zmq context ctx admitting only c's public key or
 * secret (no-op when !c->on: *out = NULL). It sleeps until a request or
 * cr_zap_stop. Stop it before terminating the context. */
typedef struct cr_zap cr_zap;
int cr_zap_start(void *ctx, const cr_curve *c, cr_zap **out, cr_err *e);
void cr_zap_stop(cr_zap **z);

#endif
