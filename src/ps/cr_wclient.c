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
    free(w);
    *wp = NULL;
}

static int check_keys(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const char *op, cr_err *e) {
    memset(w->cnt, 0, (size_t)w->n->nodes * sizeof *w->cnt);
    for (int64_t i = 0; i < n; i++) {
        if (keys[i] < 0 || keys[i] >= s->def.keys)
            return cr_errf(e, "%s: key %lld (position %lld) out of range [0, %lld) of table '%s'", op,
                           (long long)keys[i], (long long)i + 1, (long long)s->def.keys, s->def.name);
        w->cnt[cr_shard_owner(s, keys[i])]++;
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

static int send_req(cr_wclient *w, int node, cr_dhdr *h, int64_t *keys, int64_t nk, float *vals, cr_err *e) {
    void *sock = w->peer[node];
    size_t kb = (size_t)nk * sizeof(int64_t), vb = vals ? (size_t)nk * (size_t)h->dim * sizeof(float) : 0;
    if (vals && w->n->tables[h->table]->def.compress && vb >= 65536) {
        void *z;
        size_t zn;
        if (cr_wire_deflate(vals, vb, &z, &zn, NULL) == 0) {
            free(vals);
            vals = z;
            vb = zn;
            h->flags |= CR_D_ZLIB;
        }
    }
    size_t sent = sizeof *h + kb;
    int rc = zmq_send(sock, h, sizeof *h, ZMQ_SNDMORE) < 0 ? -1 : 0;
    if (rc == 0) rc = cr_send_owned(sock, keys, kb, vals != NULL);
    else free(keys);
    if (vals) {
        if (rc == 0) rc = cr_send_owned(sock, vals, vb, 0);
        else free(vals);
        sent += vb;
    }
    if (rc < 0) return cr_errf(e, "send to node %d failed: %s", node, zmq_strerror(errno));
    atomic_fetch_add(&w->n->msgs_remote, 1);
    atomic_fetch_add(&w->n->bytes_remote, (long long)sent);
    atomic_fetch_add(&w->n->keys_remote, nk);
    return 0;
}

int cr_wclient_pull(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, float *out, uint32_t *req,
                    cr_err *e) {
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
    for (int i = 0; i < nd->nodes; i++)
        if (w->cnt[i] && i != nd->id) {
            k[i] = malloc((size_t)w->cnt[i] * sizeof(int64_t));
            r->pos[i] = malloc((size_t)w->cnt[i] * sizeof(int64_t));
        }
    for (int64_t i = 0; i < n; i++) {
        int o = cr_shard_owner(s, keys[i]);
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
        if (rc == 0 && send_req(w, i, &h, k[i], w->cnt[i], NULL, e) == 0) r->outstanding++;
        else if (rc == 0) rc = -1;
        else free(k[i]);
    }
    free(k);
    free(fill);
    return rc;
}

int cr_wclient_push(cr_wclient *w, cr_shard *s, const int64_t *keys, int64_t n, const float *vals,
                    uint32_t *req, cr_err *e) {
    cr_node *nd = w->n;
    *req = 0;
    if (check_keys(w, s, keys, n, "push", e) < 0) return -1;
    int dim = s->def.dim;
    atomic_fetch_add(&nd->pushes, 1);
    nd->ws[w->lw].pushes++;
    int64_t nlocal = w->cnt[nd->id];
    if (nlocal == n) {
        cr_shard_push(s, keys, n, vals);
    } else {
        for (int64_t i = 0; i < n; i++)
            if (cr_shard_owner(s, keys[i]) == nd->id) cr_shard_push(s, keys + i, 1, vals + (size_t)i * dim);
    }
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
    for (int o = 0; o < nd->nodes; o++) {
        if (o == nd->id || !w->cnt[o]) continue;
        int64_t *k = malloc((size_t)w->cnt[o] * sizeof *k);
        float *v = malloc((size_t)w->cnt[o] * (size_t)dim * sizeof *v);
        int64_t f = 0;
        for (int64_t i = 0; i < n; i++)
            if (cr_shard_owner(s, keys[i]) == o) {
                k[f] = keys[i];
                memcpy(v + (size_t)f * dim, vals + (size_t)i * dim, (size_t)dim * sizeof *v);
                f++;
            }
        cr_dhdr h = {.type = CR_D_PUSH, .table = (uint16_t)tid, .req = r->id, .worker = w->gw, .dim = dim,
                     .nkeys = f, .raw_bytes = f * dim * (int64_t)sizeof(float)};
        if (rc == 0 && send_req(w, o, &h, k, f, v, e) == 0) r->outstanding++;
        else {
            if (rc == 0) rc = -1;
            else {
                free(k);
                free(v);
            }
        }
    }
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
    if (h.type == CR_D_PULL_REP && r->kind == CR_D_PULL && r->pos && r->pos[node]) {
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
