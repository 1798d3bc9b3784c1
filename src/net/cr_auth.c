#include "net/cr_auth.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "net/cr_wire.h"

int cr_curve_from_env(cr_curve *c, cr_err *e) {
    const char *pub = getenv("CRESCENT_CURVE_PUBLIC"), *sec = getenv("CRESCENT_CURVE_SECRET");
    memset(c, 0, sizeof *c);
    if (!pub && !sec) return 0;
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
    if (c->on || cr_endpoint_is_loopback(ep)) return 0;
    return cr_errf(e, "binding %s off loopback needs CURVE keys: set CRESCENT_CURVE_PUBLIC and "
                      "CRESCENT_CURVE_SECRET (from crescent keygen) on every process", ep);
}

int cr_curve_server(void *sock, const cr_curve *c) {
    if (!c || !c->on) return 0;
    int one = 1;
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) < 0) return -1;
    return zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, c->sec, 40);
}

int cr_curve_client(void *sock, const cr_curve *c) {
    if (!c || !c->on) return 0;
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, c->pub, 40) < 0) return -1;
    if (zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, c->pub, 40) < 0) return -1;
    return zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, c->sec, 40);
}

struct cr_zap {
    void *sock;
    pthread_t thread;
    atomic_int stop;
    uint8_t key[32];
};

/* ZAP 1.0 (RFC 27): request = version, id, domain, address, identity,
 * mechanism, credentials...; reply = version, id, status, text, user, metadata. */
static void *zap_main(void *arg) {
    cr_zap *z = arg;
    zmq_pollitem_t it = {.socket = z->sock, .events = ZMQ_POLLIN};
    while (!atomic_load(&z->stop)) {
        if (zmq_poll(&it, 1, 200) <= 0) continue;
        cr_parts p;
        if (cr_parts_recv(z->sock, &p, ZMQ_DONTWAIT) < 0) continue;
        int ok = p.n >= 7 && cr_parts_size(&p, 5) == 5 && !memcmp(cr_parts_data(&p, 5), "CURVE", 5) &&
                 cr_parts_size(&p, 6) == 32 && !memcmp(cr_parts_data(&p, 6), z->key, 32);
        zmq_send(z->sock, "1.0", 3, ZMQ_SNDMORE);
        if (p.n > 1) zmq_send(z->sock, cr_parts_data(&p, 1), cr_parts_size(&p, 1), ZMQ_SNDMORE);
        else zmq_send(z->sock, "", 0, ZMQ_SNDMORE);
        zmq_send(z->sock, ok ? "200" : "400", 3, ZMQ_SNDMORE);
        const char *text = ok ? "OK" : "unknown key";
        zmq_send(z->sock, text, strlen(text), ZMQ_SNDMORE);
        zmq_send(z->sock, ok ? "member" : "", ok ? 6 : 0, ZMQ_SNDMORE);
        zmq_send(z->sock, "", 0, 0);
        cr_parts_close(&p);
    }
    return NULL;
}

int cr_zap_start(void *ctx, const cr_curve *c, cr_zap **out, cr_err *e) {
    *out = NULL;
    if (!c->on) return 0;
    cr_zap *z = calloc(1, sizeof *z);
    if (!z) return cr_errf(e, "out of memory");
    zmq_z85_decode(z->key, c->pub);
    z->sock = cr_socket(ctx, ZMQ_REP);
    if (!z->sock || zmq_bind(z->sock, "inproc://zeromq.zap.01") < 0) {
        if (z->sock) zmq_close(z->sock);
        free(z);
        return cr_errf(e, "cannot start the authentication handler: %s", zmq_strerror(zmq_errno()));
    }
    if (pthread_create(&z->thread, NULL, zap_main, z) != 0) {
        zmq_close(z->sock);
        free(z);
        return cr_errf(e, "cannot start the authentication thread");
    }
    *out = z;
    return 0;
}

void cr_zap_stop(cr_zap **zp) {
    cr_zap *z = zp ? *zp : NULL;
    if (!z) return;
    atomic_store(&z->stop, 1);
    pthread_join(z->thread, NULL);
    zmq_close(z->sock);
    free(z);
    *zp = NULL;
}
