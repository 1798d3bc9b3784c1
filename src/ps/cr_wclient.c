#include "ps/cr_wclient.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_half.h"
#include "base/cr_finite.h"
#include "ps/cr_node_impl.h"

typedef struct wreq {
    uint32_t id;
    int kind; /* CR_D_PULL, CR_D_PUSH or CR_D_LOCALIZE */
    int64_t outstanding; /* keys not yet answered, all parts */
    float *out;
    int32_t dim;
    int64_t **pos; /* per node: positions in the caller's key list (pull) */
    int64_t *want; /* per node: rows asked of it (pull); its reply must carry as many */
    int64_t *left; /* per part (destination node): keys not yet answered */
    int whole;     /* pull from a single node in key order: rows land as they are */
    int64_t *rkeys, nr; /* a relocating table's keys sent (their marks in pend) */
} wreq;

/* Keys of relocating tables with a request of this worker still out, as
 * counts in hashed slots (a false hit only sends a key through its home):
 * such a key goes through its home again, never through shared memory, so
 * that it cannot overtake the earlier request (docs/management.md). */
#define PEND_SLOTS 4096
static inline uint32_t pend_slot(int64_t k) { return (uint32_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> 52); }

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
    int32_t *own;      /* scratch: owner node of each key of the current request (-1: served here) */
    int64_t owncap;
    int hellos;        /* HELLO answers taken */
    int cause;         /* CR_CAUSE_*: who makes the accesses now (counting) */
    int64_t *lkeys, lcap; /* scratch: the relocating keys of a localize (mixed tables) */
    int64_t nmarks;    /* marks in pend */
    int unordered;     /* the request being sent is a prefetch: no marks */
    cr_pfilter_w *filt; /* traffic filters: key caches per node, sigmod residuals (cr_pfilter.h) */
    int sig_bypass;    /* the push being made has been through sigmod (or is its flush) */
    int range;         /* the request being sent is a range operation: each part's ids go as [first, end) */
    int64_t rframe[2]; /* the range frame of the part being sent */
    uint32_t pend[PEND_SLOTS];
};

/* Every node's ROUTER must know this worker's routing id before another
 * node's server answers it for a forwarded request: a HELLO to each node
 * (this one too: relocated keys are asked of their home, which may be
 * here), answered before the client is used. */
static int pump(cr_wclient *w, long timeout_ms, cr_err *e);

static int hello(cr_wclient *w, cr_err *e) {
    cr_dhdr h = {.type = CR_D_HELLO, .worker = w->gw};
    int want = 0;
    for (int i = 0; i < w->n->peers.nodes; i++)
        if (w->peer[i] && zmq_send(w->peer[i], &h, sizeof h, 0) == (int)sizeof h) want++;
    for (int t = 0; w->hellos < want; t++) {
        if (t > 300 || cr_clocks_stopping(w->n->clk))
            return cr_errf(e, "worker %d: %d of %d nodes answered its HELLO", w->gw, w->hellos, want);
        if (pump(w, 100, e) < 0) return -1;
    }
    return 0;
}

static void *dealer(cr_wclient *w, int node) {
    unsigned char id[CR_D_ID_LEN];
    cr_d_id(id, 'w', w->gw);
    void *d = cr_socket(w->n->peers.zctx, ZMQ_DEALER);
    if (!d) return NULL;
    int nohwm = 0; /* replies are bounded by the requests made (cr_node.c says why) */
    zmq_setsockopt(d, ZMQ_ROUTING_ID, id, sizeof id);
    zmq_setsockopt(d, ZMQ_RCVHWM, &nohwm, sizeof nohwm);
    cr_curve_client(d, w->n->peers.curve);
    if (zmq_connect(d, w->n->peers.addrs[node]) < 0) {
        zmq_close(d);
        return NULL;
    }
    return d;
}

cr_wclient *cr_wclient_new(cr_node *n, int lw, cr_err *e) {
    cr_wclient *w = cr_xcalloc(1, sizeof *w);
    w->n = n;
    w->lw = lw;
    w->gw = n->peers.id * n->peers.wpn + lw;
    w->next_id = 1;
    w->peer = cr_xcalloc((size_t)n->peers.nodes, sizeof *w->peer);
    w->items = cr_xcalloc((size_t)n->peers.nodes + 1, sizeof *w->items);
    w->item_node = cr_xcalloc((size_t)n->peers.nodes + 1, sizeof *w->item_node);
    w->cnt = cr_xcalloc((size_t)n->peers.nodes, sizeof *w->cnt);
    w->fill = cr_xcalloc((size_t)n->peers.nodes, sizeof *w->fill);
    w->k = cr_xcalloc((size_t)n->peers.nodes, sizeof *w->k);
    w->v = cr_xcalloc((size_t)n->peers.nodes, sizeof *w->v);
    w->filt = cr_pfilter_w_new(n->peers.nodes, CR_NODE_MAX_TABLES);
    w->stop = cr_socket(n->peers.zctx, ZMQ_SUB);
    if (!w->stop || zmq_setsockopt(w->stop, ZMQ_SUBSCRIBE, "", 0) < 0 || zmq_connect(w->stop, n->wstop_ep) < 0) {
        cr_errf(e, "worker %d: cannot connect to the node's stop signal: %s", w->gw, zmq_strerror(errno));
        cr_wclient_destroy(&w);
        return NULL;
    }
    w->items[0] = (zmq_pollitem_t){.socket = w->stop, .events = ZMQ_POLLIN};
    w->item_node[w->nitems++] = -1;
    for (int i = 0; i < n->peers.nodes; i++) {
        if (n->peers.nodes == 1) break; /* a single node: everything is here */
        w->peer[i] = dealer(w, i);
        if (!w->peer[i]) {
            cr_errf(e, "worker %d: cannot connect to node %d at '%s': %s", w->gw, i, n->peers.addrs[i],
                    zmq_strerror(errno));
            cr_wclient_destroy(&w);
            return NULL;
        }
        w->items[w->nitems] = (zmq_pollitem_t){.socket = w->peer[i], .events = ZMQ_POLLIN};
        w->item_node[w->nitems++] = i;
    }
    if (hello(w, e) < 0) {
        cr_wclient_destroy(&w);
        return NULL;
    }
    return w;
}

/* The request is answered (or dropped): its keys' marks go. */
static void req_unmark(cr_wclient *w, wreq *r) {
    for (int64_t i = 0; i < r->nr; i++) w->pend[pend_slot(r->rkeys[i])]--;
    w->nmarks -= r->nr;
    free(r->rkeys);
    r->rkeys = NULL;
    r->nr = 0;
}

static void req_free(cr_wclient *w, wreq *r) {
    req_unmark(w, r);
    if (r->pos)
        for (int i = 0; i < w->n->peers.nodes; i++) free(r->pos[i]);
    free(r->pos);
    free(r->want);
    free(r->left);
}

void cr_wclient_destroy(cr_wclient **wp) {
    cr_wclient *w = wp ? *wp : NULL;
    if (!w) return;
    for (int i = 0; i < w->n->peers.nodes; i++)
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
    free(w->lkeys);
    cr_pfilter_w_destroy(&w->filt);
    free(w);
    *wp = NULL;
}

static int check_keys(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const char *op, cr_err *e) {
    memset(w->cnt, 0, (size_t)w->n->peers.nodes * sizeof *w->cnt);
    if (n > w->owncap) {
        free(w->own);
        w->owncap = n > 2 * w->owncap ? n : 2 * w->owncap;
        w->own = cr_xmalloc((size_t)w->owncap * sizeof *w->own);
    }
    for (int64_t i = 0; i < n; i++) {
        if (!cr_shard_key_ok(s, keys[i]))
            return cr_errf(e, "%s: key %lld (position %lld) out of range [0, %lld) of table '%s'", op,
                           (long long)keys[i], (long long)i + 1, (long long)s->def.keys, s->def.name);
        int o = cr_shard_owner(s, keys[i]);
        w->own[i] = o;
        w->cnt[o]++;
    }
    return 0;
}

/* ---------- counting accesses (docs/management.md, Counters) ---------- */

int cr_wclient_cause(cr_wclient *w, int cause) {
    int was = w->cause;
    w->cause = cause;
    return was;
}

/* Add n to a counter only this worker writes (readers see it whole). */
static inline void bump(_Atomic int64_t *c, int64_t n) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

static inline void count_keys(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, _Atomic int64_t *by) {
    bump(by, n);
    cr_counts *c = atomic_load_explicit(&s->counts, memory_order_acquire);
    if (c) cr_sketch_add_keys(c->sk[w->lw], keys, n);
}

/* The keys of one pull or push by the worker (each operation counts its
 * keys once). The sampler's own fetches are not counted here: it counts
 * the keys it draws (cr_wclient_count_sampled). */
static inline void count_access(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n) {
    if (w->cause == CR_CAUSE_DIRECT) count_keys(w, s, keys, n, &w->n->cnt.w[w->lw].direct);
}

void cr_wclient_count_sampled(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n) {
    count_keys(w, s, keys, n, &w->n->cnt.w[w->lw].sampling);
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
    r->left = cr_xcalloc((size_t)w->n->peers.nodes, sizeof *r->left);
    return r;
}

static int table_id(cr_node *n, cr_shard *s) {
    int k = cr_shards_count(&n->shards);
    for (int i = 0; i < k; i++)
        if (n->shards.t[i] == s) return i;
    return -1;
}

/* The header of request r to one node (nkeys rows; push: raw_bytes too). */
static cr_dhdr req_hdr(cr_wclient *w, cr_shard *s, const wreq *r, int part, int64_t nkeys) {
    cr_dhdr h = {.type = (uint8_t)r->kind, .table = (uint16_t)table_id(w->n, s), .req = r->id, .worker = w->gw,
                 .dim = s->def.dim, .nkeys = nkeys, .part = part};
    if (r->kind == CR_D_PUSH) h.raw_bytes = nkeys * s->def.dim * (int64_t)sizeof(float);
    return h;
}

/* The one other node holding every key, or -1 (keys on several nodes). */
static int sole_owner(cr_wclient *w, int64_t n) {
    for (int i = 0; i < w->n->peers.nodes; i++)
        if (w->cnt[i] == n) return i == w->n->peers.id ? -1 : i;
    return -1;
}

/* Part `node` of r is sent: nkeys keys are owed. */
static void owe(wreq *r, int node, int64_t nkeys) {
    r->outstanding += nkeys;
    r->left[node] += nkeys;
}

/* nlocal keys served here without a message, nshm of them from the shard
 * or held rows (the others by the replica module). */
static void count_local(cr_wclient *w, int64_t nlocal, int64_t nshm, int dim) {
    cr_node *nd = w->n;
    bump(&nd->cnt.w[w->lw].shm, nshm);
    atomic_fetch_add(&nd->cnt.keys_local, nlocal);
    atomic_fetch_add(&nd->cnt.bytes_local, nlocal * dim * (long long)sizeof(float));
    atomic_fetch_add(&nd->cnt.msgs_local, 1);
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

/* The traffic filters (cr_pfilter.h) work on the requests of classic tables
 * only: those of relocating or replicated tables are routed, forwarded and
 * answered by the relocation protocol (cr_serve_reloc.c). */
static inline int filterable(const cr_shard *s) { return !cr_dir_relocating(s) && !s->dir->repl; }

/* Rows of a push to a table that asks for compression, when they are large:
 * a new zlib buffer (ours to send or free; h and *vb updated), else NULL.
 * Zero removal, when on, comes first. */
static void *deflate_rows(cr_wclient *w, cr_dhdr *h, const float *vals, size_t *vb) {
    void *z;
    size_t zn;
    const cr_shard *s = w->n->shards.t[h->table];
    const cr_table_def *d = &s->def;
    void *zr = h->type != CR_D_PUSH || !filterable(s) ? NULL
               : d->filters.half                    ? cr_pfilter_half_out(w->n->filt, d, h, vals, vb)
                                                    : cr_pfilter_vals_out(w->n->filt, d, h, vals, vb);
    if (zr) vals = zr;
    if (!vals || !d->compress || *vb < 65536) return zr;
    if (cr_wire_deflate(vals, *vb, &z, &zn, NULL) != 0) return zr;
    cr_pfilter_count_zlib(w->n->filt, h->table, *vb, zn);
    free(zr);
    h->flags |= CR_D_ZLIB;
    *vb = zn;
    return z;
}

/* Key caching of a pull's or push's keys (cr_pfilter.h). 1: the keys
 * travel as the hash frame kh. */
static int cache_keys(cr_wclient *w, int node, cr_dhdr *h, const int64_t *keys, unsigned char *kh) {
    cr_shard *s = w->n->shards.t[h->table];
    if (!s->def.filters.key_cache || (h->type != CR_D_PULL && h->type != CR_D_PUSH) || !filterable(s) || h->flags)
        return 0; /* a plain list only: a frame another flag reshapes (a range, say) is not a list */
    return cr_pfilter_keys_out(w->filt, w->n->filt, &s->def, node, h, keys, kh);
}

/* A pull of a table with the half filter asks for its rows as half floats
 * (after key caching, which wants no other flag on the header). */
static void ask_halves(cr_wclient *w, cr_dhdr *h) {
    const cr_shard *s = w->n->shards.t[h->table];
    if (h->type == CR_D_PULL && s->def.filters.half && filterable(s)) h->flags |= CR_D_HALF;
}

/* The keys frame: the hash frame kh when hashed (k NULL), else k, which
 * becomes ZeroMQ's (owned) or stays the caller's (lent). */
static int send_keys(void *sock, int64_t *k, int lent, size_t kb, const unsigned char *kh, int more) {
    if (!k) return zmq_send(sock, kh, CR_KC_FRAME, more ? ZMQ_SNDMORE : 0) < 0 ? -1 : 0;
    return lent ? send_borrowed(sock, k, kb, more) : cr_send_owned(sock, k, kb, more);
}

static int sent(cr_wclient *w, int node, int rc, const cr_dhdr *h, size_t vb, cr_err *e) {
    if (rc < 0) return cr_errf(e, "send to node %d failed: %s", node, zmq_strerror(errno));
    size_t kb = h->flags & CR_D_RANGE ? sizeof w->rframe
                : h->flags & CR_D_KHASH ? CR_KC_FRAME : (size_t)h->nkeys * sizeof(int64_t);
    atomic_fetch_add(&w->n->cnt.msgs_remote, 1);
    atomic_fetch_add(&w->n->cnt.bytes_remote, (long long)(sizeof *h + kb + vb));
    atomic_fetch_add(&w->n->cnt.keys_remote, h->nkeys);
    return 0;
}

/* A range operation's part: when its nkeys ids are consecutive (they are:
 * a node's keys among a range are consecutive ids, ps/cr_place.h), the
 * keys frame becomes [first, end) (w->rframe) and h is flagged; 1 if so. */
static int as_range(cr_wclient *w, cr_dhdr *h, const int64_t *k) {
    if (!w->range || h->nkeys < 1 || k[h->nkeys - 1] - k[0] != h->nkeys - 1) return 0;
    for (int64_t i = 1; i < h->nkeys; i++)
        if (k[i] != k[0] + i) return 0;
    w->rframe[0] = k[0];
    w->rframe[1] = k[0] + h->nkeys;
    h->flags |= CR_D_RANGE;
    return 1;
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
    int rng = as_range(w, h, k); /* before key caching: a range frame is not a list */
    unsigned char kh[CR_KC_FRAME];
    if (cache_keys(w, node, h, k, kh)) {
        free(k);
        k = NULL;
    }
    ask_halves(w, h);
    void *z = deflate_rows(w, h, v, &vb);
    if (z) {
        free(v);
        v = z;
    }
    int rc = zmq_send(sock, h, sizeof *h, ZMQ_SNDMORE) < 0 ? -1 : 0;
    if (rc == 0 && rng) rc = zmq_send(sock, w->rframe, sizeof w->rframe, v ? ZMQ_SNDMORE : 0) < 0 ? -1 : 0;
    if (rng) free(k);
    else if (rc == 0) rc = send_keys(sock, k, 0, kb, kh, v != NULL);
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
    int rng = as_range(w, h, keys); /* before key caching: a range frame is not a list */
    unsigned char kh[CR_KC_FRAME];
    int64_t *k = cache_keys(w, node, h, keys, kh) ? NULL : (int64_t *)keys;
    ask_halves(w, h);
    void *z = deflate_rows(w, h, vals, &vb);
    int rc = zmq_send(sock, h, sizeof *h, ZMQ_SNDMORE) < 0 ? -1 : 0;
    if (rc == 0 && rng) rc = zmq_send(sock, w->rframe, sizeof w->rframe, vals ? ZMQ_SNDMORE : 0) < 0 ? -1 : 0;
    else if (rc == 0) rc = send_keys(sock, k, 1, kb, kh, vals != NULL);
    if (vals && rc == 0) rc = z ? cr_send_owned(sock, z, vb, 0) : send_borrowed(sock, (void *)vals, vb, 0);
    else free(z);
    return sent(w, node, rc, h, vb, e);
}

/* Send every node its part (w->k[i], w->v[i] for a push; owned, set to
 * NULL). After a failed send the remaining parts are freed. */
static int send_parts(cr_wclient *w, cr_shard *s, wreq *r, cr_err *e) {
    int rc = 0;
    for (int i = 0; i < w->n->peers.nodes; i++) {
        if (!w->k[i]) continue;
        cr_dhdr h = req_hdr(w, s, r, i, w->cnt[i]);
        if (rc == 0 && (rc = send_owned(w, i, &h, &w->k[i], r->kind == CR_D_PUSH ? &w->v[i] : NULL, e)) == 0)
            owe(r, i, w->cnt[i]);
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
    cr_dhdr h = req_hdr(w, s, r, node, n);
    int rc = own_k ? send_owned(w, node, &h, own_k, own_v, e) : send_lent(w, node, &h, keys, vals, e);
    if (rc == 0) owe(r, node, n);
    return rc;
}

/* ---------- relocating tables (docs/management.md) ---------- */

/* The one place where keys managed by replication leave this router for
 * the replica module (src/ps/cr_replica.h): 1 if key k of table tid is
 * replicated and was served by the node's replica (pull: into out; push:
 * g applied), 0 if it is not replicated. Pushes were checked finite. */
static inline int replica_divert(cr_wclient *w, int tid, int64_t k, float *out, const float *g) {
    cr_replicas *r = cr_node_replicas(w->n);
    if (!cr_replicas_has(r, tid, k)) return 0;
    if (g) (void)cr_replicas_push(r, tid, &k, 1, g, NULL); /* replicated and finite: it cannot refuse */
    else (void)cr_replicas_pull(r, tid, &k, 1, out, NULL);
    return 1;
}

/* Route every key under its stripe lock (the one latch NuPS takes per
 * access): served here through shared memory when its row is here and no
 * request of ours on it is still out (pull: copied to out; push: g
 * applied), else marked for its home (own[i], cnt). Returns the keys
 * served here. */
static int64_t route(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, const float *g,
                     int64_t *replicated) {
    size_t dim = (size_t)s->def.dim;
    int64_t here = 0;
    *replicated = 0;
    int tid = s->dir->repl ? table_id(w->n, s) : -1;
    memset(w->cnt, 0, (size_t)w->n->peers.nodes * sizeof *w->cnt);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = keys[i];
        float *st, *row = NULL;
        if (tid >= 0 && replica_divert(w, tid, k, out ? out + (size_t)i * dim : NULL, g ? g + (size_t)i * dim : NULL)) {
            w->own[i] = -1;
            here++;
            (*replicated)++;
            continue;
        }
        pthread_mutex_t *m = &s->locks[(uint64_t)k % CR_SHARD_STRIPES];
        pthread_mutex_lock(m);
        if (!w->pend[pend_slot(k)]) row = cr_dir_row(s, k, &st);
        if (row && g) cr_optim_apply(&s->def.optim, row, st, g + (size_t)i * dim, s->def.dim);
        else if (row) memcpy(out + (size_t)i * dim, row, dim * sizeof(float));
        pthread_mutex_unlock(m);
        if (row) {
            w->own[i] = -1;
            here++;
        } else {
            w->own[i] = cr_shard_owner(s, k);
            w->cnt[w->own[i]]++;
        }
    }
    return here;
}

/* Send each home its part of r (keys own[i] >= 0; a push's rows too; a
 * pull's positions kept in r->pos). Keys of pulls and pushes are marked
 * in pend until r is answered. */
static int reloc_send(cr_wclient *w, cr_shard *s, wreq *r, const int64_t *keys, int64_t n, const float *vals,
                      cr_err *e) {
    cr_node *nd = w->n;
    size_t dim = (size_t)s->def.dim, rowb = dim * sizeof(float);
    int pull = r->kind == CR_D_PULL, mark = r->kind != CR_D_LOCALIZE && !w->unordered;
    r->want = cr_xcalloc((size_t)nd->peers.nodes, sizeof *r->want);
    if (pull) r->pos = cr_xcalloc((size_t)nd->peers.nodes, sizeof *r->pos);
    if (mark) r->rkeys = cr_xmalloc((size_t)n * sizeof *r->rkeys);
    for (int o = 0; o < nd->peers.nodes; o++) {
        w->fill[o] = 0;
        if (!w->cnt[o]) continue;
        r->want[o] = w->cnt[o];
        w->k[o] = cr_xmalloc((size_t)w->cnt[o] * sizeof **w->k);
        if (vals) w->v[o] = cr_xmalloc((size_t)w->cnt[o] * rowb);
        if (pull) r->pos[o] = cr_xmalloc((size_t)w->cnt[o] * sizeof **r->pos);
    }
    for (int64_t i = 0; i < n; i++) {
        int o = w->own[i];
        if (o < 0) continue;
        w->k[o][w->fill[o]] = keys[i];
        if (vals) memcpy(w->v[o] + (size_t)w->fill[o] * dim, vals + (size_t)i * dim, rowb);
        if (pull) r->pos[o][w->fill[o]] = i;
        w->fill[o]++;
        if (mark) {
            r->rkeys[r->nr++] = keys[i];
            w->pend[pend_slot(keys[i])]++;
            w->nmarks++;
        }
    }
    return send_parts(w, s, r, e);
}

/* A pull (vals NULL, into out) or push (vals) on a relocating table; req
 * NULL: wait for it. */
static int reloc_access(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, const float *vals,
                        uint32_t *req, cr_err *e) {
    cr_node *nd = w->n;
    if (req) *req = 0;
    if (check_keys(w, s, keys, n, vals ? "push" : "pull", e) < 0) return -1;
    if (vals && !cr_shard_i32(s) && cr_check_finite(vals, (size_t)n * (size_t)s->def.dim, "push refused", e) < 0)
        return -1;
    atomic_fetch_add(vals ? &nd->cnt.pushes : &nd->cnt.pulls, 1);
    if (vals) nd->cnt.w[w->lw].pushes++;
    else nd->cnt.w[w->lw].pulls++;
    count_access(w, s, keys, n);
    /* replies already here clear their keys' marks: those keys may then be
     * served through shared memory (an asynchronous pull, e.g. a sampler's
     * fetch, is otherwise answered only at the caller's next wait) */
    if (w->nmarks && pump(w, 0, e) < 0) return -1;
    int64_t repl, here = route(w, s, keys, n, out, vals, &repl);
    if (here) count_local(w, here, here - repl, s->def.dim);
    atomic_fetch_add(&nd->cnt.acc_local, here - repl); /* the replica module counts its own */
    if (here == n) return 0;
    wreq *r = new_req(w, vals ? CR_D_PUSH : CR_D_PULL);
    r->out = out;
    r->dim = s->def.dim;
    uint32_t id = r->id;
    int rc = reloc_send(w, s, r, keys, n, vals, e);
    if (req) {
        *req = id;
        return rc;
    }
    if (cr_wclient_wait(w, id, rc < 0 ? NULL : e) < 0 && rc == 0) rc = -1;
    return rc;
}

static inline int routed(const cr_shard *s) { return cr_dir_relocating(s) || s->dir->repl; }

/* A mixed table: only the keys of its relocation set move; the others are
 * classic (they stay at home) and their localize is skipped (counted). */
static const int64_t *reloc_only(cr_wclient *w, const cr_shard *s, const int64_t *keys, int64_t *n) {
    if (!s->reloc) return keys;
    if (*n > w->lcap) {
        free(w->lkeys);
        w->lcap = *n > 2 * w->lcap ? *n : 2 * w->lcap;
        w->lkeys = cr_xmalloc((size_t)w->lcap * sizeof *w->lkeys);
    }
    int64_t m = 0;
    for (int64_t i = 0; i < *n; i++)
        if (cr_bit(s->reloc, keys[i])) w->lkeys[m++] = keys[i];
    if (*n > m) atomic_fetch_add(&w->n->cnt.reloc_skipped, *n - m);
    *n = m;
    return w->lkeys;
}

int cr_wclient_prefetch(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, uint32_t *req,
                        cr_err *e) {
    if (!routed(s)) return cr_wclient_pull_copy(w, s, keys, n, out, req, e);
    w->unordered = 1;
    int rc = reloc_access(w, s, keys, n, out, NULL, req, e);
    w->unordered = 0;
    return rc;
}

int cr_wclient_localize(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, uint32_t *req, cr_err *e) {
    *req = 0;
    if (check_keys(w, s, keys, n, "localize", e) < 0) return -1;
    if (!cr_dir_relocating(s)) return 0; /* classic: keys stay where they are */
    keys = reloc_only(w, s, keys, &n);
    memset(w->cnt, 0, (size_t)w->n->peers.nodes * sizeof *w->cnt);
    int64_t away = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = keys[i];
        pthread_mutex_t *m = &s->locks[(uint64_t)k % CR_SHARD_STRIPES];
        float *st;
        pthread_mutex_lock(m);
        int here = cr_dir_tech(s, k) != CR_TECH_RELOCATE || cr_dir_row(s, k, &st);
        pthread_mutex_unlock(m);
        w->own[i] = here ? -1 : cr_shard_owner(s, k);
        if (!here) w->cnt[w->own[i]]++, away++;
    }
    if (!away) return 0;
    wreq *r = new_req(w, CR_D_LOCALIZE);
    *req = r->id;
    return reloc_send(w, s, r, keys, n, NULL, e);
}

/* ---------- pull ---------- */

/* Check the keys and serve the local ones from shared memory. 0: all were
 * local, done; 1: *rp is a new request for the rest (rows of other nodes). */
static int pull_begin(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, wreq **rp,
                      cr_err *e) {
    cr_node *nd = w->n;
    if (check_keys(w, s, keys, n, "pull", e) < 0) return -1;
    count_access(w, s, keys, n);
    atomic_fetch_add(&nd->cnt.pulls, 1);
    nd->cnt.w[w->lw].pulls++;
    int64_t nlocal = w->cnt[nd->peers.id];
    if (nlocal == n) { /* all local: shared memory, done */
        cr_shard_pull(s, keys, n, out);
        count_local(w, n, n, s->def.dim);
        return 0;
    }
    wreq *r = new_req(w, CR_D_PULL);
    r->out = out;
    r->dim = s->def.dim;
    r->pos = cr_xcalloc((size_t)nd->peers.nodes, sizeof *r->pos);
    r->want = cr_xcalloc((size_t)nd->peers.nodes, sizeof *r->want);
    for (int i = 0; i < nd->peers.nodes; i++) r->want[i] = i == nd->peers.id ? 0 : w->cnt[i];
    if (nlocal) count_local(w, nlocal, nlocal, s->def.dim);
    *rp = r;
    return 1;
}

/* Keys on several nodes: local rows now, each other node an owned list of
 * its keys (w->k) and the positions its rows go to (r->pos). */
static int pull_split(cr_wclient *w, cr_shard *s, wreq *r, const int64_t *keys, int64_t n, float *out,
                      cr_err *e) {
    cr_node *nd = w->n;
    int dim = s->def.dim;
    for (int i = 0; i < nd->peers.nodes; i++) {
        w->fill[i] = 0;
        if (!w->cnt[i] || i == nd->peers.id) continue;
        w->k[i] = cr_xmalloc((size_t)w->cnt[i] * sizeof **w->k);
        r->pos[i] = cr_xmalloc((size_t)w->cnt[i] * sizeof **r->pos);
    }
    for (int64_t i = 0; i < n; i++) {
        int o = w->own[i];
        if (o == nd->peers.id) {
            cr_shard_pull(s, keys + i, 1, out + (size_t)i * dim);
            continue;
        }
        w->k[o][w->fill[o]] = keys[i];
        r->pos[o][w->fill[o]++] = i;
    }
    return send_parts(w, s, r, e);
}

int cr_wclient_pull_borrow(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, cr_err *e) {
    if (routed(s)) return reloc_access(w, s, keys, n, out, NULL, NULL, e);
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
    if (routed(s)) return reloc_access(w, s, keys, n, out, NULL, req, e);
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

/* A push holds only finite values (else -1, nothing applied anywhere):
 * the whole push is checked here, in one pass, before shared memory is
 * touched or any part is sent, so a NaN in a row for another node cannot
 * leave this node's rows (or a third node's) applied. A push that goes
 * whole to one other node is left to that node's server, which checks
 * every push it receives and refuses it whole with an error reply. */
static int push_finite(cr_wclient *w, const float *vals, int64_t n, int dim, cr_err *e) {
    for (int i = 0; i < w->n->peers.nodes; i++)
        if (i != w->n->peers.id && w->cnt[i] == n) return 0;
    return cr_check_finite(vals, (size_t)n * (size_t)dim, "push refused", e);
}

/* Check the keys and apply the local rows through shared memory. 0: all
 * were local, done; 1: *rp is a new request for the rest. */
static int push_begin(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals, wreq **rp,
                      cr_err *e) {
    cr_node *nd = w->n;
    if (check_keys(w, s, keys, n, "push", e) < 0) return -1;
    int dim = s->def.dim;
    int64_t nlocal = w->cnt[nd->peers.id];
    if (!cr_shard_i32(s) && push_finite(w, vals, n, dim, e) < 0) return -1; /* ints: any bits */
    count_access(w, s, keys, n);
    atomic_fetch_add(&nd->cnt.pushes, 1);
    nd->cnt.w[w->lw].pushes++;
    if (nlocal == n) cr_shard_push(s, keys, n, vals);
    else if (nlocal)
        for (int64_t i = 0; i < n; i++)
            if (w->own[i] == nd->peers.id) cr_shard_push(s, keys + i, 1, vals + (size_t)i * dim);
    if (nlocal) count_local(w, nlocal, nlocal, dim);
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
    for (int o = 0; o < nd->peers.nodes; o++) {
        w->fill[o] = 0;
        if (!w->cnt[o] || o == nd->peers.id) continue;
        w->k[o] = cr_xmalloc((size_t)w->cnt[o] * sizeof **w->k);
        w->v[o] = cr_xmalloc((size_t)w->cnt[o] * rowb);
    }
    for (int64_t i = 0; i < n; i++) {
        int o = w->own[i];
        if (o == nd->peers.id) continue;
        w->k[o][w->fill[o]] = keys[i];
        memcpy(w->v[o] + (size_t)w->fill[o] * dim, vals + (size_t)i * dim, rowb);
        w->fill[o]++;
    }
    return send_parts(w, s, r, e);
}

/* ---------- significantly-modified filter (docs/filters.md) ---------- */

static inline int sig_on(const cr_wclient *w, const cr_shard *s) {
    return s->def.filters.sigmod > 0 && !w->sig_bypass && w->n->peers.nodes > 1 && !routed(s);
}

typedef struct sig_where {
    const cr_shard *s;
    int me;
} sig_where;

static int sig_local(void *ctx, int64_t key) {
    const sig_where *x = ctx;
    return cr_shard_owner(x->s, key) == x->me;
}

/* A push through the filter: keys and values are checked first (a bad
 * push leaves the residuals as they were), then only the rows it lets
 * through go on (req NULL: wait for them). */
static int sig_push(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals, uint32_t *req,
                    cr_err *e) {
    if (req) *req = 0;
    if (check_keys(w, s, keys, n, "push", e) < 0 ||
        cr_check_finite(vals, (size_t)n * (size_t)s->def.dim, "push refused", e) < 0)
        return -1;
    const int64_t *k;
    const float *v;
    sig_where at = {s, w->n->peers.id};
    int64_t m = cr_pfilter_sigmod(w->filt, w->n->filt, &s->def, table_id(w->n, s), keys, n, vals, sig_local, &at, &k, &v);
    if (m == 0) { /* everything held back: a push without a message (access counting sees the rows sent) */
        atomic_fetch_add(&w->n->cnt.pushes, 1);
        w->n->cnt.w[w->lw].pushes++;
        return 0;
    }
    w->sig_bypass = 1;
    int rc = req ? cr_wclient_push_copy(w, s, k, m, v, req, e) : cr_wclient_push_borrow(w, s, k, m, v, e);
    w->sig_bypass = 0;
    return rc;
}

int cr_wclient_flush(cr_wclient *w, cr_err *e) {
    int ids[CR_NODE_MAX_TABLES], nt = cr_pfilter_sigmod_tables(w->filt, ids, CR_NODE_MAX_TABLES);
    for (int i = 0; i < nt; i++) {
        cr_shard *s = w->n->shards.t[ids[i]];
        int64_t *k;
        float *v;
        int64_t m = cr_pfilter_sigmod_flush(w->filt, w->n->filt, &s->def, ids[i], &k, &v);
        w->sig_bypass = 1;
        int rc = m ? cr_wclient_push_borrow(w, s, k, m, v, e) : 0;
        w->sig_bypass = 0;
        free(k);
        free(v);
        if (rc < 0) return -1;
    }
    return 0;
}

int cr_wclient_push_borrow(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                           cr_err *e) {
    if (sig_on(w, s)) return sig_push(w, s, keys, n, vals, NULL, e);
    if (routed(s)) return reloc_access(w, s, keys, n, NULL, vals, NULL, e);
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
    if (sig_on(w, s)) return sig_push(w, s, keys, n, vals, req, e);
    if (routed(s)) return reloc_access(w, s, keys, n, NULL, vals, req, e);
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
    if (sig_on(w, s)) {
        int rs = sig_push(w, s, k, n, v, req, e);
        free(k);
        free(v);
        return rs;
    }
    if (routed(s)) {
        int rr = reloc_access(w, s, k, n, NULL, v, req, e);
        free(k);
        free(v);
        return rr;
    }
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

/* The value frame vf of a pull reply: exactly `want` bytes once inflated
 * (h.raw_bytes), as values aligned to `align`: the frame itself, or *buf
 * (caller frees) holding a copy or the inflated frame. NULL: malformed. */
static const void *reply_frame(cr_parts *p, int vf, const cr_dhdr *h, size_t want, size_t align, void **buf,
                               cr_err *e) {
    const void *v = p->n > vf ? cr_parts_data(p, vf) : NULL;
    size_t fn = p->n > vf ? cr_parts_size(p, vf) : 0;
    *buf = NULL;
    if (!v || h->raw_bytes != (int64_t)want || (!(h->flags & CR_D_ZLIB) && fn != want)) return NULL;
    if (!(h->flags & CR_D_ZLIB) && (uintptr_t)v % align == 0) return v;
    *buf = cr_xmalloc(want + 1); /* want: the rows we asked for, checked above */
    if (!(h->flags & CR_D_ZLIB)) memcpy(*buf, v, want);
    else if (cr_wire_inflate(v, fn, *buf, want, e) < 0) return NULL;
    return *buf;
}

/* The rows of a pull reply (frame vf of p: h.nkeys rows, maybe deflated)
 * as aligned floats: the frame, or *buf (caller frees). NULL: malformed. */
static const float *reply_rows(cr_parts *p, int vf, const cr_dhdr *h, int32_t dim, float **buf, cr_err *e) {
    size_t want = (size_t)h->nkeys * (size_t)dim * sizeof(float);
    if (p->n > vf && (h->flags & CR_D_ZEROS)) { /* zero-removed rows (cr_filter.h), maybe deflated too */
        *buf = cr_xmalloc(want + 1);
        return cr_filter_frame_in((h->flags & CR_D_ZLIB) != 0, (h->flags & CR_D_ZEROS) != 0, cr_parts_data(p, vf), cr_parts_size(p, vf), h->raw_bytes, *buf, want, e) < 0
                   ? NULL
                   : *buf;
    }
    return reply_frame(p, vf, h, want, sizeof(float), (void **)buf, e);
}

/* Place the rows of a pull reply for part `part` of r: in order (the whole
 * part), or at the positions of the reply's index frame (CR_D_IDX). Half
 * floats (CR_D_HALF) are widened as they are placed. */
static int place_rows(wreq *r, int part, cr_parts *p, const cr_dhdr *h, cr_err *e) {
    int idx = (h->flags & CR_D_IDX) != 0;
    if (!idx && h->nkeys != r->want[part]) return -1;
    if (!r->whole && !r->pos[part]) return -1;
    const int32_t *ix = NULL;
    int32_t *ixbuf = NULL;
    if (idx) {
        if (p->n < 3 || cr_parts_size(p, 1) != (size_t)h->nkeys * sizeof(int32_t)) return -1;
        ixbuf = cr_xmalloc((size_t)h->nkeys * sizeof *ixbuf + 1);
        memcpy(ixbuf, cr_parts_data(p, 1), (size_t)h->nkeys * sizeof *ixbuf);
        ix = ixbuf;
    }
    float *buf = NULL;
    uint16_t *hbuf = NULL;
    const float *v = NULL;
    const uint16_t *hv = NULL;
    if (h->flags & CR_D_HALF) /* half floats, maybe deflated */
        hv = reply_frame(p, idx ? 2 : 1, h, (size_t)h->nkeys * (size_t)r->dim * sizeof *hv, sizeof *hv, (void **)&hbuf, e);
    else v = reply_rows(p, idx ? 2 : 1, h, r->dim, &buf, e);
    int rc = v || hv ? 0 : -1;
    size_t dim = (size_t)r->dim, rowb = dim * sizeof(float);
    if (v && r->whole && !idx) memcpy(r->out, v, (size_t)h->nkeys * rowb);
    if (hv && r->whole && !idx) cr_half_to_f32(hv, r->out, (size_t)h->nkeys * dim);
    for (int64_t i = 0; rc == 0 && (idx || !r->whole) && i < h->nkeys; i++) {
        int64_t at = ix ? ix[i] : i;
        if (at < 0 || at >= r->want[part]) {
            rc = -1;
            break;
        }
        int64_t to = r->whole ? at : r->pos[part][at];
        if (hv) cr_half_to_f32(hv + (size_t)i * dim, r->out + (size_t)to * dim, dim);
        else memcpy(r->out + (size_t)to * dim, v + (size_t)i * dim, rowb);
    }
    free(buf);
    free(hbuf);
    free(ixbuf);
    return rc;
}

static int take_reply(cr_wclient *w, int node, cr_parts *p, cr_err *e) {
    if (p->n < 1 || cr_parts_size(p, 0) != sizeof(cr_dhdr)) return cr_errf(e, "malformed reply from node %d", node);
    cr_dhdr h;
    memcpy(&h, cr_parts_data(p, 0), sizeof h);
    if (h.type == CR_D_HELLO) {
        w->hellos++;
        return 0;
    }
    wreq *r = find_req(w, h.req);
    if (!r) return 0; /* stale */
    int part = h.part;
    if (part < 0 || part >= w->n->peers.nodes || h.nkeys < 0 || h.nkeys > r->left[part])
        return cr_errf(e, "malformed reply from node %d", node);
    if (h.type == CR_D_ERROR) { /* the node refused this part: nothing of it was applied or sent */
        r->outstanding -= r->left[part];
        r->left[part] = 0;
        if (r->outstanding <= 0) req_unmark(w, r);
        int ml = p->n > 1 ? (int)(cr_parts_size(p, 1) < 400 ? cr_parts_size(p, 1) : 400) : 0;
        return cr_errf(e, "node %d refused the request: %.*s", node, ml, ml ? (const char *)cr_parts_data(p, 1) : "");
    }
    if (h.type == CR_D_PULL_REP && (r->kind != CR_D_PULL || place_rows(r, part, p, &h, e) < 0))
        return cr_errf(e, "malformed pull reply from node %d", node);
    r->outstanding -= h.nkeys;
    r->left[part] -= h.nkeys;
    if (r->outstanding <= 0) req_unmark(w, r);
    return 0;
}

/* Wait up to timeout_ms (-1: no timeout: every request gets a reply) for
 * replies and take them; -1 once the node stops (its stop signal is item 0). */
static int pump(cr_wclient *w, long timeout_ms, cr_err *e) {
    if (zmq_poll(w->items, w->nitems, timeout_ms) <= 0) return 0; /* EINTR or nothing yet: the caller looks again */
    if ((w->items[0].revents & ZMQ_POLLIN) || cr_clocks_stopping(w->n->clk)) return cr_errf(e, "node stopping");
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
        if (cr_clocks_stopping(w->n->clk)) return cr_errf(e, "node stopping");
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
        if (cr_clocks_stopping(w->n->clk)) return cr_errf(e, "node stopping");
        if (pump(w, -1, e) < 0) return -1;
    }
    drop_done(w);
    return 0;
}

int cr_wclient_test(cr_wclient *w, uint32_t req, cr_err *e) {
    wreq *r = req ? find_req(w, req) : NULL;
    if (!r || r->outstanding == 0) return 1;
    if (cr_clocks_stopping(w->n->clk)) return cr_errf(e, "node stopping");
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

/* ---------- range operations (thesis 3.2.2) ---------- */

/* Range operations go through the pull and push above with the range flag
 * on: the ids of keys [lo, hi) split per node into consecutive runs, each
 * sent as [first, end). A relocating or replicated table is refused: its
 * keys may be anywhere. */
static int range_op(cr_wclient *w, cr_shard *s, const int64_t *ids, int64_t n, float *out, const float *vals,
                    cr_err *e) {
    if (routed(s) || s->sp)
        return cr_errf(e, "%s_range: table '%s' %s", vals ? "push" : "pull", s->def.name,
                       s->sp ? "is sparse: range operations need a dense table"
                             : "is managed by relocation or replication: range operations need classic management");
    w->range = 1;
    int rc = vals ? cr_wclient_push_borrow(w, s, ids, n, vals, e) : cr_wclient_pull_borrow(w, s, ids, n, out, e);
    w->range = 0;
    return rc;
}

int cr_wclient_pull_range(cr_wclient *w, cr_shard *s, const int64_t *ids, int64_t n, float *out, cr_err *e) {
    return range_op(w, s, ids, n, out, NULL, e);
}

int cr_wclient_push_range(cr_wclient *w, cr_shard *s, const int64_t *ids, int64_t n, const float *vals, cr_err *e) {
    return range_op(w, s, ids, n, NULL, vals, e);
}
