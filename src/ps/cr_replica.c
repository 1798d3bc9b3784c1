/* Replication of hot keys: replica sets, worker access, the sync thread and
 * its sparse all-reduce. Design and guarantees: cr_replica.h and
 * docs/management.md ("Replication").
 *
 * Per replicated key (a slot of its table's set) a node keeps three rows of
 * rowf = dim + sdim floats (the value, then the optimizer state), and a
 * fourth for the sync thread's sums (red):
 *   w     what workers read and update (the rule applied at once),
 *   base  the value all nodes agreed on after the last round (bitwise equal
 *         on every node: the all-reduce sums in the same pairs everywhere),
 *   acc   the changes this node made since its last snapshot.
 * A round: every node moves acc into its reduce buffer (red) and zeroes it;
 * the buffers are summed over all nodes (recursive doubling, only touched
 * slots travel); then base += sum and w = base + acc (acc now holds only the
 * updates made during the round). The owner of a key writes base into its
 * home shard. The drift of w from base + acc through rounding is thus reset
 * every round, and once no worker writes, w == base on every node.
 *
 * Changing a set (cr_replicas_set, collective): the caller posts a request
 * and waits. Rounds carry a flag bit; a round in which any node had a
 * request pending makes every node stop its timed rounds, wait for its own
 * request, then run one more delta round (its snapshot taken after its own
 * request, when its workers are idle: the final sync), then an install
 * round, in which the owner of each new key contributes its home row (value
 * and state) and the all-reduce hands every node every row. The install
 * also compares a hash of each node's key list: if they differ, nothing is
 * installed and every node's call fails. */
#include "ps/cr_replica.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_alloc.h"
#include "base/cr_finite.h"
#include "base/cr_time.h"
#include "net/cr_auth.h"

#define STRIPES 64
#define INBOX_MAX 1024  /* messages waiting for their round; a peer is at most a round ahead */
#define SET_TIMEOUT 30.0 /* seconds a set change waits for the other nodes */
#define STEP_PRE 1000   /* an extra node (id >= p) hands its buffer to id - p */
#define STEP_POST 1001  /* and gets the sum back */

enum { KIND_DELTA = 1, KIND_INSTALL = 2 };
enum { FLAG_CHANGE = 1, FLAG_DISAGREE = 2 };

/* A slot of the key index: the key and its slot, side by side (one cache
 * line per probe). */
typedef struct hent {
    int64_t key, slot;
} hent;

/* One table's replicated keys on this node. Immutable shape; rows under
 * the stripe locks (stripe = slot % STRIPES); red, rmark, rlist belong to
 * the sync thread. */
typedef struct rset {
    int table;
    cr_shard *s;
    int32_t dim, sdim, rowf;
    int i32;             /* the table holds int32 counts: w, base, acc, red are int32 bits */
    int64_t n, hcap;
    int64_t *keys;       /* sorted, unique */
    hent *h;             /* open addressing, key -1: empty */
    float *w, *base, *acc, *red;
    uint8_t *dirty, *rmark;
    int32_t *dlist;      /* stripe b's dirty slots at dlist[b * per ...] */
    int32_t dcnt[STRIPES];
    int64_t per;
    int32_t *rlist;
    int64_t rcnt;
    int locked;          /* the locks are initialised */
    pthread_mutex_t locks[STRIPES];
} rset;

/* An i32 table's rows: int32 counts in the float arrays, added as uint32
 * (exact, wrapping; ps/cr_table.h, cr_optim_add_i32). The float paths below
 * are untouched: each branches once per row on rset.i32. */

typedef struct shdr {
    int64_t round, bytes;
    int32_t from, step, kind, flags, table, nsec;
    uint64_t hash;
} shdr;

typedef struct sec {
    int32_t table, rowf;
    int64_t count, nset;
} sec;

typedef struct inmsg {
    shdr h;
    char *body;
    struct inmsg *next;
} inmsg;

typedef struct req {
    int table, done, rc;
    int abandoned; /* its caller timed out: whoever ends it frees it */
    rset *target;
    uint64_t hash;
    char err[CR_ERR_MAX];
} req;

struct cr_replicas {
    cr_shards *shards; /* the node's (borrowed) */
    int id, nodes;
    void **peer; /* DEALER per node (NULL for this one); sync thread only */
    pthread_t th;
    int started;
    _Atomic(rset *) sets[CR_NODE_MAX_TABLES];
    atomic_int sync_ms;
    atomic_llong keys, reads, updates, syncs, msent, mrecv, bsent, brecv, dropped, round_max_us, gap_max_us;
    _Atomic int64_t round; /* rounds completed */

    pthread_mutex_t mu; /* guards what follows */
    pthread_cond_t cv;  /* inbox, request or stop changed */
    pthread_cond_t done_cv;
    inmsg *inbox;
    int ninbox, stop, changing, broken;
    req *rq; /* the pending change, NULL if none */
    char broken_msg[CR_ERR_MAX];
    cr_err why; /* sync thread only: why its last round failed */
};

/* ---------- sets ---------- */

static inline uint64_t mix(int64_t k) { return (uint64_t)k * 0x9E3779B97F4A7C15ULL; }

static int64_t find(const rset *s, int64_t key) {
    uint64_t m = (uint64_t)s->hcap - 1;
    for (uint64_t h = (mix(key) >> 17) & m;; h = (h + 1) & m) {
        if (s->h[h].key == key) return s->h[h].slot;
        if (s->h[h].key < 0) return -1;
    }
}

static void set_free(rset *s) {
    if (!s) return;
    for (int b = 0; s->locked && b < STRIPES; b++) pthread_mutex_destroy(&s->locks[b]);
    void *p[] = {s->keys, s->h, s->w, s->base, s->acc, s->red, s->dirty, s->rmark, s->dlist, s->rlist};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) free(p[i]);
    free(s);
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Allocate the rows and indexes of s (keys already set). -1 if short of
 * memory (the sizes are the user's). */
static int set_alloc(rset *s) {
    size_t n = (size_t)s->n + 1, rows = n * (size_t)s->rowf * sizeof(float);
    s->hcap = 16;
    while (s->hcap < 2 * s->n) s->hcap *= 2;
    s->per = s->n / STRIPES + 1;
    s->h = malloc((size_t)s->hcap * sizeof *s->h); /* all checked below */
    s->w = malloc(rows);
    s->base = malloc(rows);
    s->acc = calloc(1, rows);
    s->red = calloc(1, rows);
    s->dirty = calloc(n, 1);
    s->rmark = calloc(n, 1);
    s->dlist = malloc((size_t)(s->per * STRIPES) * sizeof *s->dlist);
    s->rlist = malloc(n * sizeof *s->rlist);
    if (!s->h || !s->w || !s->base || !s->acc || !s->red || !s->dirty || !s->rmark || !s->dlist ||
        !s->rlist)
        return -1;
    for (int64_t i = 0; i < s->hcap; i++) s->h[i].key = -1;
    uint64_t m = (uint64_t)s->hcap - 1;
    for (int64_t i = 0; i < s->n; i++) {
        uint64_t h = (mix(s->keys[i]) >> 17) & m;
        while (s->h[h].key >= 0) h = (h + 1) & m;
        s->h[h] = (hent){s->keys[i], i};
    }
    for (int b = 0; b < STRIPES; b++) pthread_mutex_init(&s->locks[b], NULL);
    s->locked = 1;
    return 0;
}

/* A new set of table t (shard s) from the caller's keys: checked, sorted,
 * duplicates dropped. NULL with a message. */
static rset *set_new(cr_shard *sh, int t, const int64_t *keys, int64_t n, cr_err *e) {
    if (n < 0 || n > INT32_MAX - 1) {
        cr_errf(e, "replicate: %lld keys for table '%s' (at most %d)", (long long)n, sh->def.name, INT32_MAX - 1);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        if (keys[i] < 0 || keys[i] >= sh->def.keys) {
            cr_errf(e, "replicate: key %lld (position %lld) out of range [0, %lld) of table '%s'", (long long)keys[i],
                    (long long)i + 1, (long long)sh->def.keys, sh->def.name);
            return NULL;
        }
    rset *s = cr_xcalloc(1, sizeof *s);
    s->table = t;
    s->s = sh;
    s->dim = sh->def.dim;
    s->sdim = sh->sdim;
    s->rowf = s->dim + s->sdim;
    s->i32 = cr_shard_i32(sh);
    s->keys = malloc((size_t)(n + 1) * sizeof *s->keys); /* checked below */
    if (s->keys) {
        if (n) memcpy(s->keys, keys, (size_t)n * sizeof *keys);
        qsort(s->keys, (size_t)n, sizeof *s->keys, cmp64);
        for (int64_t i = 0; i < n; i++)
            if (s->n == 0 || s->keys[s->n - 1] != s->keys[i]) s->keys[s->n++] = s->keys[i];
    }
    if (!s->keys || set_alloc(s) < 0) {
        set_free(s);
        cr_errf(e, "replicate: out of memory for %lld keys of table '%s'", (long long)n, sh->def.name);
        return NULL;
    }
    return s;
}

static uint64_t set_hash(const rset *s) {
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)s->table;
    for (int64_t i = 0; i < s->n; i++) h = (h ^ (uint64_t)s->keys[i]) * 1099511628211ULL;
    return h ^ (uint64_t)s->n;
}

/* ---------- worker access ---------- */

int cr_replicas_has(const cr_replicas *r, int table, int64_t key) {
    if (table < 0 || table >= CR_NODE_MAX_TABLES) return 0;
    rset *s = atomic_load(&((cr_replicas *)r)->sets[table]);
    return s && s->n && find(s, key) >= 0;
}

int64_t cr_replicas_count(const cr_replicas *r, int table) {
    if (table < 0 || table >= CR_NODE_MAX_TABLES) return 0;
    rset *s = atomic_load(&((cr_replicas *)r)->sets[table]);
    return s ? s->n : 0;
}

static rset *set_of(cr_replicas *r, int table, const char *op, cr_err *e) {
    rset *s = table >= 0 && table < CR_NODE_MAX_TABLES ? atomic_load(&r->sets[table]) : NULL;
    if (!s || !s->n) cr_errf(e, "%s: table %d has no replicated keys", op, table);
    return s && s->n ? s : NULL;
}

static int not_replicated(const rset *s, const char *op, int64_t key, int64_t i, cr_err *e) {
    return cr_errf(e, "%s: key %lld (position %lld) of table '%s' is not replicated", op, (long long)key,
                   (long long)i + 1, s->s->def.name);
}

int cr_replicas_pull(cr_replicas *r, int table, const int64_t *keys, int64_t n, float *out, cr_err *e) {
    rset *s = set_of(r, table, "replica pull", e);
    if (!s) return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t slot = find(s, keys[i]);
        if (slot < 0) return not_replicated(s, "replica pull", keys[i], i, e);
        pthread_mutex_t *m = &s->locks[slot % STRIPES];
        pthread_mutex_lock(m);
        memcpy(out + i * s->dim, s->w + slot * s->rowf, (size_t)s->dim * sizeof(float));
        pthread_mutex_unlock(m);
    }
    atomic_fetch_add(&r->reads, n);
    return 0;
}

/* Apply update g to slot's w with the table's rule; add the change to acc
 * and list the slot as dirty. old: rowf floats of scratch (cr_optim_apply_acc). */
static void push_one(rset *s, const cr_optim *o, int64_t slot, const float *g, float *old) {
    int b = (int)(slot % STRIPES);
    float *w = s->w + slot * s->rowf, *acc = s->acc + slot * s->rowf;
    pthread_mutex_lock(&s->locks[b]);
    cr_optim_apply_acc(o, w, g, s->dim, acc, old);
    if (!s->dirty[slot]) {
        s->dirty[slot] = 1;
        s->dlist[b * s->per + s->dcnt[b]++] = (int32_t)slot;
    }
    pthread_mutex_unlock(&s->locks[b]);
}

int cr_replicas_push(cr_replicas *r, int table, const int64_t *keys, int64_t n, const float *g, cr_err *e) {
    rset *s = set_of(r, table, "replica push", e);
    if (!s) return -1;
    int64_t few[256], *slot = n <= 256 ? few : cr_xmalloc((size_t)n * sizeof *slot);
    int rc = 0;
    for (int64_t i = 0; i < n && rc == 0; i++)
        if ((slot[i] = find(s, keys[i])) < 0) rc = not_replicated(s, "replica push", keys[i], i, e);
    if (rc == 0 && !s->i32) rc = cr_check_finite(g, (size_t)n * (size_t)s->dim, "replica push refused", e);
    cr_optim o = s->s->def.optim; /* lr changes only between commands (SETLR) */
    float small[256], *old = s->rowf <= 256 ? small : cr_xmalloc((size_t)s->rowf * sizeof(float));
    for (int64_t i = 0; i < n && rc == 0; i++) push_one(s, &o, slot[i], g + i * s->dim, old);
    if (old != small) free(old);
    if (slot != few) free(slot);
    if (rc < 0) return -1;
    atomic_fetch_add(&r->updates, n);
    return 0;
}

/* ---------- counters ---------- */

void cr_replicas_stats(const cr_replicas *r, cr_replica_stats *o) {
    cr_replicas *m = (cr_replicas *)r;
    *o = (cr_replica_stats){.keys = atomic_load(&m->keys), .reads = atomic_load(&m->reads),
                            .updates = atomic_load(&m->updates), .syncs = atomic_load(&m->syncs),
                            .msgs_sent = atomic_load(&m->msent), .msgs_recv = atomic_load(&m->mrecv),
                            .bytes_sent = atomic_load(&m->bsent), .bytes_recv = atomic_load(&m->brecv),
                            .dropped = atomic_load(&m->dropped), .sync_ms = atomic_load(&m->sync_ms),
                            .round_max_s = (double)atomic_load(&m->round_max_us) / 1e6,
                            .gap_max_s = (double)atomic_load(&m->gap_max_us) / 1e6};
}

int cr_replicas_stats_put(const cr_replica_stats *t, char *b, size_t cap) {
    return snprintf(b, cap,
                    ",replica={keys=%lld,reads=%lld,updates=%lld,syncs=%lld,msgs_sent=%lld,msgs_recv=%lld,"
                    "bytes_sent=%lld,bytes_recv=%lld,dropped=%lld,sync_ms=%lld,round_max_s=%.6f,gap_max_s=%.6f}",
                    (long long)t->keys, (long long)t->reads, (long long)t->updates, (long long)t->syncs,
                    (long long)t->msgs_sent, (long long)t->msgs_recv, (long long)t->bytes_sent,
                    (long long)t->bytes_recv, (long long)t->dropped, (long long)t->sync_ms, t->round_max_s,
                    t->gap_max_s);
}

int64_t cr_replicas_round(const cr_replicas *r) { return atomic_load(&((cr_replicas *)r)->round); }

void cr_replicas_set_sync_ms(cr_replicas *r, int ms) {
    atomic_store(&r->sync_ms, ms >= 1 ? ms : 1);
    pthread_mutex_lock(&r->mu);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* ---------- inbox (server thread in, sync thread out) ---------- */

static void drop(cr_replicas *r) { atomic_fetch_add(&r->dropped, 1); }

void cr_replicas_deliver(cr_replicas *r, cr_parts *p) {
    if (!r) return;
    shdr h;
    if (p->n != 4 || cr_parts_size(p, 2) != sizeof h) return drop(r);
    memcpy(&h, cr_parts_data(p, 2), sizeof h);
    size_t bn = cr_parts_size(p, 3);
    if (h.from < 0 || h.from >= r->nodes || h.from == r->id || h.bytes != (int64_t)bn || h.round < 0 ||
        (h.kind != KIND_DELTA && h.kind != KIND_INSTALL))
        return drop(r);
    inmsg *m = cr_xmalloc(sizeof *m);
    m->h = h;
    m->body = cr_xmalloc(bn + 1);
    memcpy(m->body, cr_parts_data(p, 3), bn);
    atomic_fetch_add(&r->mrecv, 1);
    atomic_fetch_add(&r->brecv, (long long)(sizeof(cr_dhdr) + sizeof h + bn));
    pthread_mutex_lock(&r->mu);
    if (r->ninbox >= INBOX_MAX) {
        pthread_mutex_unlock(&r->mu);
        free(m->body);
        free(m);
        return drop(r);
    }
    m->next = r->inbox;
    r->inbox = m;
    r->ninbox++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* Wait for the message of (round, step) from node `from`; NULL when the
 * replicas stop. The caller frees it. */
static inmsg *await(cr_replicas *r, int64_t round, int step, int from) {
    pthread_mutex_lock(&r->mu);
    inmsg *got = NULL;
    while (!got && !r->stop) {
        for (inmsg **pp = &r->inbox; *pp;) {
            inmsg *m = *pp;
            if (m->h.round < round) { /* of a round already done: a duplicate */
                *pp = m->next;
                r->ninbox--;
                free(m->body);
                free(m);
                drop(r);
                continue;
            }
            if (m->h.round == round && m->h.step == step && m->h.from == from) {
                got = m;
                *pp = m->next;
                r->ninbox--;
                break;
            }
            pp = &m->next;
        }
        if (!got) pthread_cond_wait(&r->cv, &r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return got;
}

/* ---------- one round's messages ---------- */

typedef struct round_ctx {
    int64_t round;
    int kind, flags, table;
    uint64_t hash;
    rset **sets;
    int nsets;
} round_ctx;

/* Send the touched slots of every set's reduce buffer to node `to`. */
static int send_red(cr_replicas *r, const round_ctx *c, int to, int step) {
    size_t bytes = 0;
    int nsec = 0;
    for (int i = 0; i < c->nsets; i++)
        if (c->sets[i]->rcnt) {
            rset *s = c->sets[i];
            bytes += sizeof(sec) + (size_t)s->rcnt * (sizeof(int32_t) + (size_t)s->rowf * sizeof(float));
            nsec++;
        }
    char *body = cr_xmalloc(bytes + 1), *p = body;
    for (int i = 0; i < c->nsets; i++) {
        rset *s = c->sets[i];
        if (!s->rcnt) continue;
        sec x = {.table = s->table, .rowf = s->rowf, .count = s->rcnt, .nset = s->n};
        memcpy(p, &x, sizeof x);
        p += sizeof x;
        memcpy(p, s->rlist, (size_t)s->rcnt * sizeof(int32_t));
        p += (size_t)s->rcnt * sizeof(int32_t);
        for (int64_t j = 0; j < s->rcnt; j++, p += (size_t)s->rowf * sizeof(float))
            memcpy(p, s->red + (int64_t)s->rlist[j] * s->rowf, (size_t)s->rowf * sizeof(float));
    }
    cr_dhdr d = {.type = CR_D_SYNC, .worker = r->id};
    shdr h = {.round = c->round, .bytes = (int64_t)bytes, .from = r->id, .step = step, .kind = c->kind,
              .flags = c->flags, .table = c->table, .nsec = nsec, .hash = c->hash};
    void *sock = r->peer[to];
    if (zmq_send(sock, &d, sizeof d, ZMQ_SNDMORE) < 0 || zmq_send(sock, &h, sizeof h, ZMQ_SNDMORE) < 0 ||
        cr_send_owned(sock, body, bytes, 0) < 0)
        return cr_errf(&r->why, "replica sync: cannot send to node %d: %s", to, zmq_strerror(errno));
    atomic_fetch_add(&r->msent, 1);
    atomic_fetch_add(&r->bsent, (long long)(sizeof d + sizeof h + bytes));
    return 0;
}

static rset *ctx_set(const round_ctx *c, int table) {
    for (int i = 0; i < c->nsets; i++)
        if (c->sets[i]->table == table) return c->sets[i];
    return NULL;
}

/* Fold one section into its set's reduce buffer: add (or copy into an
 * untouched slot). Returns the bytes used, 0 if the section is malformed. */
static size_t fold_sec(const round_ctx *c, const char *p, size_t left) {
    sec x;
    if (left < sizeof x) return 0;
    memcpy(&x, p, sizeof x);
    rset *s = ctx_set(c, x.table);
    if (!s || x.rowf != s->rowf || x.nset != s->n || x.count < 0 || x.count > s->n) return 0;
    size_t need = sizeof x + (size_t)x.count * (sizeof(int32_t) + (size_t)s->rowf * sizeof(float));
    if (need > left) return 0;
    const char *slots = p + sizeof x, *rows = slots + (size_t)x.count * sizeof(int32_t);
    for (int64_t j = 0; j < x.count; j++) {
        int32_t slot;
        memcpy(&slot, slots + j * (int64_t)sizeof slot, sizeof slot);
        if (slot < 0 || slot >= s->n) return 0;
        float *dst = s->red + (int64_t)slot * s->rowf;
        const char *src = rows + j * (int64_t)s->rowf * (int64_t)sizeof(float);
        if (!s->rmark[slot]) {
            memcpy(dst, src, (size_t)s->rowf * sizeof(float));
            s->rmark[slot] = 1;
            s->rlist[s->rcnt++] = slot;
        } else if (s->i32) {
            for (int32_t k = 0; k < s->rowf; k++) {
                uint32_t v, d;
                memcpy(&v, src + k * (int)sizeof v, sizeof v);
                memcpy(&d, dst + k, sizeof d);
                d += v;
                memcpy(dst + k, &d, sizeof d);
            }
        } else {
            for (int32_t k = 0; k < s->rowf; k++) {
                float v;
                memcpy(&v, src + k * (int)sizeof v, sizeof v);
                dst[k] += v;
            }
        }
    }
    return need;
}

static void clear_red(rset *s) {
    for (int64_t j = 0; j < s->rcnt; j++) {
        memset(s->red + (int64_t)s->rlist[j] * s->rowf, 0, (size_t)s->rowf * sizeof(float));
        s->rmark[s->rlist[j]] = 0;
    }
    s->rcnt = 0;
}

/* Combine message m into the round: its flags, its hash (install), its
 * sections (replace: the sum from node id - p, which already holds ours).
 * -1 if it does not belong to this round (then it is dropped). */
static int combine(round_ctx *c, inmsg *m, int replace) {
    if (m->h.kind != c->kind || (c->kind == KIND_INSTALL && m->h.table != c->table)) return -1;
    int f = m->h.flags;
    if (c->kind == KIND_INSTALL && m->h.hash != c->hash) f |= FLAG_DISAGREE;
    c->flags = replace ? f : c->flags | f; /* a replacing sum already holds our flags */
    if (c->flags & FLAG_DISAGREE) return 0; /* slots mean nothing across different key lists */
    if (replace)
        for (int i = 0; i < c->nsets; i++) clear_red(c->sets[i]);
    const char *p = m->body;
    size_t left = (size_t)m->h.bytes;
    for (int i = 0; i < m->h.nsec; i++) {
        size_t used = fold_sec(c, p, left);
        if (!used) return -1;
        p += used;
        left -= used;
    }
    return 0;
}

/* Receive from `from` and fold; 0, or -1 when stopping or on a bad message. */
static int take(cr_replicas *r, round_ctx *c, int step, int from, int replace) {
    inmsg *m = await(r, c->round, step, from);
    if (!m) return cr_errf(&r->why, "node stopping");
    int rc = combine(c, m, replace);
    if (rc < 0) {
        drop(r);
        cr_errf(&r->why, "replica sync: a malformed message from node %d in round %lld", from, (long long)c->round);
    }
    free(m->body);
    free(m);
    return rc;
}

/* The all-reduce of the reduce buffers (recursive doubling; the nodes
 * beyond the largest power of two p first hand theirs to id - p and get
 * the sum back). Every node ends with the same sums, added in the same
 * pairs. -1 when stopping or on a send failure. */
static int allreduce(cr_replicas *r, round_ctx *c) {
    int N = r->nodes, id = r->id, p = 1;
    while (p * 2 <= N) p *= 2;
    if (id >= p) {
        if (send_red(r, c, id - p, STEP_PRE) < 0) return -1;
        return take(r, c, STEP_POST, id - p, 1);
    }
    if (id + p < N && take(r, c, STEP_PRE, id + p, 0) < 0) return -1;
    for (int s = 1; s < p; s <<= 1) {
        if (send_red(r, c, id ^ s, s) < 0 || take(r, c, s, id ^ s, 0) < 0) return -1;
    }
    if (id + p < N && send_red(r, c, id + p, STEP_POST) < 0) return -1;
    return 0;
}

/* ---------- rounds ---------- */

/* Move this node's accumulated changes of s into its reduce buffer. */
static void snapshot(rset *s) {
    for (int b = 0; b < STRIPES; b++) {
        pthread_mutex_lock(&s->locks[b]);
        for (int32_t j = 0; j < s->dcnt[b]; j++) {
            int32_t slot = s->dlist[b * s->per + j];
            float *acc = s->acc + (int64_t)slot * s->rowf;
            memcpy(s->red + (int64_t)slot * s->rowf, acc, (size_t)s->rowf * sizeof(float));
            memset(acc, 0, (size_t)s->rowf * sizeof(float));
            s->dirty[slot] = 0;
            s->rmark[slot] = 1;
            s->rlist[s->rcnt++] = slot;
        }
        s->dcnt[b] = 0;
        pthread_mutex_unlock(&s->locks[b]);
    }
}

/* Write the agreed row of slot into its home shard (the owner only). */
static void write_home(cr_replicas *r, rset *s, int32_t slot) {
    int64_t key = s->keys[slot];
    if (cr_shard_owner(s->s, key) != r->id) return;
    const float *b = s->base + (int64_t)slot * s->rowf; /* base: the sync thread's alone */
    cr_shard_set_rows(s->s, key, 1, b, b + s->dim);
}

/* After the all-reduce of a delta round: base += sum, w = base + acc. */
static void apply_delta(cr_replicas *r, rset *s) {
    for (int64_t j = 0; j < s->rcnt; j++) {
        int32_t slot = s->rlist[j];
        int64_t o = (int64_t)slot * s->rowf;
        pthread_mutex_t *m = &s->locks[slot % STRIPES];
        pthread_mutex_lock(m);
        if (s->i32) {
            cr_optim_add_i32(s->base + o, s->base + o, s->red + o, s->rowf);
            cr_optim_add_i32(s->w + o, s->base + o, s->acc + o, s->rowf);
        } else {
            for (int32_t k = 0; k < s->rowf; k++) {
                s->base[o + k] += s->red[o + k];
                s->w[o + k] = s->base[o + k] + s->acc[o + k];
            }
        }
        pthread_mutex_unlock(m);
        write_home(r, s, slot);
    }
    clear_red(s);
}

static void raise_to(atomic_llong *a, double seconds) {
    long long us = (long long)(seconds * 1e6), cur = atomic_load(a);
    while (us > cur && !atomic_compare_exchange_weak(a, &cur, us)) {
    }
}

static void round_done(cr_replicas *r, double t0) {
    raise_to(&r->round_max_us, cr_now() - t0);
    pthread_mutex_lock(&r->mu);
    atomic_fetch_add(&r->round, 1);
    pthread_cond_broadcast(&r->done_cv); /* settle waits on rounds */
    pthread_mutex_unlock(&r->mu);
    atomic_fetch_add(&r->syncs, 1);
}

/* One delta round over every replicated table; *flags in: ours, out: the
 * OR of all nodes'. -1 when stopping. */
static int delta_round(cr_replicas *r, int *flags) {
    rset *sets[CR_NODE_MAX_TABLES];
    int ns = 0;
    for (int t = 0; t < CR_NODE_MAX_TABLES; t++) {
        rset *s = atomic_load(&r->sets[t]);
        if (s && s->n) sets[ns++] = s;
    }
    double t0 = cr_now();
    round_ctx c = {.round = atomic_load(&r->round), .kind = KIND_DELTA, .flags = *flags, .table = -1,
                   .sets = sets, .nsets = ns};
    for (int i = 0; i < ns; i++) snapshot(sets[i]);
    if (allreduce(r, &c) < 0) return -1;
    for (int i = 0; i < ns; i++) apply_delta(r, sets[i]);
    *flags = c.flags;
    round_done(r, t0);
    return 0;
}

/* The install round of q->target: each owner contributes its home rows,
 * the all-reduce gives every node all of them. 0, -1 when stopping, or 1
 * with the reason in q->err (nothing installed). */
static int install_round(cr_replicas *r, req *q) {
    rset *s = q->target;
    double t0 = cr_now();
    for (int32_t slot = 0; slot < s->n; slot++) {
        if (cr_shard_owner(s->s, s->keys[slot]) != r->id) continue;
        float *row = s->red + (int64_t)slot * s->rowf;
        cr_shard_get_rows(s->s, s->keys[slot], 1, row, row + s->dim);
        s->rmark[slot] = 1;
        s->rlist[s->rcnt++] = slot;
    }
    round_ctx c = {.round = atomic_load(&r->round), .kind = KIND_INSTALL, .table = q->table, .hash = q->hash,
                   .sets = &s, .nsets = 1};
    if (allreduce(r, &c) < 0) return -1;
    round_done(r, t0);
    if (c.flags & FLAG_DISAGREE) {
        snprintf(q->err, sizeof q->err, "replicate: the nodes disagree on the replicated keys of table '%s'",
                 s->s->def.name);
        return 1;
    }
    if (s->rcnt != s->n) { /* cannot happen: every key has an owner */
        snprintf(q->err, sizeof q->err, "replicate: %lld of %lld rows of table '%s' came from no node",
                 (long long)(s->n - s->rcnt), (long long)s->n, s->s->def.name);
        return 1;
    }
    size_t bytes = (size_t)s->n * (size_t)s->rowf * sizeof(float);
    memcpy(s->base, s->red, bytes);
    memcpy(s->w, s->red, bytes);
    clear_red(s);
    return 0;
}

/* Swap in q's target as its table's set (workers are idle) and recount. */
static void install(cr_replicas *r, req *q) {
    rset *old = atomic_exchange(&r->sets[q->table], q->target);
    q->target = NULL;
    set_free(old);
    long long k = 0;
    for (int t = 0; t < CR_NODE_MAX_TABLES; t++) {
        rset *s = atomic_load(&r->sets[t]);
        k += s ? s->n : 0;
    }
    atomic_store(&r->keys, k);
}

/* End the pending change q with rc (caller holds r->mu): its caller wakes,
 * or, if it gave up waiting, q is freed here. */
static void finish(cr_replicas *r, req *q, int rc) {
    r->rq = NULL;
    if (q->abandoned) {
        set_free(q->target);
        free(q);
        return;
    }
    q->rc = rc;
    q->done = 1;
    pthread_cond_broadcast(&r->done_cv);
}

/* The change of a set: the final sync, then the install. -1 when stopping. */
static int change(cr_replicas *r, req *q) {
    int flags = FLAG_CHANGE;
    if (delta_round(r, &flags) < 0) return -1;
    int rc = install_round(r, q);
    if (rc < 0) return -1;
    if (rc == 0) install(r, q);
    pthread_mutex_lock(&r->mu);
    r->changing = 0;
    finish(r, q, rc ? -1 : 0);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* ---------- the sync thread ---------- */

enum { ACT_STOP, ACT_TIMED, ACT_FLAGGED, ACT_CHANGE };

static int any_set(cr_replicas *r) { return atomic_load(&r->keys) > 0; }

/* Sleep until there is something to do: a timed round when keys are
 * replicated (every sync_ms), a round carrying our request, or the change
 * once every node knows one is coming and ours has come. */
static int next_action(cr_replicas *r, double *due) {
    pthread_mutex_lock(&r->mu);
    int act;
    for (;;) {
        double now = cr_now();
        if (r->stop) act = ACT_STOP;
        else if (r->rq && r->changing) act = ACT_CHANGE;
        else if (r->rq) act = ACT_FLAGGED;
        else if (!r->changing && any_set(r) && now >= *due) act = ACT_TIMED;
        else if (!r->changing && any_set(r)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + (*due - now);
            ts.tv_sec = (time_t)t;
            ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
            pthread_cond_timedwait(&r->cv, &r->mu, &ts);
            continue;
        } else {
            pthread_cond_wait(&r->cv, &r->mu);
            continue;
        }
        break;
    }
    pthread_mutex_unlock(&r->mu);
    return act;
}

/* The sync thread ends (stop, or a round failed): a failure makes the
 * replicas broken, and a pending change fails with the reason at once.
 * Workers keep their replicas; nothing is merged any more. */
static void give_up(cr_replicas *r) {
    pthread_mutex_lock(&r->mu);
    if (!r->stop && !r->broken) {
        r->broken = 1;
        snprintf(r->broken_msg, sizeof r->broken_msg, "%s", r->why.msg);
    }
    if (r->rq && !r->stop) {
        snprintf(r->rq->err, sizeof r->rq->err, "replicate: %.400s", r->broken_msg);
        finish(r, r->rq, -1);
    }
    pthread_mutex_unlock(&r->mu);
}

static void *sync_main(void *arg) {
    cr_replicas *r = arg;
    double due = cr_now(), last = -1; /* start of the last timed round, -1 after anything else */
    for (;;) {
        int act = next_action(r, &due);
        if (act == ACT_STOP) break;
        if (act == ACT_CHANGE) {
            if (change(r, r->rq) < 0) break;
            due = cr_now() + atomic_load(&r->sync_ms) / 1000.0;
            last = -1;
            continue;
        }
        double start = cr_now();
        if (act == ACT_TIMED && last >= 0) raise_to(&r->gap_max_us, start - last);
        last = act == ACT_TIMED ? start : -1;
        int flags = act == ACT_FLAGGED ? FLAG_CHANGE : 0;
        if (delta_round(r, &flags) < 0) break;
        if (flags & FLAG_CHANGE) {
            pthread_mutex_lock(&r->mu);
            r->changing = 1;
            pthread_mutex_unlock(&r->mu);
        }
        due = start + atomic_load(&r->sync_ms) / 1000.0;
    }
    give_up(r);
    return NULL;
}

/* ---------- set changes ---------- */

static int check_set(cr_replicas *r, int table, cr_shard **sh, cr_err *e) {
    if (table < 0 || table >= cr_shards_count(r->shards) || table >= CR_NODE_MAX_TABLES)
        return cr_errf(e, "replicate: no table %d (%d tables)", table, cr_shards_count(r->shards));
    *sh = r->shards->t[table];
    if ((*sh)->def.optim.kind == CR_OPTIM_ASSIGN)
        return cr_errf(e, "replicate: table '%s' uses the rule 'assign', which cannot be replicated "
                          "(concurrent assignments do not merge)",
                       (*sh)->def.name);
    return 0;
}

/* Wait for q (under r->mu) up to SET_TIMEOUT. 0 done, -1 timed out or stopped. */
static int wait_req(cr_replicas *r, req *q) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)SET_TIMEOUT;
    while (!q->done && !r->stop)
        if (pthread_cond_timedwait(&r->done_cv, &r->mu, &ts) == ETIMEDOUT) break;
    return q->done ? 0 : -1;
}

int cr_replicas_settle(cr_replicas *r, cr_err *e) {
    if (!atomic_load(&r->keys)) return 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)SET_TIMEOUT;
    pthread_mutex_lock(&r->mu);
    int64_t until = atomic_load(&r->round) + 3;
    int rc = 0;
    while (rc == 0 && atomic_load(&r->round) < until) {
        if (r->stop || r->broken) rc = cr_errf(e, "replica settle: %s", r->stop ? "node stopping" : r->broken_msg);
        else if (pthread_cond_timedwait(&r->done_cv, &r->mu, &ts) == ETIMEDOUT)
            rc = cr_errf(e, "replica settle: no sync round for %.0f s", SET_TIMEOUT);
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int cr_replicas_set(cr_replicas *r, int table, const int64_t *keys, int64_t n, cr_err *e) {
    cr_shard *sh = NULL;
    if (check_set(r, table, &sh, e) < 0) return -1;
    rset *target = set_new(sh, table, keys, n, e);
    if (!target) return -1;
    req *q = cr_xcalloc(1, sizeof *q);
    q->table = table;
    q->target = target;
    q->hash = set_hash(target);
    pthread_mutex_lock(&r->mu);
    if (r->broken || r->rq) {
        cr_errf(e, "replicate: %s", r->broken ? r->broken_msg : "another change of the replicated keys is running");
        pthread_mutex_unlock(&r->mu);
        set_free(target);
        free(q);
        return -1;
    }
    r->rq = q;
    pthread_cond_broadcast(&r->cv);
    int rc = wait_req(r, q);
    if (rc < 0) { /* the sync thread still holds q: it ends or frees it */
        q->abandoned = 1;
        snprintf(r->broken_msg, sizeof r->broken_msg,
                 "replica sync stuck: a change of table '%s' got no answer from the other nodes within %.0f s",
                 sh->def.name, SET_TIMEOUT);
        r->broken = 1;
        cr_errf(e, "%s", r->stop ? "replicate: node stopping" : r->broken_msg);
        pthread_mutex_unlock(&r->mu);
        return -1;
    }
    pthread_mutex_unlock(&r->mu);
    rc = q->rc;
    if (rc < 0) cr_errf(e, "%s", q->err);
    set_free(q->target);
    free(q);
    return rc;
}

/* ---------- life ---------- */

cr_replicas *cr_replicas_new(const cr_peers *n, cr_shards *shards, int sync_ms, cr_err *e) {
    cr_replicas *r = cr_xcalloc(1, sizeof *r);
    r->shards = shards;
    r->id = n->id;
    r->nodes = n->nodes;
    atomic_store(&r->sync_ms, sync_ms > 0 ? sync_ms : CR_REPLICA_SYNC_MS);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    pthread_cond_init(&r->done_cv, NULL);
    r->peer = cr_xcalloc((size_t)r->nodes, sizeof *r->peer);
    for (int i = 0; i < r->nodes; i++) {
        if (i == r->id) continue;
        r->peer[i] = cr_socket(n->zctx, ZMQ_DEALER);
        if (r->peer[i]) cr_curve_client(r->peer[i], n->curve);
        if (!r->peer[i] || zmq_connect(r->peer[i], n->addrs[i]) < 0) {
            cr_errf(e, "replica sync: cannot connect to node %d at '%s': %s", i, n->addrs[i], zmq_strerror(errno));
            cr_replicas_destroy(&r);
            return NULL;
        }
    }
    if (pthread_create(&r->th, NULL, sync_main, r) != 0) {
        cr_errf(e, "replica sync: cannot start its thread");
        cr_replicas_destroy(&r);
        return NULL;
    }
    r->started = 1;
    return r;
}

void cr_replicas_destroy(cr_replicas **rp) {
    cr_replicas *r = rp ? *rp : NULL;
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_cond_broadcast(&r->done_cv);
    pthread_mutex_unlock(&r->mu);
    if (r->started) pthread_join(r->th, NULL);
    for (int i = 0; i < r->nodes; i++)
        if (r->peer[i]) zmq_close(r->peer[i]);
    free(r->peer);
    for (int t = 0; t < CR_NODE_MAX_TABLES; t++) set_free(atomic_load(&r->sets[t]));
    if (r->rq) { /* abandoned by a caller that timed out */
        set_free(r->rq->target);
        free(r->rq);
    }
    while (r->inbox) {
        inmsg *m = r->inbox;
        r->inbox = m->next;
        free(m->body);
        free(m);
    }
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    pthread_cond_destroy(&r->done_cv);
    free(r);
    *rp = NULL;
}
