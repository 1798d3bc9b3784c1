#include "ps/cr_wclient.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_finite.h"
#include "ps/cr_node_impl.h"

typedef struct wreq {
    uint32_t id;
    int kind; /* CR_D_PULL or CR_D_PUSH */
    int outstanding;
    float *out;
    int32_t dim;
    int64_t **pos; /* per node: positions in the caller's key list (pull) */
    int64_t *want; /* per node: rows asked of it (pull); its reply must carry as many */
    int whole;     /* pull from a single node in key order: rows land as they are */
} wreq;

struct cr_wclient {
    cr_node *n;
    int lw, gw;
    void **peer;       /* DEALER per node (NULL for this node) */
    void *stop;        /* SUB to the node's stop signal: item 0 of items */
    zmq_pollitem_t *items;
    int *item_node;
    int nitems;
    uint32_t next_id;
    wreq *reqs;
    int nreqs, capreqs;
    int64_t *cnt;      /* scratch: keys per node */
    int64_t *fill;     /* scratch: keys placed per node */
    int64_t **k;       /* scratch: per node, the owned keys of its part (NULL: none) */
    float **v;         /* scratch: per node, the owned rows of its part (push) */
    int32_t *own;      /* scratch: owner node of each key of the current request */
    int64_t owncap;
};

cr_wclient *cr_wclient_new(cr_node *n, int lw, cr_err *e) {
    cr_wclient *w = cr_xcalloc(1, sizeof *w);
    w->n = n;
    w->lw = lw;
    w->gw = n->id * n->wpn + lw;
    w->next_id = 1;
    w->peer = cr_xcalloc((size_t)n->nodes, sizeof *w->peer);
    w->items = cr_xcalloc((size_t)n->nodes + 1, sizeof *w->items);
    w->item_node = cr_xcalloc((size_t)n->nodes + 1, sizeof *w->item_node);
    w->cnt = cr_xcalloc((size_t)n->nodes, sizeof *w->cnt);
    w->fill = cr_xcalloc((size_t)n->nodes, sizeof *w->fill);
    w->k = cr_xcalloc((size_t)n->nodes, sizeof *w->k);
    w->v = cr_xcalloc((size_t)n->nodes, sizeof *w->v);
    w->stop = cr_socket(n->zctx, ZMQ_SUB);
    if (!w->stop || zmq_setsockopt(w->stop, ZMQ_SUBSCRIBE, "", 0) < 0 || zmq_connect(w->stop, n->wstop_ep) < 0) {
        cr_errf(e, "worker %d: cannot connect to the node's stop signal: %s", w->gw, zmq_strerror(errno));
        cr_wclient_destroy(&w);
        return NULL;
    }
    w->items[0] = (zmq_pollitem_t){.socket = w->stop, .events = ZMQ_POLLIN};
    w->item_node[w->nitems++] = -1;
    for (int i = 0; i < n->nodes; i++) {
        if (i == n->id) continue;
        w->peer[i] = cr_socket(n->zctx, ZMQ_DEALER);
        if (w->peer[i]) cr_curve_client(w->peer[i], &n->opts.curve);
        if (!w->peer[i] || zmq_connect(w->peer[i], n->addrs[i]) < 0) {
            cr_errf(e, "worker %d: cannot connect to node %d at '%s': %s", w->gw, i, n->addrs[i],
                    zmq_strerror(errno));
            cr_wclient_destroy(&w);
            return NULL;
        }
        w->items[w->nitems] = (zmq_pollitem_t){.socket = w->peer[i], .events = ZMQ_POLLIN};
        w->item_node[w->nitems++] = i;
    }
    return w;
}

static void req_free(cr_wclient *w, wreq *r) {
    if (r->pos)
        for (int i = 0; i < w->n->nodes; i++) free(r->pos[i]);
    free(r->pos);
    free(r->want);
}

void cr_wclient_destroy(cr_wclient **wp) {
    cr_wclient *w = wp ? *wp : NULL;
    if (!w) return;
    for (int i = 0; i < w->n->nodes; i++)
        if (w->peer[i]) zmq_close(w->peer[i]);
    if (w->stop) zmq_close(w->stop);
    for (int i = 0; i < w->nreqs; i++) req_free(w, &w->reqs[i]);
    free(w->reqs);
    free(w->peer);
    free(w->items);
    free(w->item_node);
    free(w->cnt);
    free(w->fill);
    free(w->k);
    free(w->v);
    free(w->own);
    free(w);
    *wp = NULL;
}

static int check_keys(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const char *op, cr_err *e) {
    memset(w->cnt, 0, (size_t)w->n->nodes * sizeof *w->cnt);
    if (n > w->owncap) {
        free(w->own);
        w->owncap = n > 2 * w->owncap ? n : 2 * w->owncap;
        w->own = cr_xmalloc((size_t)w->owncap * sizeof *w->own);
    }
    for (int64_t i = 0; i < n; i++) {
        if (keys[i] < 0 || keys[i] >= s->def.keys)
            return cr_errf(e, "%s: key %lld (position %lld) out of range [0, %lld) of table '%s'", op,
                           (long long)keys[i], (long long)i + 1, (long long)s->def.keys, s->def.name);
        int o = cr_shard_owner(s, keys[i]);
        w->own[i] = o;
        w->cnt[o]++;
    }
    return 0;
}

static wreq *new_req(cr_wclient *w, int kind) {
    if (w->nreqs == w->capreqs) {
        w->capreqs = w->capreqs ? 2 * w->capreqs : 16;
        w->reqs = cr_xrealloc(w->reqs, (size_t)w->capreqs * sizeof *w->reqs);
    }
    wreq *r = &w->reqs[w->nreqs++];
    memset(r, 0, sizeof *r);
    r->id = w->next_id++;
    if (w->next_id == 0) w->next_id = 1;
    r->kind = kind;
    return r;
}

static int table_id(cr_node *n, cr_shard *s) {
    int k = atomic_load(&n->ntables);
    for (int i = 0; i < k; i++)
        if (n->tables[i] == s) return i;
    return -1;
}

/* The header of request r to one node (nkeys rows; push: raw_bytes too). */
static cr_dhdr req_hdr(cr_wclient *w, cr_shard *s, const wreq *r, int64_t nkeys) {
    cr_dhdr h = {.type = (uint32_t)r->kind, .table = (uint16_t)table_id(w->n, s), .req = r->id, .worker = w->gw,
                 .dim = s->def.dim, .nkeys = nkeys};
    if (r->kind == CR_D_PUSH) h.raw_bytes = nkeys * s->def.dim * (int64_t)sizeof(float);
    return h;
}

/* The one other node holding every key, or -1 (keys on several nodes). */
static int sole_owner(cr_wclient *w, int64_t n) {
    for (int i = 0; i < w->n->nodes; i++)
        if (w->cnt[i] == n) return i == w->n->id ? -1 : i;
    return -1;
}

static void count_local(cr_node *nd, int64_t nlocal, int dim) {
    atomic_fetch_add(&nd->keys_local, nlocal);
    atomic_fetch_add(&nd->bytes_local, nlocal * dim * (long long)sizeof(float));
    atomic_fetch_add(&nd->msgs_local, 1);
}

/* Send a frame that stays the caller's: ZeroMQ reads it while sending and
 * never frees it. Only for requests the caller waits on before touching the
 * buffer again: the reply proves every byte has left. */
static int send_borrowed(void *sock, void *buf, size_t len, int more) {
    zmq_msg_t m;
    if (zmq_msg_init_data(&m, buf, len, NULL, NULL) < 0) return -1;
    if (zmq_msg_send(&m, sock, more ? ZMQ_SNDMORE : 0) < 0) {
        zmq_msg_close(&m);
        return -1;
    }
    return 0;
}

/* Rows of a push to a table that asks for compression, when they are large:
 * a new zlib buffer (ours to send or free; h and *vb updated), else NULL. */
static void *deflate_rows(cr_wclient *w, cr_dhdr *h, const float *vals, size_t *vb) {
    void *z;
    size_t zn;
    if (!vals || !w->n->tables[h->table]->def.compress || *vb < 65536) return NULL;
    if (cr_wire_deflate(vals, *vb, &z, &zn, NULL) != 0) return NULL;
    h->flags |= CR_D_ZLIB;
    *vb = zn;
    return z;
}

static int sent(cr_wclient *w, int node, int rc, const cr_dhdr *h, size_t vb, cr_err *e) {
    if (rc < 0) return cr_errf(e, "send to node %d failed: %s", node, zmq_strerror(errno));
    atomic_fetch_add(&w->n->msgs_remote, 1);
    atomic_fetch_add(&w->n->bytes_remote, (long long)(sizeof *h + (size_t)h->nkeys * sizeof(int64_t) + vb));
    atomic_fetch_add(&w->n->keys_remote, h->nkeys);
    return 0;
}

/* Send request h with keys and rows (NULL for a pull) that become ZeroMQ's:
 * freed once sent, or here on failure; *keys and *vals are set to NULL. */
static int send_owned(cr_wclient *w, int node, cr_dhdr *h, int64_t **keys, float **vals, cr_err *e) {
    void *sock = w->peer[node];
    int64_t *k = *keys;
    float *v = vals ? *vals : NULL;
    *keys = NULL;
    if (vals) *vals = NULL;
    size_t kb = (size_t)h->nkeys * sizeof *k, vb = v ? (size_t)h->raw_bytes : 0;
    void *z = deflate_rows(w, h, v, &vb);
    if (z) {
        free(v);
        v = z;
    }
    int rc = zmq_send(sock, h, sizeof *h, ZMQ_SNDMORE) < 0 ? -1 : 0;
    if (rc == 0) rc = cr_send_owned(sock, k, kb, v != NULL);
    else free(k);
    if (v && rc == 0) rc = cr_send_owned(sock, v, vb, 0);
    else free(v);
    return sent(w, node, rc, h, vb, e);
}

/* Send request h with the caller's keys and rows, without copying them
 * (compressed rows go in a buffer of ours). Only for requests waited on
 * before the caller gets its buffers back. */
static int send_lent(cr_wclient *w, int node, cr_dhdr *h, const int64_t *keys, const float *vals, cr_err *e) {
    void *sock = w->peer[node];
    size_t kb = (size_t)h->nkeys * sizeof *keys, vb = vals ? (size_t)h->raw_bytes : 0;
    void *z = deflate_rows(w, h, vals, &vb);
    int rc = zmq_send(sock, h, sizeof *h, ZMQ_SNDMORE) < 0 ? -1 : 0;
    if (rc == 0) rc = send_borrowed(sock, (void *)keys, kb, vals != NULL);
    if (vals && rc == 0) rc = z ? cr_send_owned(sock, z, vb, 0) : send_borrowed(sock, (void *)vals, vb, 0);
    else free(z);
    return sent(w, node, rc, h, vb, e);
}

/* Send every node its part (w->k[i], w->v[i] for a push; owned, set to
 * NULL). After a failed send the remaining parts are freed. */
static int send_parts(cr_wclient *w, cr_shard *s, wreq *r, cr_err *e) {
    int rc = 0;
    for (int i = 0; i < w->n->nodes; i++) {
        if (!w->k[i]) continue;
        cr_dhdr h = req_hdr(w, s, r, w->cnt[i]);
        if (rc == 0 && (rc = send_owned(w, i, &h, &w->k[i], r->kind == CR_D_PUSH ? &w->v[i] : NULL, e)) == 0)
            r->outstanding++;
        free(w->k[i]);
        free(w->v[i]);
        w->k[i] = NULL;
        w->v[i] = NULL;
    }
    return rc;
}

/* Send one node the whole request: keys (and rows) taken (owned) or lent. */
static int send_whole(cr_wclient *w, cr_shard *s, wreq *r, int node, int64_t n, int64_t **own_k, float **own_v,
                      const int64_t *keys, const float *vals, cr_err *e) {
    cr_dhdr h = req_hdr(w, s, r, n);
    int rc = own_k ? send_owned(w, node, &h, own_k, own_v, e) : send_lent(w, node, &h, keys, vals, e);
    if (rc == 0) r->outstanding++;
    return rc;
}

/* ---------- pull ---------- */

/* Check the keys and serve the local ones from shared memory. 0: all were
 * local, done; 1: *rp is a new request for the rest (rows of other nodes). */
static int pull_begin(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, wreq **rp,
                      cr_err *e) {
    cr_node *nd = w->n;
    if (check_keys(w, s, keys, n, "pull", e) < 0) return -1;
    atomic_fetch_add(&nd->pulls, 1);
    nd->ws[w->lw].pulls++;
    int64_t nlocal = w->cnt[nd->id];
    if (nlocal == n) { /* all local: shared memory, done */
        cr_shard_pull(s, keys, n, out);
        count_local(nd, n, s->def.dim);
        return 0;
    }
    wreq *r = new_req(w, CR_D_PULL);
    r->out = out;
    r->dim = s->def.dim;
    r->pos = cr_xcalloc((size_t)nd->nodes, sizeof *r->pos);
    r->want = cr_xcalloc((size_t)nd->nodes, sizeof *r->want);
    for (int i = 0; i < nd->nodes; i++) r->want[i] = i == nd->id ? 0 : w->cnt[i];
    if (nlocal) count_local(nd, nlocal, s->def.dim);
    *rp = r;
    return 1;
}

/* Keys on several nodes: local rows now, each other node an owned list of
 * its keys (w->k) and the positions its rows go to (r->pos). */
static int pull_split(cr_wclient *w, cr_shard *s, wreq *r, const int64_t *keys, int64_t n, float *out,
                      cr_err *e) {
    cr_node *nd = w->n;
    int dim = s->def.dim;
    for (int i = 0; i < nd->nodes; i++) {
        w->fill[i] = 0;
        if (!w->cnt[i] || i == nd->id) continue;
        w->k[i] = cr_xmalloc((size_t)w->cnt[i] * sizeof **w->k);
        r->pos[i] = cr_xmalloc((size_t)w->cnt[i] * sizeof **r->pos);
    }
    for (int64_t i = 0; i < n; i++) {
        int o = w->own[i];
        if (o == nd->id) {
            cr_shard_pull(s, keys + i, 1, out + (size_t)i * dim);
            continue;
        }
        w->k[o][w->fill[o]] = keys[i];
        r->pos[o][w->fill[o]++] = i;
    }
    return send_parts(w, s, r, e);
}

int cr_wclient_pull_borrow(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, cr_err *e) {
    wreq *r;
    int rc = pull_begin(w, s, keys, n, out, &r, e);
    if (rc <= 0) return rc;
    uint32_t id = r->id;
    int one = sole_owner(w, n);
    r->whole = one >= 0; /* keys go as they are, rows come back in order */
    rc = one >= 0 ? send_whole(w, s, r, one, n, NULL, NULL, keys, NULL, e) : pull_split(w, s, r, keys, n, out, e);
    /* even after a failed send, what was sent may still read the borrowed keys */
    if (cr_wclient_wait(w, id, rc < 0 ? NULL : e) < 0 && rc == 0) rc = -1;
    return rc;
}

int cr_wclient_pull_copy(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, uint32_t *req,
                         cr_err *e) {
    wreq *r;
    *req = 0;
    int rc = pull_begin(w, s, keys, n, out, &r, e);
    if (rc <= 0) return rc;
    *req = r->id;
    int one = sole_owner(w, n);
    if (one < 0) return pull_split(w, s, r, keys, n, out, e);
    int64_t *k = cr_xmalloc((size_t)n * sizeof *k);
    memcpy(k, keys, (size_t)n * sizeof *k);
    r->whole = 1;
    return send_whole(w, s, r, one, n, &k, NULL, NULL, NULL, e);
}

/* ---------- push ---------- */

/* The local rows of a push hold only finite values (else -1, nothing
 * applied): checked here, before shared memory is touched. Remote rows are
 * checked by their owner's server, which refuses them with an error reply;
 * checking them here too would scan every remote push twice. */
static int local_finite(cr_wclient *w, const float *vals, int64_t n, int64_t nlocal, int dim, cr_err *e) {
    if (nlocal == n) return cr_check_finite(vals, (size_t)n * (size_t)dim, "push refused", e);
    for (int64_t i = 0; nlocal && i < n; i++)
        if (w->own[i] == w->n->id && cr_check_finite(vals + (size_t)i * dim, (size_t)dim, "push refused", e) < 0)
            return -1;
    return 0;
}

/* Check the keys and apply the local rows through shared memory. 0: all
 * were local, done; 1: *rp is a new request for the rest. */
static int push_begin(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals, wreq **rp,
                      cr_err *e) {
    cr_node *nd = w->n;
    if (check_keys(w, s, keys, n, "push", e) < 0) return -1;
    int dim = s->def.dim;
    int64_t nlocal = w->cnt[nd->id];
    if (local_finite(w, vals, n, nlocal, dim, e) < 0) return -1;
    atomic_fetch_add(&nd->pushes, 1);
    nd->ws[w->lw].pushes++;
    if (nlocal == n) cr_shard_push(s, keys, n, vals);
    else if (nlocal)
        for (int64_t i = 0; i < n; i++)
            if (w->own[i] == nd->id) cr_shard_push(s, keys + i, 1, vals + (size_t)i * dim);
    if (nlocal) count_local(nd, nlocal, dim);
    if (nlocal == n) return 0;
    *rp = new_req(w, CR_D_PUSH);
    (*rp)->dim = dim;
    return 1;
}

/* Keys on several nodes: each other node gets owned copies of its keys and
 * rows (w->k, w->v), then its request. */
static int push_split(cr_wclient *w, cr_shard *s, wreq *r, const int64_t *keys, int64_t n, const float *vals,
                      cr_err *e) {
    cr_node *nd = w->n;
    size_t dim = (size_t)s->def.dim, rowb = dim * sizeof(float);
    for (int o = 0; o < nd->nodes; o++) {
        w->fill[o] = 0;
        if (!w->cnt[o] || o == nd->id) continue;
        w->k[o] = cr_xmalloc((size_t)w->cnt[o] * sizeof **w->k);
        w->v[o] = cr_xmalloc((size_t)w->cnt[o] * rowb);
    }
    for (int64_t i = 0; i < n; i++) {
        int o = w->own[i];
        if (o == nd->id) continue;
        w->k[o][w->fill[o]] = keys[i];
        memcpy(w->v[o] + (size_t)w->fill[o] * dim, vals + (size_t)i * dim, rowb);
        w->fill[o]++;
    }
    return send_parts(w, s, r, e);
}

int cr_wclient_push_borrow(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                           cr_err *e) {
    wreq *r;
    int rc = push_begin(w, s, keys, n, vals, &r, e);
    if (rc <= 0) return rc;
    uint32_t id = r->id;
    int one = sole_owner(w, n);
    rc = one >= 0 ? send_whole(w, s, r, one, n, NULL, NULL, keys, vals, e) : push_split(w, s, r, keys, n, vals, e);
    if (cr_wclient_wait(w, id, rc < 0 ? NULL : e) < 0 && rc == 0) rc = -1;
    return rc;
}

int cr_wclient_push_copy(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                         uint32_t *req, cr_err *e) {
    wreq *r;
    *req = 0;
    int rc = push_begin(w, s, keys, n, vals, &r, e);
    if (rc <= 0) return rc;
    *req = r->id;
    int one = sole_owner(w, n);
    if (one < 0) return push_split(w, s, r, keys, n, vals, e);
    size_t vb = (size_t)n * (size_t)s->def.dim * sizeof(float);
    int64_t *k = cr_xmalloc((size_t)n * sizeof *k);
    float *v = cr_xmalloc(vb);
    memcpy(k, keys, (size_t)n * sizeof *k);
    memcpy(v, vals, vb);
    return send_whole(w, s, r, one, n, &k, &v, NULL, NULL, e);
}

int cr_wclient_push_take(cr_wclient *w, cr_shard *s, int64_t **keys, int64_t n, float **vals, uint32_t *req,
                         cr_err *e) {
    int64_t *k = *keys;
    float *v = *vals;
    *keys = NULL;
    *vals = NULL;
    *req = 0;
    wreq *r;
    int rc = push_begin(w, s, k, n, v, &r, e), one = rc > 0 ? sole_owner(w, n) : -1;
    if (rc > 0) *req = r->id;
    if (rc > 0 && one >= 0) return send_whole(w, s, r, one, n, &k, &v, NULL, NULL, e); /* no copy */
    if (rc > 0) rc = push_split(w, s, r, k, n, v, e);
    free(k);
    free(v);
    return rc;
}

static wreq *find_req(cr_wclient *w, uint32_t id) {
    for (int i = 0; i < w->nreqs; i++)
        if (w->reqs[i].id == id) return &w->reqs[i];
    return NULL;
}

static void drop_done(cr_wclient *w) {
    int j = 0;
    for (int i = 0; i < w->nreqs; i++) {
        if (w->reqs[i].outstanding == 0) req_free(w, &w->reqs[i]);
        else w->reqs[j++] = w->reqs[i];
    }
    w->nreqs = j;
}

static int take_reply(cr_wclient *w, int node, cr_parts *p, cr_err *e) {
    if (p->n < 1 || cr_parts_size(p, 0) != sizeof(cr_dhdr)) return cr_errf(e, "malformed reply from node %d", node);
    cr_dhdr h;
    memcpy(&h, cr_parts_data(p, 0), sizeof h);
    wreq *r = find_req(w, h.req);
    if (!r) return 0; /* stale */
    if (h.type == CR_D_ERROR) { /* the node refused the request: nothing was applied or sent */
        r->outstanding--;
        int ml = p->n > 1 ? (int)(cr_parts_size(p, 1) < 400 ? cr_parts_size(p, 1) : 400) : 0;
        return cr_errf(e, "node %d refused the request: %.*s", node, ml, ml ? (const char *)cr_parts_data(p, 1) : "");
    }
    if (h.type == CR_D_PULL_REP && r->kind == CR_D_PULL && r->pos && (r->pos[node] || r->whole)) {
        size_t vb = (size_t)h.raw_bytes;
        const float *v = p->n > 1 ? cr_parts_data(p, 1) : NULL;
        float *buf = NULL;
        if (p->n < 2 || h.nkeys != r->want[node] || vb != (size_t)h.nkeys * (size_t)r->dim * sizeof(float) ||
            (!(h.flags & CR_D_ZLIB) && cr_parts_size(p, 1) != vb))
            return cr_errf(e, "malformed pull reply from node %d", node);
        if ((h.flags & CR_D_ZLIB) || (uintptr_t)v % sizeof(float)) {
            buf = cr_xmalloc(vb + 1); /* vb: the rows we asked for, checked above */
            if (h.flags & CR_D_ZLIB) {
                if (cr_wire_inflate(v, cr_parts_size(p, 1), buf, vb, e) < 0) {
                    free(buf);
                    return -1;
                }
            } else
                memcpy(buf, v, vb);
            v = buf;
        }
        size_t rowb = (size_t)r->dim * sizeof(float);
        if (r->whole) memcpy(r->out, v, vb);
        else
            for (int64_t i = 0; i < h.nkeys; i++)
                memcpy(r->out + (size_t)r->pos[node][i] * r->dim, v + (size_t)i * r->dim, rowb);
        free(buf);
    }
    r->outstanding--;
    return 0;
}

/* Wait up to timeout_ms (-1: no timeout: every request gets a reply) for
 * replies and take them; -1 once the node stops (its stop signal is item 0). */
static int pump(cr_wclient *w, long timeout_ms, cr_err *e) {
    if (zmq_poll(w->items, w->nitems, timeout_ms) <= 0) return 0; /* EINTR or nothing yet: the caller looks again */
    if ((w->items[0].revents & ZMQ_POLLIN) || atomic_load(&w->n->stop)) return cr_errf(e, "node stopping");
    for (int i = 1; i < w->nitems; i++) {
        cr_parts p;
        while (cr_parts_recv(w->items[i].socket, &p, ZMQ_DONTWAIT) > 0) {
            int rc = take_reply(w, w->item_node[i], &p, e);
            cr_parts_close(&p);
            if (rc < 0) return -1;
        }
    }
    return 0;
}

int cr_wclient_wait(cr_wclient *w, uint32_t req, cr_err *e) {
    if (req == 0) return 0;
    wreq *r;
    while ((r = find_req(w, req)) && r->outstanding > 0) {
        if (atomic_load(&w->n->stop)) return cr_errf(e, "node stopping");
        if (pump(w, -1, e) < 0) return -1;
    }
    drop_done(w);
    return 0;
}

int cr_wclient_drain(cr_wclient *w, cr_err *e) {
    for (;;) {
        int busy = 0;
        for (int i = 0; i < w->nreqs; i++) busy |= w->reqs[i].outstanding > 0;
        if (!busy) break;
        if (atomic_load(&w->n->stop)) return cr_errf(e, "node stopping");
        if (pump(w, -1, e) < 0) return -1;
    }
    drop_done(w);
    return 0;
}

int cr_wclient_test(cr_wclient *w, uint32_t req, cr_err *e) {
    wreq *r = req ? find_req(w, req) : NULL;
    if (!r || r->outstanding == 0) return 1;
    if (atomic_load(&w->n->stop)) return cr_errf(e, "node stopping");
    if (pump(w, 0, e) < 0) return -1;
    r = find_req(w, req);
    return !r || r->outstanding == 0;
}

void cr_wclient_forget(cr_wclient *w, uint32_t req) {
    if (!req) return;
    for (int i = 0; i < w->nreqs; i++) {
        if (w->reqs[i].id != req) continue;
        req_free(w, &w->reqs[i]);
        w->reqs[i] = w->reqs[--w->nreqs];
        return;
    }
}
