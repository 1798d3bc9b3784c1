/* The node's server role: pull and push requests from the workers of other
 * nodes, on the data ROUTER, in a thread of its own.
 *
 * Every request gets exactly one reply. A request that cannot be served (a
 * frame of the wrong size, an unknown type or table, a count over the caps,
 * keys this node does not own, a gradient that does not inflate or holds a
 * NaN or an infinity) gets a CR_D_ERROR reply naming the problem, and nothing
 * is applied: a worker waiting on it fails instead of waiting forever, and a
 * table never receives zeros or garbage in place of data. Every size read off
 * the wire is checked against the frames actually received and against the
 * caps below before anything is allocated. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_finite.h"
#include "ps/cr_node_impl.h"

/* Caps on one request, far above what a worker sends (the client splits
 * nothing, but a batch of 2^26 keys or 1 GiB of values is not a batch). */
#define MAX_KEYS ((int64_t)1 << 26)
#define MAX_VALUE_BYTES ((size_t)1 << 30)

/* A request being served: the routing id and header of the reply, the keys
 * (aligned: the frame's own memory or a copy) and the shard. */
typedef struct req {
    cr_parts *p;
    cr_dhdr h;
    cr_shard *s;
    int64_t *keys, *kcopy;
    size_t nk, vbytes;
} req;

/* Send [id][CR_D_ERROR header][message]. The header echoes the request id
 * when the request's header could be read (h may be NULL). */
static void reply_error(cr_node *n, cr_parts *p, const cr_dhdr *h, const char *msg) {
    cr_dhdr r = {.type = CR_D_ERROR};
    if (h) {
        r.table = h->table;
        r.req = h->req;
        r.worker = h->worker;
        r.part = h->part;
    }
    zmq_send(n->srv.data, cr_parts_data(p, 0), cr_parts_size(p, 0), ZMQ_SNDMORE);
    zmq_send(n->srv.data, &r, sizeof r, ZMQ_SNDMORE);
    zmq_send(n->srv.data, msg, strlen(msg), 0);
    atomic_fetch_add(&n->cnt.bytes_remote, (long long)(sizeof r + strlen(msg)));
}

/* Check the header and keys of a request; fill q. Returns 0, or -1 with the
 * reason in e (nothing allocated then). */
static int check_head(cr_node *n, req *q, cr_err *e) {
    cr_parts *p = q->p;
    if (p->n < 3) return cr_errf(e, "malformed request: %d frame(s), expected header and keys", p->n - 1);
    if (cr_parts_size(p, 1) != sizeof(cr_dhdr))
        return cr_errf(e, "malformed request: header of %zu bytes, expected %zu", cr_parts_size(p, 1),
                       sizeof(cr_dhdr));
    memcpy(&q->h, cr_parts_data(p, 1), sizeof q->h);
    int want = q->h.type == CR_D_PULL ? 3 : q->h.type == CR_D_PUSH ? 4 : 0;
    if (!want) return cr_errf(e, "malformed request: unknown type %d", q->h.type);
    if (p->n != want) return cr_errf(e, "malformed request: %d frames, expected %d", p->n - 1, want - 1);
    if (q->h.table >= cr_shards_count(&n->shards))
        return cr_errf(e, "table id %d out of range (%d tables)", q->h.table, cr_shards_count(&n->shards));
    q->s = n->shards.t[q->h.table];
    if (q->h.nkeys < 0 || q->h.nkeys > MAX_KEYS)
        return cr_errf(e, "malformed request: %lld keys (at most %lld)", (long long)q->h.nkeys, (long long)MAX_KEYS);
    if (q->h.dim != q->s->def.dim)
        return cr_errf(e, "dim %d does not match table '%s' (dim %d)", q->h.dim, q->s->def.name, q->s->def.dim);
    q->nk = (size_t)q->h.nkeys;
    if ((q->h.flags & CR_D_RANGE) && (q->h.flags & (CR_D_KSTORE | CR_D_KHASH)))
        return cr_errf(e, "malformed request: a range frame is not a cached key list");
    if (q->h.flags & (CR_D_KSTORE | CR_D_KHASH)) { /* key caching (cr_pfilter.h): before anything can refuse */
        q->keys = (int64_t *)cr_pfilter_keys_in(n->filt, &q->s->def, &q->h, cr_parts_data(p, 2), cr_parts_size(p, 2), e);
        if (!q->keys) return -1;
    } else if ((q->h.flags & CR_D_RANGE) && cr_parts_size(p, 2) != 2 * sizeof(int64_t))
        return cr_errf(e, "malformed request: range frame of %zu bytes", cr_parts_size(p, 2));
    else if (!(q->h.flags & CR_D_RANGE) && cr_parts_size(p, 2) != q->nk * sizeof(int64_t))
        return cr_errf(e, "malformed request: keys frame of %zu bytes for %zu keys", cr_parts_size(p, 2), q->nk);
    q->vbytes = q->nk * (size_t)q->s->def.dim * sizeof(float);
    if (q->vbytes > MAX_VALUE_BYTES) return cr_errf(e, "request of %zu value bytes is over the cap", q->vbytes);
    return 0;
}

/* Keys aligned for reading (copied if the frame is not) and all owned here. */
static int check_keys(req *q, cr_err *e) {
    if (!q->keys) q->keys = cr_parts_data(q->p, 2);
    if (q->h.flags & CR_D_RANGE) { /* ids [lo, hi): the list made here */
        int64_t lh[2];
        memcpy(lh, q->keys, sizeof lh);
        if (lh[0] < 0 || lh[1] - lh[0] != (int64_t)q->nk)
            return cr_errf(e, "malformed request: range [%lld, %lld) for %zu keys", (long long)lh[0],
                           (long long)lh[1], q->nk);
        q->kcopy = cr_xmalloc(q->nk * sizeof *q->kcopy + 1);
        for (size_t i = 0; i < q->nk; i++) q->kcopy[i] = lh[0] + (int64_t)i;
        q->keys = q->kcopy;
    } else if ((uintptr_t)q->keys % sizeof(int64_t)) {
        q->kcopy = cr_xmalloc(q->nk * sizeof *q->kcopy + 1);
        memcpy(q->kcopy, q->keys, q->nk * sizeof *q->kcopy);
        q->keys = q->kcopy;
    }
    for (size_t i = 0; i < q->nk; i++)
        if (!cr_shard_holds(q->s, q->keys[i]))
            return cr_errf(e, "key %lld is not held by this node (table '%s', keys [%lld, %lld))",
                           (long long)q->keys[i], q->s->def.name, (long long)q->s->lo, (long long)q->s->hi);
    return 0;
}

static void serve_pull(cr_node *n, req *q) {
    cr_dhdr r = q->h;
    r.type = CR_D_PULL_REP;
    r.flags = 0;
    r.raw_bytes = (int64_t)q->vbytes;
    float *out = cr_xmalloc(q->vbytes + 1);
    cr_shard_pull(q->s, q->keys, (int64_t)q->nk, out);
    void *frame = out;
    size_t flen = q->vbytes;
    void *zr = (q->h.flags & CR_D_HALF) ? cr_pfilter_half_out(n->filt, &q->s->def, &r, out, &flen) /* halves, asked */
                                        : cr_pfilter_vals_out(n->filt, &q->s->def, &r, out, &flen); /* zero removal */
    if (zr) {
        free(out);
        frame = zr;
    }
    if (q->s->def.compress && flen >= 65536) {
        void *z;
        size_t zn;
        if (cr_wire_deflate(frame, flen, &z, &zn, NULL) == 0) {
            cr_pfilter_count_zlib(n->filt, q->h.table, flen, zn);
            free(frame);
            frame = z;
            flen = zn;
            r.flags |= CR_D_ZLIB;
        }
    }
    zmq_send(n->srv.data, cr_parts_data(q->p, 0), cr_parts_size(q->p, 0), ZMQ_SNDMORE);
    zmq_send(n->srv.data, &r, sizeof r, ZMQ_SNDMORE);
    cr_send_owned(n->srv.data, frame, flen, 0);
    atomic_fetch_add(&n->cnt.bytes_remote, (long long)(flen + sizeof r));
}

/* The gradient as aligned floats of exactly vbytes: the frame itself, or
 * *buf (allocated here, caller frees) holding a copy or the inflated frame.
 * NULL with the reason in e if it has the wrong size or does not inflate. */
static const float *gradient(req *q, float **buf, cr_err *e) {
    const void *g = cr_parts_data(q->p, 3);
    size_t gn = cr_parts_size(q->p, 3);
    *buf = NULL;
    if (q->h.flags & CR_D_HALF) { /* half floats (cr_filter.h), maybe deflated too */
        *buf = cr_xmalloc(q->vbytes + 1);
        return cr_filter_half_in((q->h.flags & CR_D_ZLIB) != 0, g, gn, q->h.raw_bytes, *buf, q->vbytes, e) < 0 ? NULL : *buf;
    }
    if (q->h.flags & CR_D_ZEROS) { /* zero-removed (cr_filter.h), maybe deflated too */
        *buf = cr_xmalloc(q->vbytes + 1);
        return cr_filter_frame_in((q->h.flags & CR_D_ZLIB) != 0, (q->h.flags & CR_D_ZEROS) != 0, g, gn, q->h.raw_bytes, *buf, q->vbytes, e) < 0 ? NULL : *buf;
    }
    if (q->h.flags & CR_D_ZLIB) {
        if (q->h.raw_bytes != (int64_t)q->vbytes) {
            cr_errf(e, "malformed push: inflated size %lld, expected %zu", (long long)q->h.raw_bytes, q->vbytes);
            return NULL;
        }
        *buf = cr_xmalloc(q->vbytes + 1);
        if (cr_wire_inflate(g, gn, *buf, q->vbytes, e) < 0) return NULL;
        return *buf;
    }
    if (gn != q->vbytes) {
        cr_errf(e, "malformed push: values frame of %zu bytes, expected %zu", gn, q->vbytes);
        return NULL;
    }
    if ((uintptr_t)g % sizeof(float)) {
        *buf = cr_xmalloc(q->vbytes + 1);
        memcpy(*buf, g, q->vbytes);
        return *buf;
    }
    return g;
}

static int serve_push(cr_node *n, req *q, cr_err *e) {
    float *buf;
    const float *g = gradient(q, &buf, e);
    int rc = !g ? -1 : cr_shard_i32(q->s) ? 0 : cr_check_finite(g, q->vbytes / sizeof(float), "push refused", e);
    if (rc == 0 && cr_dir_relocating(q->s)) {
        cr_reloc_home(n, q->s, q->h.table, &q->h, q->keys, g);
    } else if (rc == 0) {
        cr_shard_push(q->s, q->keys, (int64_t)q->nk, g);
        cr_dhdr r = q->h;
        r.type = CR_D_PUSH_ACK;
        r.flags = 0;
        r.nkeys = (int64_t)q->nk; /* the keys it covers: the worker counts keys, not replies */
        zmq_send(n->srv.data, cr_parts_data(q->p, 0), cr_parts_size(q->p, 0), ZMQ_SNDMORE);
        zmq_send(n->srv.data, &r, sizeof r, 0);
        atomic_fetch_add(&n->cnt.bytes_remote, (long long)sizeof r);
    }
    free(buf);
    return rc;
}

/* Serve one request from p (frame 0: the sender's routing id). */
static void serve_one(cr_node *n, cr_parts *p) {
    if (p->n < 1) return; /* a ROUTER always gives the routing id */
    if (p->n >= 2 && cr_parts_size(p, 1) == sizeof(cr_dhdr) && *(const uint8_t *)cr_parts_data(p, 1) == CR_D_SYNC) {
        cr_replicas_deliver(n->replicas, p); /* replica sync (cr_replica.h): delivered, not answered */
        return;
    }
    if (cr_reloc_serve(n, p)) return;
    req q = {.p = p};
    cr_err e;
    int rc = check_head(n, &q, &e);
    if (rc == 0) rc = check_keys(&q, &e);
    if (rc == 0 && q.h.type == CR_D_PULL && cr_dir_relocating(q.s)) cr_reloc_home(n, q.s, q.h.table, &q.h, q.keys, NULL);
    else if (rc == 0 && q.h.type == CR_D_PULL) serve_pull(n, &q);
    else if (rc == 0) rc = serve_push(n, &q, &e);
    if (rc < 0) reply_error(n, p, p->n >= 2 && cr_parts_size(p, 1) == sizeof(cr_dhdr) ? &q.h : NULL, e.msg);
    free(q.kcopy);
    atomic_fetch_add(&n->cnt.msgs_remote, 1);
    atomic_fetch_add(&n->cnt.served, 1);
}

/* A word from the main thread on the stop pipe: 1 to stop (empty), else 0
 * ("R" + table id: bring the table's keys home, answered "D"). */
static int pipe_word(cr_node *n) {
    char b[8];
    int len = zmq_recv(n->srv.srv_stop, b, sizeof b, ZMQ_DONTWAIT);
    if (len < 0) return 0;
    if (len == 5 && b[0] == 'R') {
        int32_t t;
        memcpy(&t, b + 1, 4);
        cr_reloc_recall(n, t);
        return 0;
    }
    return 1;
}

void *cr_serve_main(void *arg) {
    cr_node *n = arg;
    zmq_pollitem_t it[2] = {{.socket = n->srv.data, .events = ZMQ_POLLIN}, {.socket = n->srv.srv_stop, .events = ZMQ_POLLIN}};
    if (cr_reloc_start(n) < 0) atomic_store(&n->srv.reloc_broken, 1);
    for (;;) {
        if (zmq_poll(it, 2, -1) < 0 && zmq_errno() != EINTR) break;
        if ((it[1].revents & ZMQ_POLLIN) && pipe_word(n)) break; /* teardown: the stop pipe spoke */
        cr_parts p;
        while (cr_parts_recv(n->srv.data, &p, ZMQ_DONTWAIT) > 0) {
            serve_one(n, &p);
            cr_parts_close(&p);
        }
    }
    cr_reloc_stop(n);
    return NULL;
}
