#include "net/cr_auth.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "net/cr_wire.h"

#define PLAIN_USER "crescent"

static int job_secret_from_env(cr_curve *c, cr_err *e) {
    const char *js = getenv("CRESCENT_JOB_SECRET");
    if (!js) return 0;
    if (strlen(js) != 40) return cr_errf(e, "CRESCENT_JOB_SECRET: not a 40-character secret");
    memcpy(c->sec, js, 41);
    c->on = c->plain = 1;
    return 0;
}

int cr_curve_job_secret(cr_curve *c, cr_err *e) {
    memset(c, 0, sizeof *c);
    char pub[41];
    if (zmq_curve_keypair(pub, c->sec) != 0) /* 32 random bytes from libsodium, Z85 */
        return cr_errf(e, "cannot make the job's secret: this ZeroMQ has no CURVE support");
    c->on = c->plain = 1;
    return 0;
}

int cr_curve_from_env(cr_curve *c, cr_err *e) {
    const char *pub = getenv("CRESCENT_CURVE_PUBLIC"), *sec = getenv("CRESCENT_CURVE_SECRET");
    memset(c, 0, sizeof *c);
    if (!pub && !sec) return job_secret_from_env(c, e);
    if (!pub || !sec)
        return cr_errf(e, "CURVE keys: set both CRESCENT_CURVE_PUBLIC and CRESCENT_CURVE_SECRET (crescent keygen)");
    uint8_t raw[32];
    if (strlen(pub) != 40 || !zmq_z85_decode(raw, pub))
        return cr_errf(e, "CRESCENT_CURVE_PUBLIC: not a 40-character Z85 key");
    if (strlen(sec) != 40 || !zmq_z85_decode(raw, sec))
        return cr_errf(e, "CRESCENT_CURVE_SECRET: not a 40-character Z85 key");
    char derived[41];
    if (zmq_curve_public(derived, sec) != 0 || strcmp(derived, pub) != 0)
        return cr_errf(e, "CURVE keys: CRESCENT_CURVE_PUBLIC does not belong to CRESCENT_CURVE_SECRET");
    memcpy(c->pub, pub, 41);
    memcpy(c->sec, sec, 41);
    c->on = 1;
    return 0;
}

int cr_endpoint_is_loopback(const char *ep) {
    if (!strncmp(ep, "inproc://", 9) || !strncmp(ep, "ipc://", 6)) return 1;
    if (strncmp(ep, "tcp://", 6)) return 0;
    const char *h = ep + 6;
    return !strncmp(h, "127.", 4) || !strncmp(h, "localhost:", 10) || !strncmp(h, "[::1]:", 6);
}

int cr_curve_check_bind(const cr_curve *c, const char *ep, cr_err *e) {
    if ((c->on && !c->plain) || cr_endpoint_is_loopback(ep)) return 0;
    return cr_errf(e, "binding %s off loopback needs CURVE keys: set CRESCENT_CURVE_PUBLIC and "
                      "CRESCENT_CURVE_SECRET (from crescent keygen) on every process", ep);
}

int cr_curve_server(void *sock, const cr_curve *c) {
    if (!c || !c->on) return 0;
    int one = 1;
    if (c->plain) return zmq_setsockopt(sock, ZMQ_PLAIN_SERVER, &one, sizeof one);
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) < 0) return -1;
    return zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, c->sec, 40);
}

int cr_curve_client(void *sock, const cr_curve *c) {
    if (!c || !c->on) return 0;
    if (c->plain) {
        if (zmq_setsockopt(sock, ZMQ_PLAIN_USERNAME, PLAIN_USER, strlen(PLAIN_USER)) < 0) return -1;
        return zmq_setsockopt(sock, ZMQ_PLAIN_PASSWORD, c->sec, 40);
    }
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, c->pub, 40) < 0) return -1;
    if (zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, c->pub, 40) < 0) return -1;
    return zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, c->sec, 40);
}

struct cr_zap {
    void *sock;
    void *stop_rx, *stop_tx; /* inproc PAIR: one message ends the thread */
    pthread_t thread;
    int plain;
    uint8_t key[32]; /* CURVE: the admitted public key */
    char secret[41]; /* PLAIN: the admitted password */
};

/* Equal without an early exit, so that timing tells nothing of the secret. */
static int same_bytes(const void *a, const void *b, size_t n) {
    const uint8_t *x = a, *y = b;
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++) d |= (uint8_t)(x[i] ^ y[i]);
    return d == 0;
}

static int frame_is(cr_parts *p, int i, const void *want, size_t n) {
    return cr_parts_size(p, i) == n && same_bytes(cr_parts_data(p, i), want, n);
}

/* ZAP 1.0 (RFC 27) request: version, id, domain, address, identity,
 * mechanism, credentials (CURVE: the client's public key; PLAIN: user,
 * password). */
static int admitted(const cr_zap *z, cr_parts *p) {
    if (z->plain)
        return p->n >= 8 && frame_is(p, 5, "PLAIN", 5) && frame_is(p, 6, PLAIN_USER, strlen(PLAIN_USER)) &&
               frame_is(p, 7, z->secret, 40);
    return p->n >= 7 && frame_is(p, 5, "CURVE", 5) && frame_is(p, 6, z->key, 32);
}

/* Reply: version, id, status, text, user, metadata. */
static void zap_answer(cr_zap *z, cr_parts *p) {
    int ok = admitted(z, p);
    zmq_send(z->sock, "1.0", 3, ZMQ_SNDMORE);
    if (p->n > 1) zmq_send(z->sock, cr_parts_data(p, 1), cr_parts_size(p, 1), ZMQ_SNDMORE);
    else zmq_send(z->sock, "", 0, ZMQ_SNDMORE);
    zmq_send(z->sock, ok ? "200" : "400", 3, ZMQ_SNDMORE);
    const char *text = ok ? "OK" : "unknown key";
    zmq_send(z->sock, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(z->sock, ok ? "member" : "", ok ? 6 : 0, ZMQ_SNDMORE);
    zmq_send(z->sock, "", 0, 0);
}

static void *zap_main(void *arg) {
    cr_zap *z = arg;
    zmq_pollitem_t it[2] = {{.socket = z->sock, .events = ZMQ_POLLIN}, {.socket = z->stop_rx, .events = ZMQ_POLLIN}};
    for (;;) {
        if (zmq_poll(it, 2, -1) < 0 && zmq_errno() != EINTR) break;
        if (it[1].revents & ZMQ_POLLIN) break;
        cr_parts p;
        while (cr_parts_recv(z->sock, &p, ZMQ_DONTWAIT) > 0) {
            zap_answer(z, &p);
            cr_parts_close(&p);
        }
    }
    return NULL;
}

static void zap_free(cr_zap *z) {
    void *socks[] = {z->sock, z->stop_rx, z->stop_tx};
    for (int i = 0; i < 3; i++)
        if (socks[i]) zmq_close(socks[i]);
    free(z);
}

int cr_zap_start(void *ctx, const cr_curve *c, cr_zap **out, cr_err *e) {
    *out = NULL;
    if (!c->on) return 0;
    cr_zap *z = calloc(1, sizeof *z);
    if (!z) return cr_errf(e, "out of memory");
    z->plain = c->plain;
    if (c->plain) memcpy(z->secret, c->sec, 41);
    else zmq_z85_decode(z->key, c->pub);
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://crescent-zap-stop-%p", (void *)z);
    z->sock = cr_socket(ctx, ZMQ_REP);
    z->stop_rx = cr_socket(ctx, ZMQ_PAIR);
    z->stop_tx = cr_socket(ctx, ZMQ_PAIR);
    if (!z->sock || !z->stop_rx || !z->stop_tx || zmq_bind(z->sock, "inproc://zeromq.zap.01") < 0 ||
        zmq_bind(z->stop_rx, ep) < 0 || zmq_connect(z->stop_tx, ep) < 0) {
        int err = zmq_errno();
        zap_free(z);
        return cr_errf(e, "cannot start the authentication handler: %s", zmq_strerror(err));
    }
    if (pthread_create(&z->thread, NULL, zap_main, z) != 0) {
        zap_free(z);
        return cr_errf(e, "cannot start the authentication thread");
    }
    *out = z;
    return 0;
}

void cr_zap_stop(cr_zap **zp) {
    cr_zap *z = zp ? *zp : NULL;
    if (!z) return;
    zmq_send(z->stop_tx, "", 0, 0);
    pthread_join(z->thread, NULL);
    zap_free(z);
    *zp = NULL;
}
