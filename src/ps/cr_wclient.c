#include "ps/cr_wclient.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ps/cr_node_impl.h"

typedef struct wreq {
    uint32_t id;
    int kind; /* CR_D_PULL or CR_D_PUSH */
    int outstanding;
    float *out;
    int32_t dim;
    int64_t **pos; /* per node: positions in the caller's key list (pull) */
    int whole;     /* pull from a single node in key order: rows land as they are */
} wreq;

struct cr_wclient {
    cr_node *n;
    int lw, gw;
    void **peer;       /* DEALER per node (NULL for this node) */
    zmq_pollitem_t *items;
    int *item_node;
    int nitems;
    uint32_t next_id;
    wreq *reqs;
    int nreqs, capreqs;
    int64_t *cnt;      /* scratch: keys per node */
    int32_t *own;      /* scratch: owner node of each key of the current request */
    int64_t owncap;
};

cr_wclient *cr_wclient_new(cr_node *n, int lw, cr_err *e) {
    cr_wclient *w = calloc(1, sizeof *w);
    if (!w) {
        cr_errf(e, "out of memory");
        return NULL;
    }
    w->n = n;
    w->lw = lw;
    w->gw = n->id * n->wpn + lw;
    w->next_id = 1;
    w->peer = calloc((size_t)n->nodes, sizeof *w->peer);
    w->items = calloc((size_t)n->nodes, sizeof *w->items);
    w->item_node = calloc((size_t)n->nodes, sizeof *w->item_node);
    w->cnt = calloc((size_t)n->nodes, sizeof *w->cnt);
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
}

void cr_wclient_destroy(cr_wclient **wp) {
    cr_wclient *w = wp ? *wp : NULL;
    if (!w) return;
    for (int i = 0; i < w->n->nodes; i++)
        if (w->peer[i]) zmq_close(w->peer[i]);
    for (int i = 0; i < w->nreqs; i++) req_free(w, &w->reqs[i]);
    free(w->reqs);
    free(w->peer);
    free(w->items);
    free(w->item_node);
    free(w->cnt);
    free(w->own);
    free(w);
    *wp = NULL;
}

static int check_keys(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const char *op, cr_err *e) {
    memset(w->cnt, 0, (size_t)w->n->nodes * sizeof *w->cnt);
    if (n > w->owncap) {
        free(w->own);
        w->owncap = n > 2 * w->owncap ? n : 2 * w->owncap;
        w->own = malloc((size_t)w->owncap * sizeof *w->own);
        if (!w->own) {
            w->owncap = 0;
            return cr_errf(e, "%s: out of memory for %lld keys", op, (long long)n);
        }
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
        w->reqs = realloc(w->reqs, (size_t)w->capreqs * sizeof *w->reqs);
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

/* keys/vals are owned (freed here, also on failure) unless `borrowed`. */
static int send_req_ex(cr_wclient *w, int node, cr_dhdr *h, int64_t *keys, int64_t nk, float *vals, int borrowed,
                       cr_err *e) {
    void *sock = w->peer[node];
    int vowned = !borrowed;
    size_t kb = (size_t)nk * sizeof(int64_t), vb = vals ? (size_t)nk * (size_t)h->dim * sizeof(float) : 0;
    if (vals && w->n->tables[h->table]->def.compress && vb >= 65536) {
        void *z;
        size_t zn;
        if (cr_wire_deflate(vals, vb, &z, &zn, NULL) == 0) {
            if (vowned) free(vals);
            vowned = 1;
            vals = z;
            vb = zn;
            h->flags |= CR_D_ZLIB;
        }
    }
    size_t sent = sizeof *h + kb;
    int rc = zmq_send(sock, h, sizeof *h, ZMQ_SNDMORE) < 0 ? -1 : 0;
    if (rc == 0) rc = borrowed ? send_borrowed(sock, keys, kb, vals != NULL) : cr_send_owned(sock, keys, kb, vals != NULL);
    else if (!borrowed) free(keys);
    if (vals) {
        if (rc == 0) rc = vowned ? cr_send_owned(sock, vals, vb, 0) : send_borrowed(sock, vals, vb, 0);
        else if (vowned) free(vals);
        sent += vb;
    }
    if (rc < 0) return cr_errf(e, "send to node %d failed: %s", node, zmq_strerror(errno));
    atomic_fetch_add(&w->n->msgs_remote, 1);
    atomic_fetch_add(&w->n->bytes_remote, (long long)sent);
    atomic_fetch_add(&w->n->keys_remote, nk);
    return 0;
}


static int pull_start(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, uint32_t *req,
                      int sync, cr_err *e) {
    cr_node *nd = w->n;
    *req = 0;
    if (check_keys(w, s, keys, n, "pull", e) < 0) return -1;
    int dim = s->def.dim;
    atomic_fetch_add(&nd->pulls, 1);
    nd->ws[w->lw].pulls++;
    int64_t nlocal = w->cnt[nd->id];
    if (nlocal == n) { /* all local: shared memory, done */
        cr_shard_pull(s, keys, n, out);
        atomic_fetch_add(&nd->keys_local, n);
        atomic_fetch_add(&nd->bytes_local, n * dim * (long long)sizeof(float));
        atomic_fetch_add(&nd->msgs_local, 1);
        return 0;
    }
    wreq *r = new_req(w, CR_D_PULL);
    r->out = out;
    r->dim = dim;
    r->pos = calloc((size_t)nd->nodes, sizeof *r->pos);
    int64_t **k = calloc((size_t)nd->nodes, sizeof *k), *fill = calloc((size_t)nd->nodes, sizeof *fill);
    int single = -1; /* every key on one other node: keys go as they are, rows come back in order */
    for (int i = 0; i < nd->nodes; i++)
        if (w->cnt[i] == n && i != nd->id) single = i;
    for (int i = 0; i < nd->nodes; i++)
        if (w->cnt[i] && i != nd->id) {
            if (i == single && sync) continue; /* borrowed below */
            k[i] = malloc((size_t)w->cnt[i] * sizeof(int64_t));
            if (i != single) r->pos[i] = malloc((size_t)w->cnt[i] * sizeof(int64_t));
        }
    if (single >= 0) {
        if (sync) k[single] = (int64_t *)keys;
        else memcpy(k[single], keys, (size_t)n * sizeof *keys);
        r->whole = 1;
    } else
        for (int64_t i = 0; i < n; i++) {
            int o = w->own[i];
            if (o == nd->id) {
                cr_shard_pull(s, keys + i, 1, out + (size_t)i * dim);
                continue;
            }
            k[o][fill[o]] = keys[i];
            r->pos[o][fill[o]++] = i;
        }
    if (nlocal) {
        atomic_fetch_add(&nd->keys_local, nlocal);
        atomic_fetch_add(&nd->bytes_local, nlocal * dim * (long long)sizeof(float));
        atomic_fetch_add(&nd->msgs_local, 1);
    }
    int rc = 0, tid = table_id(nd, s);
    *req = r->id;
    for (int i = 0; i < nd->nodes; i++) {
        if (!k[i]) continue;
        cr_dhdr h = {.type = CR_D_PULL, .table = (uint16_t)tid, .req = r->id, .worker = w->gw, .dim = dim,
                     .nkeys = w->cnt[i]};
        int borrowed = sync && i == single;
        if (rc == 0 && send_req_ex(w, i, &h, k[i], w->cnt[i], NULL, borrowed, e) == 0) r->outstanding++;
        else if (rc == 0) rc = -1;
        else if (!borrowed) free(k[i]);
    }
    free(k);
    free(fill);
    return rc;
}

static int push_start(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                      uint32_t *req, int sync, cr_err *e) {
    cr_node *nd = w->n;
    *req = 0;
    if (check_keys(w, s, keys, n, "push", e) < 0) return -1;
    int dim = s->def.dim;
    atomic_fetch_add(&nd->pushes, 1);
    nd->ws[w->lw].pushes++;
    int64_t nlocal = w->cnt[nd->id];
    if (nlocal == n) cr_shard_push(s, keys, n, vals);
    else if (nlocal)
        for (int64_t i = 0; i < n; i++)
            if (w->own[i] == nd->id) cr_shard_push(s, keys + i, 1, vals + (size_t)i * dim);
    if (nlocal) {
        atomic_fetch_add(&nd->keys_local, nlocal);
        atomic_fetch_add(&nd->bytes_local, nlocal * dim * (long long)sizeof(float));
        atomic_fetch_add(&nd->msgs_local, 1);
    }
    if (nlocal == n) return 0;
    wreq *r = new_req(w, CR_D_PUSH);
    r->dim = dim;
    int rc = 0, tid = table_id(nd, s);
    *req = r->id;
    size_t rowb = (size_t)dim * sizeof(float);
    int64_t **k = calloc((size_t)nd->nodes, sizeof *k), *fill = calloc((size_t)nd->nodes, sizeof *fill);
    float **v = calloc((size_t)nd->nodes, sizeof *v);
    int single = 0;
    for (int o = 0; o < nd->nodes; o++)
        if (o != nd->id && w->cnt[o]) {
            if (w->cnt[o] == n) { /* one destination: no per-row work; no copy if the caller waits */
                single = 1;
                fill[o] = n;
                if (sync) {
                    k[o] = (int64_t *)keys;
                    v[o] = (float *)vals;
                    continue;
                }
                k[o] = malloc((size_t)n * sizeof **k);
                v[o] = malloc((size_t)n * rowb);
                memcpy(k[o], keys, (size_t)n * sizeof *keys);
                memcpy(v[o], vals, (size_t)n * rowb);
                continue;
            }
            k[o] = malloc((size_t)w->cnt[o] * sizeof **k);
            v[o] = malloc((size_t)w->cnt[o] * rowb);
        }
    for (int64_t i = 0; i < n && !single; i++) {
        int o = w->own[i];
        if (o == nd->id) continue;
        k[o][fill[o]] = keys[i];
        memcpy(v[o] + (size_t)fill[o] * dim, vals + (size_t)i * dim, rowb);
        fill[o]++;
    }
    for (int o = 0; o < nd->nodes; o++) {
        if (!k[o]) continue;
        cr_dhdr h = {.type = CR_D_PUSH, .table = (uint16_t)tid, .req = r->id, .worker = w->gw, .dim = dim,
                     .nkeys = fill[o], .raw_bytes = fill[o] * dim * (int64_t)sizeof(float)};
        int borrowed = sync && single;
        if (rc == 0 && send_req_ex(w, o, &h, k[o], fill[o], v[o], borrowed, e) == 0) r->outstanding++;
        else {
            if (rc == 0) rc = -1;
            else if (!borrowed) {
                free(k[o]);
                free(v[o]);
            }
        }
    }
    free(k);
    free(v);
    free(fill);
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
        if (p->n < 2 || vb != (size_t)h.nkeys * (size_t)r->dim * sizeof(float))
            return cr_errf(e, "malformed pull reply from node %d", node);
        if ((h.flags & CR_D_ZLIB) || (uintptr_t)v % sizeof(float)) {
            buf = malloc(vb + 1);
            if (h.flags & CR_D_ZLIB) {
                if (cr_wire_inflate(v, cr_parts_size(p, 1), buf, vb, e) < 0) {
                    free(buf);
                    return -1;
                }
            } else
                memcpy(buf, v, vb);
            v = buf;
        } else if (cr_parts_size(p, 1) != vb)
            return cr_errf(e, "malformed pull reply from node %d", node);
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

/* Receive replies for up to timeout_ms. */
static int pump(cr_wclient *w, long timeout_ms, cr_err *e) {
    if (zmq_poll(w->items, w->nitems, timeout_ms) <= 0) return 0;
    for (int i = 0; i < w->nitems; i++) {
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
        if (pump(w, 200, e) < 0) return -1;
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
        if (pump(w, 200, e) < 0) return -1;
    }
    drop_done(w);
    return 0;
}

int cr_wclient_pull(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, uint32_t *req,
                    cr_err *e) {
    return pull_start(w, s, keys, n, out, req, 0, e);
}

int cr_wclient_push(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                    uint32_t *req, cr_err *e) {
    return push_start(w, s, keys, n, vals, req, 0, e);
}

int cr_wclient_pull_sync(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, cr_err *e) {
    uint32_t req;
    int rc = pull_start(w, s, keys, n, out, &req, 1, e);
    /* even after a failed send, what was sent may still read the borrowed keys */
    if (cr_wclient_wait(w, req, rc < 0 ? NULL : e) < 0 && rc == 0) rc = -1;
    return rc;
}

int cr_wclient_push_sync(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals, cr_err *e) {
    uint32_t req;
    int rc = push_start(w, s, keys, n, vals, &req, 1, e);
    if (cr_wclient_wait(w, req, rc < 0 ? NULL : e) < 0 && rc == 0) rc = -1;
    return rc;
}
