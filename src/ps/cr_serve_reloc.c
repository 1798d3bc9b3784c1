/* Relocation on the node's server thread (Lapse's protocol, as NuPS uses
 * it; docs/management.md has the messages and the consistency argument).
 *
 * The home of a key (its range owner) knows where the key is now
 * (cr_dir.h). A worker sends every request on a key it does not hold to the
 * key's home; the home serves what it holds, queues what is on its way to
 * it, and forwards the rest to the holder, which answers the worker
 * straight. A relocation is three messages: LOCALIZE (worker -> home), GIVE
 * (home -> holder), ROW (holder -> the worker's node, with the optimizer
 * state). Requests reaching a node for a key that is on its way there wait
 * in the transit queue (n->srv.defq) and are applied, in arrival order, when the
 * row arrives; a GIVE queued there sends the row on after them.
 *
 * Everything here runs on the server thread; rows are read and written
 * under the shard's stripe locks, like the workers' shared-memory accesses.
 * Messages from other nodes' servers are checked for size; a malformed one
 * is dropped (it can only come from a broken peer). */
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "ps/cr_node_impl.h"

#define MAX_KEYS ((int64_t)1 << 26)

/* ---------- sending ---------- */

/* A frame to send: copied by ZeroMQ, or (own set: a malloc'ed buffer of
 * n > 0 bytes) handed to it, sent without a copy and freed once sent. */
typedef struct frame {
    const void *p;
    size_t n;
    void *own;
} frame;

static void sendv(cr_node *n, void *sock, const void *id, size_t idlen, const cr_dhdr *h, const frame *f, int nf,
                  int reloc) {
    size_t b = sizeof *h;
    if (id) zmq_send(sock, id, idlen, ZMQ_SNDMORE);
    zmq_send(sock, h, sizeof *h, nf ? ZMQ_SNDMORE : 0);
    for (int i = 0; i < nf; i++) {
        int more = i + 1 < nf ? ZMQ_SNDMORE : 0;
        if (f[i].own) cr_send_owned(sock, f[i].own, f[i].n, more != 0);
        else zmq_send(sock, f[i].p, f[i].n, more);
        b += f[i].n;
    }
    atomic_fetch_add(&n->cnt.msgs_remote, 1);
    atomic_fetch_add(&n->cnt.bytes_remote, (long long)b);
    if (reloc) {
        atomic_fetch_add(&n->cnt.reloc_msgs, 1);
        atomic_fetch_add(&n->cnt.reloc_bytes, (long long)b);
    }
}

/* To worker gw, through this node's ROUTER (the worker's DEALER to us). */
static void to_worker(cr_node *n, int32_t gw, const cr_dhdr *h, const frame *f, int nf, int reloc) {
    unsigned char id[CR_D_ID_LEN];
    cr_d_id(id, 'w', gw);
    sendv(n, n->srv.data, id, sizeof id, h, f, nf, reloc);
}

static void to_node(cr_node *n, int node, const cr_dhdr *h, const frame *f, int nf) {
    if (node >= 0 && node < n->peers.nodes && n->srv.fwd[node]) {
        sendv(n, n->srv.fwd[node], NULL, 0, h, f, nf, 1);
        return;
    }
    for (int i = 0; i < nf; i++) free(f[i].own);
}

/* ---------- batches of keys, positions, rows ---------- */

typedef struct batch {
    int64_t n, cap;
    int64_t *keys;
    int32_t *idx;
    float *rows, *st;
} batch;

/* Add key k at position idx; row (dim floats) and st (sdim) may be NULL.
 * Returns where its row and state go (NULL when not kept). */
static void batch_add(batch *b, int64_t k, int32_t idx, const float *row, int dim, const float *st, int sdim) {
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->keys = cr_xrealloc(b->keys, (size_t)b->cap * sizeof *b->keys);
        b->idx = cr_xrealloc(b->idx, (size_t)b->cap * sizeof *b->idx);
        b->rows = cr_xrealloc(b->rows, (size_t)b->cap * ((size_t)dim + 1) * sizeof(float));
        b->st = cr_xrealloc(b->st, (size_t)b->cap * ((size_t)sdim + 1) * sizeof(float));
    }
    b->keys[b->n] = k;
    b->idx[b->n] = idx;
    if (row) memcpy(b->rows + (size_t)b->n * dim, row, (size_t)dim * sizeof(float));
    if (st && sdim) memcpy(b->st + (size_t)b->n * sdim, st, (size_t)sdim * sizeof(float));
    b->n++;
}

/* Room for n entries (rows and state kept): one allocation for a batch
 * whose size is known, instead of doubling copies. */
static void batch_reserve(batch *b, int64_t n, int dim, int sdim) {
    if (n <= b->cap) return;
    b->cap = n;
    b->keys = cr_xrealloc(b->keys, (size_t)n * sizeof *b->keys);
    b->idx = cr_xrealloc(b->idx, (size_t)n * sizeof *b->idx);
    b->rows = cr_xrealloc(b->rows, (size_t)n * ((size_t)dim + 1) * sizeof(float));
    b->st = cr_xrealloc(b->st, (size_t)n * ((size_t)sdim + 1) * sizeof(float));
}

static void batch_free(batch *b) {
    free(b->keys);
    free(b->idx);
    free(b->rows);
    free(b->st);
    memset(b, 0, sizeof *b);
}

/* ---------- answers ---------- */

static cr_dhdr hdr(int type, const cr_shard *s, int table, int32_t gw, uint32_t req, int32_t part, int64_t nkeys) {
    return (cr_dhdr){.type = (uint8_t)type, .table = (uint16_t)table, .req = req, .worker = gw, .dim = s->def.dim,
                     .nkeys = nkeys, .part = part};
}

/* Rows of b (pulled for worker gw, request req, part) as one reply. */
static void reply_rows(cr_node *n, const cr_shard *s, int table, int32_t gw, uint32_t req, int32_t part,
                       const batch *b) {
    if (!b->n) return;
    cr_dhdr h = hdr(CR_D_PULL_REP, s, table, gw, req, part, b->n);
    h.flags = CR_D_IDX;
    h.raw_bytes = b->n * s->def.dim * (int64_t)sizeof(float);
    frame f[2] = {{b->idx, (size_t)b->n * sizeof(int32_t), NULL}, {b->rows, (size_t)h.raw_bytes, NULL}};
    to_worker(n, gw, &h, f, 2, 0);
}

static void reply_count(cr_node *n, int type, const cr_shard *s, int table, int32_t gw, uint32_t req,
                        int32_t part, int64_t count) {
    if (!count) return;
    cr_dhdr h = hdr(type, s, table, gw, req, part, count);
    to_worker(n, gw, &h, NULL, 0, type == CR_D_LOC_DONE);
}

/* Rows of b leave for node `to` (the requester gw's node, or home for a
 * recall). The rows and their state go without a copy: b loses them and
 * is only to be freed afterwards. */
static void send_rows(cr_node *n, const cr_shard *s, int table, int to, int32_t gw, uint32_t req, int32_t part,
                      batch *b) {
    if (!b->n) return;
    cr_dhdr h = hdr(CR_D_ROW, s, table, gw, req, part, b->n);
    size_t rb = (size_t)b->n * (size_t)s->def.dim * sizeof(float), sb = (size_t)b->n * (size_t)s->sdim * sizeof(float);
    frame f[3] = {{b->keys, (size_t)b->n * sizeof(int64_t), NULL}, {b->rows, rb, b->rows}, {b->st, sb, sb ? b->st : NULL}};
    to_node(n, to, &h, f, 3);
    b->rows = NULL;
    if (sb) b->st = NULL;
    atomic_fetch_add(&n->cnt.reloc_out, b->n);
}

/* ---------- the transit queue ---------- */

static void defer(cr_node *n, int table, int op, int64_t k, int32_t gw, uint32_t req, int32_t part, int32_t idx,
                  int32_t to, const float *row, int dim) {
    if (n->srv.ndef == n->srv.capdef) {
        n->srv.capdef = n->srv.capdef ? 2 * n->srv.capdef : 64;
        n->srv.defq = cr_xrealloc(n->srv.defq, (size_t)n->srv.capdef * sizeof *n->srv.defq);
    }
    cr_deferred *d = &n->srv.defq[n->srv.ndef++];
    *d = (cr_deferred){.key = k, .table = (uint16_t)table, .op = (uint8_t)op, .gw = gw, .part = part,
                       .idx = idx, .to = to, .req = req};
    if (row) {
        d->row = cr_xmalloc((size_t)dim * sizeof(float));
        memcpy(d->row, row, (size_t)dim * sizeof(float));
    }
    atomic_fetch_add(&n->cnt.deferred, 1);
    atomic_fetch_add(&n->cnt.deferred_total, 1);
}

static pthread_mutex_t *lock_of(cr_shard *s, int64_t k) { return &s->locks[(uint64_t)k % CR_SHARD_STRIPES]; }

/* Take the row of key k (here, lock held) into b; at most `left` more rows
 * (this one included) will come: room for them at once. */
static void take_into(batch *b, cr_shard *s, int64_t k, int64_t left) {
    if (b->n == b->cap) batch_reserve(b, b->n + (left > b->n ? left : b->n + 1), s->def.dim, s->sdim);
    batch_add(b, k, 0, NULL, s->def.dim, NULL, s->sdim);
    cr_dir_take(s, k, b->rows + (size_t)(b->n - 1) * (size_t)s->def.dim,
                b->st + (size_t)(b->n - 1) * (size_t)s->sdim);
}

/* What the queued requests applied while one ROW message is installed
 * send: grouped per kind, request part and destination, and sent once the
 * whole message is in (a reply or a ROW message per group, not per row:
 * keys that wait in transit mostly arrive together and go on together). */
typedef struct outgrp {
    uint8_t op;
    uint16_t table;
    int32_t gw, part, to;
    uint32_t req;
    int64_t acks; /* PUSH: keys applied */
    batch b;      /* PULL: rows and positions; GIVE: rows and state taken */
} outgrp;

typedef struct outbox {
    outgrp *g;
    int n, cap;
} outbox;

static outgrp *group_of(outbox *o, const cr_deferred *d) {
    for (int i = 0; i < o->n; i++) {
        outgrp *x = &o->g[i];
        if (x->op == d->op && x->table == d->table && x->gw == d->gw && x->part == d->part && x->to == d->to &&
            x->req == d->req)
            return x;
    }
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 4;
        o->g = cr_xrealloc(o->g, (size_t)o->cap * sizeof *o->g);
    }
    o->g[o->n] = (outgrp){.op = d->op, .table = d->table, .gw = d->gw, .part = d->part, .to = d->to, .req = d->req};
    return &o->g[o->n++];
}

/* Send what o holds, in the order the groups were opened (s: their table). */
static void outbox_flush(cr_node *n, cr_shard *s, outbox *o) {
    for (int i = 0; i < o->n; i++) {
        outgrp *x = &o->g[i];
        if (x->op == CR_D_PULL) reply_rows(n, s, x->table, x->gw, x->req, x->part, &x->b);
        else if (x->op == CR_D_PUSH) reply_count(n, CR_D_PUSH_ACK, s, x->table, x->gw, x->req, x->part, x->acks);
        else send_rows(n, s, x->table, x->to, x->gw, x->req, x->part, &x->b);
        batch_free(&x->b);
    }
    free(o->g);
    memset(o, 0, sizeof *o);
}

/* Apply one queued request on key d->key, whose row is here (lock held);
 * what it sends goes to o. Returns 1 when it was a GIVE: the row is gone
 * again. */
static int apply_deferred(cr_shard *s, const cr_deferred *d, outbox *o) {
    float *st, *w = cr_dir_row(s, d->key, &st);
    if (!w) return 1;
    outgrp *x = group_of(o, d);
    if (d->op == CR_D_PULL) {
        batch_add(&x->b, d->key, d->idx, w, s->def.dim, NULL, 0);
    } else if (d->op == CR_D_PUSH) {
        cr_optim_apply(&s->def.optim, w, st, d->row, s->def.dim);
        x->acks++;
    } else {
        take_into(&x->b, s, d->key, 1);
    }
    return d->op == CR_D_GIVE;
}

/* The row of key k arrived: apply what waited for it, in order, up to a
 * GIVE that sends it on; what queued after that GIVE waits for the row's
 * next return (the home gave the key back here later). Lock held. */
static void drain(cr_node *n, cr_shard *s, int table, int64_t k, outbox *o) {
    int64_t j = 0;
    int gone = 0;
    for (int64_t i = 0; i < n->srv.ndef; i++) {
        cr_deferred *d = &n->srv.defq[i];
        if (!gone && d->key == k && d->table == table) {
            gone = apply_deferred(s, d, o);
            free(d->row);
            atomic_fetch_sub(&n->cnt.deferred, 1);
        } else
            n->srv.defq[j++] = *d;
    }
    n->srv.ndef = j;
}

/* ---------- a worker's pull or push at the home ---------- */

static void forward(cr_node *n, cr_shard *s, int table, const cr_dhdr *rq, int x, const batch *b) {
    int push = rq->type == CR_D_PUSH;
    cr_dhdr h = hdr(push ? CR_D_FWD_PUSH : CR_D_FWD_PULL, s, table, rq->worker, rq->req, rq->part, b->n);
    frame f[3] = {{b->keys, (size_t)b->n * sizeof(int64_t), NULL},
                  {b->idx, (size_t)b->n * sizeof(int32_t), NULL},
                  {b->rows, (size_t)b->n * (size_t)s->def.dim * sizeof(float), NULL}};
    to_node(n, x, &h, f, push ? 3 : 2);
}

/* Serve key k at position i if its row is here, else queue it (lock held).
 * Returns 1 if served. */
static int serve_or_defer(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, int64_t k, int32_t i,
                          const float *g, batch *out) {
    float *st, *w = cr_dir_row(s, k, &st);
    int push = h->type == CR_D_PUSH || h->type == CR_D_FWD_PUSH;
    if (!w) {
        defer(n, table, push ? CR_D_PUSH : CR_D_PULL, k, h->worker, h->req, h->part, i, 0, g, s->def.dim);
        return 0;
    }
    if (push) cr_optim_apply(&s->def.optim, w, st, g, s->def.dim);
    else batch_add(out, k, i, w, s->def.dim, NULL, 0);
    return 1;
}

static void answer(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, const batch *out, int64_t served) {
    if (h->type == CR_D_PUSH || h->type == CR_D_FWD_PUSH)
        reply_count(n, CR_D_PUSH_ACK, s, table, h->worker, h->req, h->part, served);
    else
        reply_rows(n, s, table, h->worker, h->req, h->part, out);
}

void cr_reloc_home(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, const int64_t *keys, const float *g) {
    int dim = s->def.dim, push = h->type == CR_D_PUSH;
    batch out = {0}, *fw = cr_xcalloc((size_t)n->peers.nodes, sizeof *fw);
    int64_t served = 0, fwd = 0;
    for (int64_t i = 0; i < h->nkeys; i++) {
        int64_t k = keys[i];
        const float *gi = push ? g + (size_t)i * (size_t)dim : NULL;
        pthread_mutex_t *m = lock_of(s, k);
        pthread_mutex_lock(m);
        unsigned on = cr_dir_owner(s, k);
        if (on == (unsigned)n->peers.id) {
            served += serve_or_defer(n, s, table, h, k, (int32_t)i, gi, &out);
        } else {
            batch_add(&fw[on], k, (int32_t)i, gi, dim, NULL, 0);
            fwd++;
        }
        pthread_mutex_unlock(m);
    }
    answer(n, s, table, h, &out, served);
    for (int x = 0; x < n->peers.nodes; x++) {
        if (fw[x].n) forward(n, s, table, h, x, &fw[x]);
        batch_free(&fw[x]);
    }
    free(fw);
    batch_free(&out);
    /* each key once: served by its home (now, or from the transit queue) or forwarded */
    atomic_fetch_add(&n->cnt.acc_remote, h->nkeys - fwd);
    atomic_fetch_add(&n->cnt.acc_fwd, fwd);
}

/* A request the home forwarded: the keys are here, or on their way here. */
static void on_fwd(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, const int64_t *keys, const int32_t *idx,
                   const float *g) {
    batch out = {0};
    int64_t served = 0;
    for (int64_t i = 0; i < h->nkeys; i++) {
        pthread_mutex_t *m = lock_of(s, keys[i]);
        pthread_mutex_lock(m);
        served += serve_or_defer(n, s, table, h, keys[i], idx[i], g ? g + (size_t)i * (size_t)s->def.dim : NULL,
                                 &out);
        pthread_mutex_unlock(m);
    }
    answer(n, s, table, h, &out, served);
    batch_free(&out); /* counted by the home, as forwarded */
}

/* ---------- relocation ---------- */

static void send_gives(cr_node *n, cr_shard *s, int table, int to, int32_t gw, uint32_t req, int32_t part,
                       batch *give) {
    for (int x = 0; x < n->peers.nodes; x++) {
        if (give[x].n) {
            cr_dhdr g = hdr(CR_D_GIVE, s, table, gw, req, part, give[x].n);
            g.aux = to;
            frame f = {give[x].keys, (size_t)give[x].n * sizeof(int64_t), NULL};
            to_node(n, x, &g, &f, 1);
        }
        batch_free(&give[x]);
    }
}

/* One key of a LOCALIZE from node r (lock held): 1 if already done. */
static int localize_one(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, int64_t k, int64_t left, int r,
                        batch *rows, batch *give) {
    unsigned on = cr_dir_owner(s, k), me = (unsigned)n->peers.id;
    float *st;
    if (cr_dir_tech(s, k) != CR_TECH_RELOCATE || on == (unsigned)r) return 1;
    cr_dir_set_owner(s, k, (unsigned)r);
    if (on == me && cr_dir_row(s, k, &st)) {
        take_into(rows, s, k, left); /* here: the row goes now */
        return 0;
    }
    if (on == me) /* on its way here: it goes on when it arrives */
        defer(n, table, CR_D_GIVE, k, h->worker, h->req, h->part, 0, r, NULL, 0);
    else
        batch_add(&give[on], k, 0, NULL, 0, NULL, 0);
    return 0;
}

static void on_localize(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, const int64_t *keys) {
    int r = h->worker / n->peers.wpn;
    batch rows = {0}, *give = cr_xcalloc((size_t)n->peers.nodes, sizeof *give);
    int64_t done = 0;
    for (int64_t i = 0; i < h->nkeys; i++) {
        pthread_mutex_t *m = lock_of(s, keys[i]);
        pthread_mutex_lock(m);
        done += localize_one(n, s, table, h, keys[i], h->nkeys - i, r, &rows, give);
        pthread_mutex_unlock(m);
    }
    reply_count(n, CR_D_LOC_DONE, s, table, h->worker, h->req, h->part, done);
    send_rows(n, s, table, r, h->worker, h->req, h->part, &rows);
    send_gives(n, s, table, r, h->worker, h->req, h->part, give);
    batch_free(&rows);
    free(give);
}

static void on_give(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, const int64_t *keys) {
    batch rows = {0};
    for (int64_t i = 0; i < h->nkeys; i++) {
        pthread_mutex_t *m = lock_of(s, keys[i]);
        pthread_mutex_lock(m);
        float *st;
        if (cr_dir_row(s, keys[i], &st)) take_into(&rows, s, keys[i], h->nkeys - i);
        else defer(n, table, CR_D_GIVE, keys[i], h->worker, h->req, h->part, 0, h->aux, NULL, 0);
        pthread_mutex_unlock(m);
    }
    send_rows(n, s, table, h->aux, h->worker, h->req, h->part, &rows);
    batch_free(&rows);
}

/* The main thread waits for a recall: tell it once every key is home. */
static void check_recall(cr_node *n) {
    if (n->srv.recall < 0 || atomic_load(&n->shards.t[n->srv.recall]->dir->away) != 0) return;
    n->srv.recall = -1;
    zmq_send(n->srv.srv_stop, "D", 1, ZMQ_DONTWAIT);
}

static void on_row(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, const int64_t *keys, const float *rows,
                   const float *st) {
    outbox o = {0};
    for (int64_t i = 0; i < h->nkeys; i++) {
        pthread_mutex_t *m = lock_of(s, keys[i]);
        pthread_mutex_lock(m);
        cr_dir_install(s, keys[i], rows + (size_t)i * (size_t)s->def.dim, st + (size_t)i * (size_t)s->sdim);
        if (n->srv.ndef) drain(n, s, table, keys[i], &o);
        pthread_mutex_unlock(m);
    }
    outbox_flush(n, s, &o);
    atomic_fetch_add(&n->cnt.reloc_in, h->nkeys);
    if (h->worker >= 0) reply_count(n, CR_D_LOC_DONE, s, table, h->worker, h->req, h->part, h->nkeys);
    check_recall(n);
}

void cr_reloc_recall(cr_node *n, int table) {
    if (table < 0 || table >= cr_shards_count(&n->shards)) return;
    cr_shard *s = n->shards.t[table];
    batch *give = cr_xcalloc((size_t)n->peers.nodes, sizeof *give);
    unsigned me = (unsigned)n->peers.id;
    for (int64_t k = s->lo; k < s->hi; k++) {
        pthread_mutex_t *m = lock_of(s, k);
        pthread_mutex_lock(m);
        unsigned on = cr_dir_owner(s, k);
        if (on != me) {
            cr_dir_set_owner(s, k, me);
            batch_add(&give[on], k, 0, NULL, 0, NULL, 0);
        }
        pthread_mutex_unlock(m);
    }
    send_gives(n, s, table, n->peers.id, -1, 0, 0, give);
    free(give);
    n->srv.recall = table;
    check_recall(n);
}

/* ---------- messages ---------- */

/* Frame i of p as an aligned array of want bytes: the frame itself, or a
 * copy in *copy (caller frees). NULL if the size is wrong. */
static const void *frame_of(cr_parts *p, int i, size_t want, void **copy) {
    if (i >= p->n || cr_parts_size(p, i) != want) return NULL;
    const void *d = cr_parts_data(p, i);
    if ((uintptr_t)d % 8 == 0) return d;
    *copy = cr_xmalloc(want + 1);
    memcpy(*copy, d, want);
    return *copy;
}

/* An error reply to the sender of p, unless it is another node's server
 * (whose DEALER nobody reads: a malformed message from it is a bug,
 * dropped). Workers and anything else get the error. */
static void refuse(cr_node *n, cr_parts *p, const cr_dhdr *h, const char *msg) {
    if (cr_parts_size(p, 0) == CR_D_ID_LEN && *(const char *)cr_parts_data(p, 0) == 's') return;
    cr_dhdr r = {.type = CR_D_ERROR, .table = h->table, .req = h->req, .worker = h->worker, .part = h->part};
    zmq_send(n->srv.data, cr_parts_data(p, 0), cr_parts_size(p, 0), ZMQ_SNDMORE);
    zmq_send(n->srv.data, &r, sizeof r, ZMQ_SNDMORE);
    zmq_send(n->srv.data, msg, strlen(msg), 0);
}

/* Frames a message of each type has after the header (routing id first). */
static int frames_of(int type) {
    switch (type) {
    case CR_D_HELLO: return 2;
    case CR_D_LOCALIZE: case CR_D_GIVE: return 3;
    case CR_D_FWD_PULL: return 4;
    case CR_D_ROW: case CR_D_FWD_PUSH: return 5;
    default: return 0;
    }
}

typedef struct rmsg {
    const int64_t *keys;
    const int32_t *idx;
    const float *rows, *st;
    void *copy[4];
} rmsg;

/* Check and view the frames of relocation message h to table s. */
static int view(cr_node *n, cr_parts *p, const cr_dhdr *h, const cr_shard *s, rmsg *v) {
    size_t nk = (size_t)h->nkeys, dim = (size_t)s->def.dim;
    if (h->nkeys < 0 || h->nkeys > MAX_KEYS || h->dim != s->def.dim) return -1;
    if (h->worker < -1 || h->worker >= n->peers.nodes * n->peers.wpn || h->aux < 0 || h->aux >= n->peers.nodes) return -1;
    if (!(v->keys = frame_of(p, 2, nk * sizeof(int64_t), &v->copy[0]))) return -1;
    for (size_t i = 0; i < nk; i++)
        if (v->keys[i] < 0 || v->keys[i] >= s->def.keys) return -1;
    if (h->type == CR_D_FWD_PULL || h->type == CR_D_FWD_PUSH) {
        if (!(v->idx = frame_of(p, 3, nk * sizeof(int32_t), &v->copy[1]))) return -1;
        if (h->type == CR_D_FWD_PUSH && !(v->rows = frame_of(p, 4, nk * dim * sizeof(float), &v->copy[2])))
            return -1;
    }
    if (h->type == CR_D_ROW && (!(v->rows = frame_of(p, 3, nk * dim * sizeof(float), &v->copy[2])) ||
                                !(v->st = frame_of(p, 4, nk * (size_t)s->sdim * sizeof(float), &v->copy[3]))))
        return -1;
    return 0;
}

static void dispatch(cr_node *n, cr_parts *p, const cr_dhdr *h, cr_shard *s) {
    rmsg v = {0};
    if (view(n, p, h, s, &v) < 0) {
        refuse(n, p, h, "malformed relocation message");
    } else if (h->type == CR_D_LOCALIZE) {
        int ok = h->worker >= 0;
        for (int64_t i = 0; ok && i < h->nkeys; i++) ok = cr_dir_is_home(s, v.keys[i]);
        if (ok) on_localize(n, s, h->table, h, v.keys);
        else refuse(n, p, h, "localize: a key is not homed at this node");
    } else if (h->type == CR_D_GIVE) {
        on_give(n, s, h->table, h, v.keys);
    } else if (h->type == CR_D_ROW) {
        on_row(n, s, h->table, h, v.keys, v.rows, v.st);
    } else if (h->worker >= 0) {
        on_fwd(n, s, h->table, h, v.keys, v.idx, v.rows);
    } else {
        refuse(n, p, h, "malformed relocation message: no worker to answer");
    }
    for (int i = 0; i < 4; i++) free(v.copy[i]);
}

int cr_reloc_serve(cr_node *n, cr_parts *p) {
    if (p->n < 2 || cr_parts_size(p, 1) != sizeof(cr_dhdr)) return 0;
    cr_dhdr h;
    memcpy(&h, cr_parts_data(p, 1), sizeof h);
    int want = frames_of(h.type);
    if (!want) return 0;
    atomic_fetch_add(&n->cnt.msgs_remote, 1);
    if (h.type == CR_D_HELLO) {
        zmq_send(n->srv.data, cr_parts_data(p, 0), cr_parts_size(p, 0), ZMQ_SNDMORE);
        zmq_send(n->srv.data, &h, sizeof h, 0);
        return 1;
    }
    if (p->n != want || h.table >= cr_shards_count(&n->shards)) {
        refuse(n, p, &h, "malformed relocation message: wrong frame count or table");
        return 1;
    }
    dispatch(n, p, &h, n->shards.t[h.table]);
    return 1;
}

int cr_reloc_start(cr_node *n) {
    n->srv.recall = -1;
    n->srv.fwd = cr_xcalloc((size_t)n->peers.nodes, sizeof *n->srv.fwd);
    for (int i = 0; i < n->peers.nodes; i++) {
        if (i == n->peers.id) continue;
        unsigned char id[CR_D_ID_LEN];
        cr_d_id(id, 's', n->peers.id);
        n->srv.fwd[i] = cr_socket(n->peers.zctx, ZMQ_DEALER);
        if (!n->srv.fwd[i]) return -1;
        int nohwm = 0; /* forwarded requests and rows must not be dropped or block the server */
        zmq_setsockopt(n->srv.fwd[i], ZMQ_ROUTING_ID, id, sizeof id);
        zmq_setsockopt(n->srv.fwd[i], ZMQ_SNDHWM, &nohwm, sizeof nohwm);
        cr_curve_client(n->srv.fwd[i], n->peers.curve);
        if (zmq_connect(n->srv.fwd[i], n->peers.addrs[i]) < 0) return -1;
    }
    return 0;
}

void cr_reloc_stop(cr_node *n) {
    for (int i = 0; n->srv.fwd && i < n->peers.nodes; i++)
        if (n->srv.fwd[i]) zmq_close(n->srv.fwd[i]);
    free(n->srv.fwd);
    n->srv.fwd = NULL;
    for (int64_t i = 0; i < n->srv.ndef; i++) free(n->srv.defq[i].row);
    free(n->srv.defq);
    n->srv.defq = NULL;
    n->srv.ndef = n->srv.capdef = 0;
}
