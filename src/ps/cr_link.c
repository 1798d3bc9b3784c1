#include "ps/cr_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"

#define HB_INTERVAL 0.5
#define PROGRESS_INTERVAL 0.1 /* seconds between progress reports while there is progress */

int cr_link_connect(cr_link *l, void *zctx, const char *endpoint, int inproc, const cr_curve *curve, cr_err *e) {
    l->endpoint = endpoint;
    l->inproc = inproc;
    l->curve_on = curve->on;
    l->sched = cr_socket(zctx, ZMQ_DEALER);
    if (!inproc) cr_curve_client(l->sched, curve);
    if (zmq_connect(l->sched, endpoint) < 0)
        return cr_errf(e, "cannot connect to scheduler '%s': %s", endpoint, zmq_strerror(errno));
    return 0;
}

/* ---------- sending as this node ---------- */

void cr_link_send(cr_link *l, cr_proto_msg *m) {
    m->h.node = l->id;
    cr_proto_send(l->sched, NULL, 0, m);
}

void cr_link_ack(cr_link *l) { cr_proto_send_ack(l->sched, NULL, 0, l->id); }

void cr_link_error(cr_link *l, const char *msg) { cr_proto_send_error(l->sched, NULL, 0, l->id, msg); }

void cr_link_beat(cr_link *l) {
    cr_proto_msg hb;
    cr_proto_encode_empty(CR_M_HB, &hb, NULL);
    cr_link_send(l, &hb);
}

void cr_link_send_worker(cr_link *l, int lw, cr_proto_msg *m) {
    m->h.node = l->id;
    cr_proto_send(l->wup[lw], NULL, 0, m);
}

/* ---------- joining ---------- */

/* One message from the scheduler while joining: 1 once welcomed, 0 to keep
 * waiting (anything else is not for a node that has not joined yet), or -1
 * with a message when the scheduler gave up or its WELCOME is malformed. */
static int join_answer(cr_link *l, cr_parts *p, cr_peers *peers, cr_err *e) {
    cr_proto_msg m;
    cr_msg_welcome w;
    cr_err why;
    if (cr_proto_view(p, 0, &m, &why) < 0) return 0;
    if (m.h.type == CR_M_SHUTDOWN) return cr_errf(e, "the scheduler gave up before the job started");
    cr_msg_reply r;
    if (m.h.type == CR_M_ERROR && cr_proto_decode_reply(&m, &r, &why) == 0)
        return cr_errf(e, "scheduler %s refused this node: %.*s", l->endpoint, (int)r.n, r.data);
    if (m.h.type != CR_M_WELCOME) return 0;
    if (cr_proto_decode_welcome(&m, &w, &why) < 0)
        return cr_errf(e, "malformed answer from scheduler %s: %s", l->endpoint, why.msg);
    cr_peers_take(peers, &w);
    l->id = peers->id;
    return 1;
}

static int join_timeout(cr_link *l, cr_err *e) {
    return cr_errf(e, "no answer from scheduler %s within 30 s%s", l->endpoint,
                   l->inproc     ? ""
                   : l->curve_on ? " (is it using the same key?)"
                                 : " (a scheduler admits only nodes presenting its cluster key: "
                                   "set CRESCENT_CURVE_PUBLIC and CRESCENT_CURVE_SECRET)");
}

static int join(cr_link *l, const char *advertise, int rank, cr_peers *peers, void *mon, cr_err *e);

/* Watch the scheduler socket's handshakes: a scheduler that refuses this
 * node's key says nothing to it (the ZAP handler drops the connection), so
 * only the socket's monitor can tell. The PAIR end, or NULL. */
static void *watch_handshakes(cr_link *l, void *zctx) {
    if (l->inproc || !zctx) return NULL;
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://crescent-join-monitor-%p", (void *)l);
    if (zmq_socket_monitor(l->sched, ep, ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                         ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) < 0)
        return NULL;
    void *mon = zmq_socket(zctx, ZMQ_PAIR);
    if (mon && zmq_connect(mon, ep) == 0) return mon;
    if (mon) zmq_close(mon);
    zmq_socket_monitor(l->sched, NULL, 0);
    return NULL;
}

static void unwatch(cr_link *l, void *mon) {
    if (!mon) return;
    zmq_socket_monitor(l->sched, NULL, 0);
    int linger = 0;
    zmq_setsockopt(mon, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(mon);
}

/* A monitor event: -1 with why the scheduler did not admit this node. */
static int handshake_failed(cr_link *l, void *mon, cr_err *e) {
    cr_parts p;
    if (cr_parts_recv(mon, &p, ZMQ_DONTWAIT) < 0) return 0;
    uint16_t ev = 0;
    if (p.n >= 1 && cr_parts_size(&p, 0) >= 2) memcpy(&ev, cr_parts_data(&p, 0), 2);
    cr_parts_close(&p);
    if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH || (ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL && l->curve_on))
        return cr_errf(e, "scheduler %s refused this node's key: every process of a job needs the same cluster key "
                          "(--key FILE, CRESCENT_KEY_FILE or CRESCENT_CURVE_PUBLIC/SECRET)", l->endpoint);
    if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        return cr_errf(e, "scheduler %s did not accept this node's handshake: %s", l->endpoint,
                       l->curve_on ? "it uses no key or another mechanism"
                                   : "it requires the cluster key, and this node has none (--key FILE, "
                                     "CRESCENT_KEY_FILE or CRESCENT_CURVE_PUBLIC/SECRET)");
    return 0;
}

int cr_link_join(cr_link *l, const char *advertise, int rank, cr_peers *peers, cr_err *e) {
    void *mon = watch_handshakes(l, peers->zctx);
    int rc = join(l, advertise, rank, peers, mon, e);
    unwatch(l, mon);
    return rc;
}

static int join(cr_link *l, const char *advertise, int rank, cr_peers *peers, void *mon, cr_err *e) {
    cr_msg_register r = {.pid = getpid(), .rank = rank, .addr = advertise, .addrn = strlen(advertise)};
    cr_proto_msg m;
    if (cr_proto_encode_register(&r, &m, e) < 0) return -1;
    if (cr_proto_send(l->sched, NULL, 0, &m) < 0)
        return cr_errf(e, "cannot send to scheduler %s: %s", l->endpoint, zmq_strerror(errno));
    zmq_pollitem_t it[2] = {{.socket = l->sched, .events = ZMQ_POLLIN}, {.socket = mon, .events = ZMQ_POLLIN}};
    double deadline = cr_now() + 30, again = cr_now() + 1;
    for (;;) {
        double now = cr_now(), left = deadline - now;
        if (left <= 0) return join_timeout(l, e);
        if (now >= again) { /* the first may have gone to a scheduler that was closing (a job run again) */
            cr_proto_send(l->sched, NULL, 0, &m);
            again = now + 1;
        }
        if (zmq_poll(it, mon ? 2 : 1, (long)((again - now < left ? again - now : left) * 1000) + 1) <= 0) continue;
        if (mon && (it[1].revents & ZMQ_POLLIN) && handshake_failed(l, mon, e) < 0) return -1;
        if (!(it[0].revents & ZMQ_POLLIN)) continue;
        cr_parts p;
        if (cr_parts_recv(l->sched, &p, 0) < 0) continue;
        int rc = join_answer(l, &p, peers, e);
        cr_parts_close(&p);
        if (rc != 0) return rc < 0 ? -1 : 0;
    }
}

/* ---------- the workers' channel up ---------- */

int cr_link_open_up(cr_link *l, void *zctx, int wpn, cr_err *e) {
    l->wup = cr_xcalloc((size_t)wpn + 1, sizeof *l->wup);
    l->nw = wpn;
    l->up = cr_socket(zctx, ZMQ_PULL);
    snprintf(l->up_ep, sizeof l->up_ep, "inproc://crescent-node-up-%p", (void *)l);
    if (zmq_bind(l->up, l->up_ep) < 0) return cr_errf(e, "inproc bind: %s", zmq_strerror(errno));
    for (int i = 0; i < wpn; i++) {
        l->wup[i] = cr_socket(zctx, ZMQ_PUSH);
        zmq_connect(l->wup[i], l->up_ep);
    }
    return 0;
}

void cr_link_close(cr_link *l) {
    for (int i = 0; l->wup && i < l->nw; i++) zmq_close(l->wup[i]);
    free(l->wup);
    l->wup = NULL;
    if (l->up) zmq_close(l->up);
    if (l->sched) zmq_close(l->sched);
    l->up = l->sched = NULL;
}

/* ---------- the loop ---------- */

static void flush_progress(cr_link *l) {
    long long items = atomic_exchange(&l->progress, 0);
    if (items > 0) { /* PROGRESS counts items done: a net negative count (a script's mistake) is dropped */
        cr_msg_progress pr = {.items = items};
        cr_proto_msg m;
        cr_proto_encode_progress(&pr, &m, NULL);
        cr_link_send(l, &m);
    }
}

/* Forward what the workers sent up (replies, errors, clock states) to the
 * scheduler as it is. */
static void forward_up(cr_link *l) {
    cr_parts p;
    while (cr_parts_recv(l->up, &p, ZMQ_DONTWAIT) > 0) {
        flush_progress(l); /* progress made before a reply is counted before it */
        for (int i = 0; i < p.n; i++)
            zmq_send(l->sched, cr_parts_data(&p, i), cr_parts_size(&p, i), i + 1 < p.n ? ZMQ_SNDMORE : 0);
        cr_parts_close(&p);
    }
}

/* Milliseconds until the next thing this loop must do on its own: a
 * heartbeat, the scheduler's silence deadline, or (when workers have counted
 * progress that is not yet sent) the next progress report. Messages wake the
 * poll earlier; nothing is polled on a fixed tick. */
static long next_wake_ms(cr_link *l, double now, double hb_due, double deaf_at, double prog_due) {
    double t = hb_due < deaf_at ? hb_due : deaf_at;
    if (atomic_load(&l->progress) && prog_due < t) t = prog_due;
    return t <= now ? 0 : (long)((t - now) * 1000) + 1;
}

int cr_link_run(cr_link *l, double timeout, cr_link_handler h, void *ctx, cr_err *e) {
    double heard = cr_now(), hb_due = 0, prog_due = 0;
    zmq_pollitem_t it[2] = {{.socket = l->sched, .events = ZMQ_POLLIN}, {.socket = l->up, .events = ZMQ_POLLIN}};
    for (;;) {
        zmq_poll(it, 2, next_wake_ms(l, cr_now(), hb_due, heard + timeout, prog_due));
        double now = cr_now();
        cr_parts p;
        while (cr_parts_recv(l->sched, &p, ZMQ_DONTWAIT) > 0) {
            int quit = h(ctx, &p);
            cr_parts_close(&p);
            if (quit) return 0;
            heard = now = cr_now(); /* after the handler: a long one (a big DIST) is not silence */
        }
        forward_up(l);
        if (now >= prog_due) {
            flush_progress(l);
            prog_due = now + PROGRESS_INTERVAL;
        }
        if (now >= hb_due) {
            cr_link_beat(l);
            hb_due = now + HB_INTERVAL;
        }
        if (now - heard > timeout)
            return cr_errf(e, "node %d: scheduler %s silent for %.1f s; exiting", l->id, l->endpoint, now - heard);
    }
}
