/* The node's answers to the scheduler (cr_node_ctl.h). Every request gets exactly one answer:
 * its result, or an ERROR naming what was wrong (a malformed message, an
 * unknown type, a bad table or row range). CALL and MODEL are answered by
 * the workers, one answer each; a malformed one is answered with one ERROR
 * per local worker so that the caller's count of answers stays right.
 * CLOCKS, POLICY, CANCEL and HB need no answer; a malformed one still gets
 * an ERROR (it can only come from a broken scheduler). */
#include "ps/cr_node_ctl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "ps/cr_dir.h"

/* Send m to the scheduler as this node. */
static void up(cr_node_ctl *n, cr_proto_msg *m) { cr_link_send(n->link, m); }

static void ack(cr_node_ctl *n) { cr_link_ack(n->link); }

static cr_shard *table_of(cr_node_ctl *n, int id, cr_err *e) {
    cr_shard *s = cr_shards_at(n->shards, id);
    if (s) return s;
    cr_errf(e, "no table %d on node %d", id, n->peers->id);
    return NULL;
}

/* Bring every key of table `table` home first (rows that moved away, or
 * keys whose technique changes). */
static int recall(cr_node_ctl *n, int table, cr_err *e) {
    return cr_server_recall(n->srv, table, cr_shards_at(n->shards, table), n->link, e);
}

/* ---------- handlers: 0 done, 1 shut down, -1 answer ERROR with e ---------- */

typedef int (*handler_fn)(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e);

static int on_hb(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    (void)n;
    return cr_proto_decode_empty(m, e);
}

/* The scheduler refused something this node sent (a bug, not the user's):
 * answering would start a loop of errors, so it is only taken. */
static int on_error(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    (void)n, (void)m, (void)e;
    return 0;
}

static int on_shutdown(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    (void)e;
    n->rejoin = m->h.a == CR_SHUTDOWN_REJOIN;
    return 1; /* whatever else it carries: the scheduler wants us gone */
}

static int on_table(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_table t;
    if (cr_proto_decode_table(m, &t, e) < 0) return -1;
    if (t.id != cr_shards_count(n->shards)) return cr_errf(e, "table id %d out of sequence", t.id);
    if (t.id >= CR_NODE_MAX_TABLES) return cr_errf(e, "too many tables (at most %d)", CR_NODE_MAX_TABLES);
    uint32_t *owner = NULL;
    if (t.owner) {
        owner = malloc((size_t)t.def.keys * sizeof *owner); /* checked: the user's table size */
        if (!owner) return cr_errf(e, "table '%s': out of memory for its placement", t.def.name);
        memcpy(owner, t.owner, (size_t)t.def.keys * sizeof *owner);
    }
    cr_shard *s = cr_shard_new_placed(&t.def, n->peers->id, n->peers->nodes, owner, e);
    free(owner);
    if (!s) return -1;
    cr_shards_add(n->shards, s);
    ack(n);
    return 0;
}

/* A command no worker can run: each worker's answer is this error. */
static void refuse_cmd(cr_node_ctl *n, const cr_err *e) {
    for (int lw = 0; lw < n->peers->wpn; lw++) {
        cr_proto_msg m;
        cr_msg_reply r = {.worker = cr_peers_gw(n->peers, lw), .data = e->msg, .n = strlen(e->msg)};
        cr_proto_encode_reply(CR_M_ERROR, &r, &m, NULL);
        up(n, &m);
    }
}

/* A worker command (MODEL, CALL) goes to the workers if it decoded
 * (decoded == 0), its payloads kept as sent (the worker binding reads
 * them); a malformed one is refused, the node goes on. */
static int post_or_refuse(cr_node_ctl *n, const cr_proto_msg *m, int decoded, const cr_err *e) {
    if (decoded < 0) refuse_cmd(n, e);
    else cr_clocks_post(n->clk, m->h.type, m->p[0], m->n[0], m->p[1], m->n[1]);
    return 0;
}

static int on_model(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_script s;
    return post_or_refuse(n, m, cr_proto_decode_script(m, &s, e), e);
}

static int on_call(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_call c;
    return post_or_refuse(n, m, cr_proto_decode_call(m, &c, e), e);
}

/* Wake every waiting worker: they see the cancel and return. */
static int on_cancel(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    if (cr_proto_decode_empty(m, e) < 0) return -1;
    if (m->h.a == CR_CANCEL_STUCK) cr_clocks_stuck(n->clk);
    else cr_clocks_cancel(n->clk);
    return 0;
}

static int on_policy(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_script s;
    if (cr_proto_decode_script(m, &s, e) < 0) return -1;
    cr_clocks_set_policy(n->clk, &s);
    return 0;
}

/* Clocks only go up here: a late vector must not undo a newer one. */
static int on_clocks(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_clocks c;
    if (cr_proto_decode_clocks(m, cr_peers_workers(n->peers), &c, e) < 0) return -1;
    cr_clocks_raise(n->clk, &c);
    return 0;
}

/* Between commands (job:load): set, not raised. */
static int on_setclocks(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_clocks c;
    if (cr_proto_decode_clocks(m, cr_peers_workers(n->peers), &c, e) < 0) return -1;
    cr_clocks_set(n->clk, &c);
    ack(n);
    return 0;
}

static int on_setlr(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_setlr s;
    if (cr_proto_decode_setlr(m, &s, e) < 0) return -1;
    cr_shard *sh = table_of(n, s.table, e);
    if (!sh) return -1;
    cr_shard_set_lr(sh, (float)s.lr);
    ack(n);
    return 0;
}

/* A sparse table's keys of a rows message, copied (aligned) and checked:
 * every one this node's. NULL with a message. */
static int64_t *rows_keys(cr_node_ctl *n, const cr_shard *s, const cr_msg_rows *r, cr_err *e) {
    int64_t *k = cr_xmalloc((size_t)r->count * sizeof *k + 1);
    memcpy(k, r->keys, (size_t)r->count * sizeof *k);
    for (int64_t i = 0; i < r->count; i++)
        if (!cr_shard_holds(s, k[i])) {
            cr_errf(e, "key %lld of table '%s' is not on node %d", (long long)k[i], s->def.name, n->peers->id);
            free(k);
            return NULL;
        }
    return k;
}

/* A sparse table's GETROWS: rows of the keys sent, or (no keys) a part of
 * the stored rows from cursor r->lo on. */
static int sparse_getrows(cr_node_ctl *n, cr_shard *s, cr_msg_rows *r, cr_err *e) {
    int64_t *keys = r->keys ? rows_keys(n, s, r, e) : cr_xmalloc((size_t)r->count * sizeof *keys + 1);
    if (!keys) return -1;
    size_t vb = (size_t)r->count * (size_t)s->def.dim * sizeof(float), sb = (size_t)r->count * (size_t)s->sdim * sizeof(float);
    float *v = cr_xmalloc(vb + 1), *st = cr_xmalloc(sb + 1);
    if (r->keys) {
        cr_shard_get_keys(s, keys, r->count, v, st);
    } else {
        uint64_t cur = (uint64_t)r->lo;
        r->count = cr_shard_dump(s, &cur, r->count, keys, v, st);
        r->lo = (int64_t)cur;
    }
    r->values = v;
    r->valuesn = (size_t)r->count * (size_t)s->def.dim * sizeof(float);
    r->state = st;
    r->staten = (size_t)r->count * (size_t)s->sdim * sizeof(float);
    r->keys = keys;
    cr_proto_msg out;
    cr_proto_encode_rows(CR_M_ROWS, r, &out, NULL);
    up(n, &out);
    free(v);
    free(st);
    free(keys);
    return 0;
}

/* The rows [lo, lo + count) must all live on this node. */
static cr_shard *rows_shard(cr_node_ctl *n, const cr_msg_rows *r, cr_err *e) {
    cr_shard *s = table_of(n, r->table, e);
    if (s && s->sp) {
        if (!r->keys && r->count > 0 && r->values)
            return cr_errf(e, "table '%s' is sparse: its rows go by key", s->def.name), NULL;
        return s;
    }
    if (s && r->keys) return cr_errf(e, "table '%s' is dense: its rows go by range", s->def.name), NULL;
    if (s && (r->lo < s->lo || r->count > s->hi - r->lo)) {
        cr_errf(e, "rows [%lld, +%lld) of table %d are not on node %d (it holds [%lld, %lld))", (long long)r->lo,
                (long long)r->count, r->table, n->peers->id, (long long)s->lo, (long long)s->hi);
        return NULL;
    }
    return s;
}

static int on_getrows(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_rows r;
    cr_shard *s = cr_proto_decode_rows(m, 0, 0, &r, e) < 0 ? NULL : rows_shard(n, &r, e);
    if (s && s->sp) return sparse_getrows(n, s, &r, e);
    if (!s || recall(n, r.table, e) < 0) return -1; /* rows that moved away come home first */
    if (s->dir->nrepl > 0 && cr_replicas_settle(n->replicas, e) < 0) return -1; /* replicas' updates home too */
    r.valuesn = (size_t)r.count * (size_t)s->def.dim * sizeof(float);
    r.staten = (size_t)r.count * (size_t)s->sdim * sizeof(float);
    float *v = cr_xmalloc(r.valuesn + 1), *st = cr_xmalloc(r.staten + 1);
    cr_shard_get_rows(s, r.lo, r.count, v, st);
    r.values = v;
    r.state = st;
    cr_proto_msg out;
    cr_proto_encode_rows(CR_M_ROWS, &r, &out, NULL);
    up(n, &out);
    free(v);
    free(st);
    return 0;
}

static int on_setrows(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_rows r;
    cr_shard *s = table_of(n, m->h.table, e);
    if (!s || cr_proto_decode_rows(m, s->def.dim, s->sdim, &r, e) < 0 || !rows_shard(n, &r, e)) return -1;
    if (recall(n, r.table, e) < 0) return -1;
    float *v = cr_xmalloc(r.valuesn + 1), *st = cr_xmalloc(r.staten + 1); /* aligned copies */
    memcpy(v, r.values, r.valuesn);
    if (r.staten) memcpy(st, r.state, r.staten);
    int64_t *keys = s->sp ? rows_keys(n, s, &r, e) : NULL;
    if (s->sp && !keys) {
        free(v);
        free(st);
        return -1;
    }
    if (keys) cr_shard_load_keys(s, keys, r.count, v, r.staten ? st : NULL);
    else cr_shard_load_rows(s, r.lo, r.count, v, r.staten ? st : NULL);
    free(keys);
    free(v);
    free(st);
    ack(n);
    return 0;
}

/* ---------- sampling ---------- */

static void dpend_drop(cr_node_ctl *n) {
    free(n->samp->pend_w);
    n->samp->pend_w = NULL;
    n->samp->pend_got = n->samp->pend_n = 0;
}

/* The first part of weighted distribution d: checked against the table and
 * the distributions already built, then a buffer for all its weights. */
static int dpend_start(cr_node_ctl *n, const cr_msg_dist *d, const cr_shard *s, cr_err *e) {
    dpend_drop(n); /* the parts of an earlier one that failed half-way */
    if (cr_dists_find(n->samp, d->name, d->namen)) return cr_errf(e, "distribution '%.*s' exists", (int)d->namen, d->name);
    if (d->nweights != s->def.keys)
        return cr_errf(e, "distribution '%.*s': %lld weights for the %lld keys of table '%s'", (int)d->namen,
                       d->name, (long long)d->nweights, (long long)s->def.keys, s->def.name);
    memcpy(n->samp->pend_name, d->name, d->namen);
    n->samp->pend_name[d->namen] = '\0';
    n->samp->pend_table = d->table;
    n->samp->pend_n = d->nweights;
    n->samp->pend_w = cr_xmalloc((size_t)d->nweights * sizeof *n->samp->pend_w);
    return 0;
}

/* Take one part of weighted distribution d: 1 when it was the last, 0 when
 * more are to come, -1 (and nothing pending) when it is out of sequence. */
static int dpend_take(cr_node_ctl *n, const cr_msg_dist *d, const cr_shard *s, cr_err *e) {
    if (d->offset == 0 && dpend_start(n, d, s, e) < 0) return -1;
    if (!n->samp->pend_w || d->offset != n->samp->pend_got || d->nweights != n->samp->pend_n || d->table != n->samp->pend_table ||
        strlen(n->samp->pend_name) != d->namen || memcmp(n->samp->pend_name, d->name, d->namen)) {
        dpend_drop(n);
        return cr_errf(e, "distribution '%.*s': weights part at %lld out of sequence", (int)d->namen, d->name,
                       (long long)d->offset);
    }
    memcpy(n->samp->pend_w + d->offset, d->weights, (size_t)d->npart * sizeof(double));
    n->samp->pend_got += d->npart;
    return n->samp->pend_got == n->samp->pend_n;
}

/* Building a distribution's alias tables, off the main thread. */
typedef struct dbuild {
    cr_dist *x;
    const double *w;
    const cr_shard *s;
    int node, rc;
    cr_err e;
} dbuild;

static void *dbuild_main(void *arg) {
    dbuild *b = arg;
    const cr_shard *s = b->s;
    uint64_t keys = (uint64_t)s->def.keys;
    b->rc = cr_alias_build(&b->x->pi, b->w, keys, &b->e);
    cr_err le;
    if (b->rc == 0 && (s->lo >= s->hi ||
                       cr_alias_build_range(&b->x->local, b->w, keys, (uint64_t)s->lo, (uint64_t)s->hi, &le) < 0))
        snprintf(b->x->local_err, sizeof b->x->local_err,
                 "node %d holds no key of table '%s' with a positive weight", b->node, s->def.name);
    return NULL;
}

/* Build in a thread while this one keeps the scheduler's heartbeats going:
 * tens of millions of keys take seconds, longer than the node-silence timeout. */
static int dbuild_run(cr_node_ctl *n, dbuild *b) {
    pthread_t t;
    if (pthread_create(&t, NULL, dbuild_main, b) != 0) {
        dbuild_main(b);
        return b->rc;
    }
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        if (pthread_timedjoin_np(t, NULL, &ts) == 0) break;
        cr_proto_msg hb;
        cr_proto_encode_empty(CR_M_HB, &hb, NULL);
        up(n, &hb);
    }
    return b->rc;
}

/* A new distribution (or one part of its weights): once complete, its alias
 * tables are built here, once per node. The local one may be missing (a
 * slice without weight): level 4 refuses then. */
static int on_dist(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_dist d;
    if (cr_proto_decode_dist(m, &d, e) < 0) return -1;
    cr_shard *s = table_of(n, d.table, e);
    if (!s || cr_shard_need_range(s, "a sampling distribution", e) < 0) return -1;
    if (d.kind == CR_DIST_WEIGHTS) {
        int r = dpend_take(n, &d, s, e);
        if (r < 0) return -1;
        if (r == 0) return ack(n), 0;
    } else if (cr_dists_find(n->samp, d.name, d.namen)) {
        return cr_errf(e, "distribution '%.*s' exists", (int)d.namen, d.name);
    }
    if (cr_dists_count(n->samp) >= CR_NODE_MAX_DISTS) {
        dpend_drop(n);
        return cr_errf(e, "too many distributions (at most %d)", CR_NODE_MAX_DISTS);
    }
    cr_dist *x = cr_xcalloc(1, sizeof *x);
    memcpy(x->name, d.name, d.namen);
    x->table = d.table;
    dbuild b = {.x = x, .w = d.kind == CR_DIST_WEIGHTS ? n->samp->pend_w : NULL, .s = s, .node = n->peers->id};
    int rc = dbuild_run(n, &b);
    dpend_drop(n);
    if (rc < 0) {
        cr_errf(e, "%s", b.e.msg);
        free(x);
        return -1;
    }
    cr_dists_add(n->samp, x);
    ack(n);
    return 0;
}

/* A new sampling scheme: workers pick it up at their next prepare_sample. */
static int on_sampling(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_sampling s;
    if (cr_proto_decode_sampling(m, &s, e) < 0) return -1;
    cr_sampling_entry *v = cr_xmalloc((size_t)s.count * sizeof *v);
    for (int i = 0; i < s.count; i++) cr_proto_sampling_entry(&s, i, &v[i]);
    cr_dists_set_scheme(n->samp, v, s.count, s.label, s.labeln);
    ack(n);
    return 0;
}

/* ---------- techniques per key (docs/management.md) ---------- */

/* The replicated keys of a MANAGE, copied and checked against the table. */
static int64_t *manage_keys(const cr_msg_manage *g, const cr_shard *s, cr_err *e) {
    int64_t *k = cr_xmalloc((size_t)g->nrepl * sizeof *k + 1);
    for (int64_t i = 0; i < g->nrepl; i++) {
        k[i] = cr_proto_i64(g->repl, (size_t)i);
        if (k[i] < 0 || k[i] >= s->def.keys) {
            cr_errf(e, "manage: replicated key %lld (position %lld) out of range [0, %lld) of table '%s'",
                    (long long)k[i], (long long)i + 1, (long long)s->def.keys, s->def.name);
            free(k);
            return NULL;
        }
    }
    return k;
}

/* The relocating keys of a MANAGE (mode classic for the rest) as a bitmap
 * over the table's keys, checked: in range, no key twice, none of the
 * replicated keys (repl, nrepl). NULL with e set. */
static uint8_t *manage_reloc(const cr_msg_manage *g, const cr_shard *s, const int64_t *repl, cr_err *e) {
    uint8_t *b = cr_xcalloc((size_t)(s->def.keys + 7) / 8, 1);
    for (int64_t i = 0; i < g->nreloc; i++) {
        int64_t k = cr_proto_i64(g->reloc, (size_t)i);
        if (k < 0 || k >= s->def.keys) {
            cr_errf(e, "manage: relocating key %lld (position %lld) out of range [0, %lld) of table '%s'",
                    (long long)k, (long long)i + 1, (long long)s->def.keys, s->def.name);
        } else if (cr_bit(b, k)) {
            cr_errf(e, "manage: relocating key %lld (position %lld) is listed twice for table '%s'", (long long)k,
                    (long long)i + 1, s->def.name);
        } else {
            b[k >> 3] |= (uint8_t)(1u << (k & 7));
            continue;
        }
        free(b);
        return NULL;
    }
    for (int64_t i = 0; i < g->nrepl; i++)
        if (cr_bit(b, repl[i])) {
            cr_errf(e, "manage: key %lld of table '%s' is both replicated and relocating", (long long)repl[i],
                    s->def.name);
            free(b);
            return NULL;
        }
    return b;
}

/* 1 when a key that relocates now would not under (mode, rb): it must come
 * home first (a recall brings every moved key of the table home). */
static int reloc_shrinks(const cr_shard *s, int mode, const uint8_t *rb) {
    if (!cr_dir_relocating(s)) return 0;          /* nothing relocates now */
    if (mode == CR_TECH_RELOCATE && !rb) return 0; /* everything will */
    if (!rb || !s->reloc) return 1;
    for (int64_t i = 0; i < (s->def.keys + 7) / 8; i++)
        if (s->reloc[i] & ~rb[i]) return 1;
    return 0;
}

/* A table's techniques change between commands: keys that moved come home
 * first when they stop relocating (the table goes classic, keys leave a
 * mixed table's relocation set) or keys become replicated. */
static int on_manage(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_manage g;
    if (cr_proto_decode_manage(m, &g, e) < 0) return -1;
    cr_shard *s = table_of(n, g.table, e);
    if (s && (g.mode != 0 || g.nrepl > 0 || g.nreloc > 0) &&
        cr_shard_need_range(s, "management other than classic", e) < 0)
        return -1;
    int64_t *keys = s ? manage_keys(&g, s, e) : NULL;
    if (!keys) return -1;
    uint8_t *rb = NULL;
    if (g.nreloc > 0 && !(rb = manage_reloc(&g, s, keys, e))) {
        free(keys);
        return -1;
    }
    int rc = 0, mode = rb ? CR_TECH_RELOCATE : g.mode; /* mixed: routed as relocate, localize filtered */
    if (mode == CR_TECH_RELOCATE && atomic_load(&n->srv->reloc_broken))
        rc = cr_errf(e, "table '%s': node %d cannot reach its peers' servers: relocation refused", s->def.name, n->peers->id);
    if (rc == 0 && (reloc_shrinks(s, mode, rb) || g.nrepl > 0)) rc = recall(n, g.table, e);
    /* collective on every node (cr_replica.h): replicated keys start from their home rows */
    if (rc == 0 && (g.nrepl > 0 || s->dir->nrepl > 0)) rc = cr_replicas_set(n->replicas, g.table, keys, g.nrepl, e);
    if (rc == 0) {
        atomic_store(&s->dir->mode, mode);
        cr_dir_set_replicated(s, keys, g.nrepl);
        free(s->reloc);
        s->reloc = rb;
        s->nreloc = rb ? g.nreloc : 0;
        rb = NULL;
        ack(n);
    }
    free(rb);
    free(keys);
    return rc;
}

/* ---------- counting accesses (docs/management.md, Counters) ---------- */

/* A zeroed sketch for table `id` of s: the same shape and seed on every
 * node and worker, so that they merge. */
static cr_sketch *counts_sketch(cr_node_ctl *n, int id, const cr_shard *s, cr_err *e) {
    uint64_t seed = cr_mix64(n->peers->seed ^ (0x5ce7c4ull << 20) ^ (uint64_t)id);
    /* tables of at most CR_COUNTS_EXACT_KEYS keys are counted exactly (a
     * sketch as wide as keys / depth is one counter per key): 1.4 ns per
     * key against 8 to 13 for count-min, and no error; 512 KiB per worker */
    int64_t keys = s->def.keys, width = CR_SKETCH_DEFAULT_WIDTH;
    if (keys <= CR_COUNTS_EXACT_KEYS) /* a power of two, as sketches take */
        while (width * CR_SKETCH_DEFAULT_DEPTH < keys) width *= 2;
    return cr_sketch_new(keys, (int)width, CR_SKETCH_DEFAULT_DEPTH, CR_SKETCH_DEFAULT_TOPK, seed, e);
}

/* (Re)start counting: fresh sketches, one per local worker. */
static int counts_on(cr_node_ctl *n, int id, cr_shard *s, cr_err *e) {
    cr_counts *c = cr_xcalloc(1, sizeof *c + (size_t)n->peers->wpn * sizeof c->sk[0]);
    for (c->nw = 0; c->nw < n->peers->wpn; c->nw++)
        if (!(c->sk[c->nw] = counts_sketch(n, id, s, e))) {
            for (int i = 0; i < c->nw; i++) cr_sketch_destroy(&c->sk[i]);
            free(c);
            return -1;
        }
    cr_shard_counts_free(s);
    atomic_store(&s->counts, c);
    return 0;
}

/* The node's workers' sketches merged (they may be counting meanwhile),
 * answered as COUNTS DATA. */
static int counts_read(cr_node_ctl *n, int id, cr_shard *s, cr_err *e) {
    cr_counts *c = atomic_load(&s->counts);
    if (!c)
        return cr_errf(e, "counts: accesses to table '%s' are not counted (start with count(id, true))", s->def.name);
    cr_sketch *sum = counts_sketch(n, id, s, e);
    if (!sum) return -1;
    for (int i = 0; i < c->nw; i++)
        if (cr_sketch_merge(sum, c->sk[i], e) < 0) {
            cr_sketch_destroy(&sum);
            return -1;
        }
    size_t cap = cr_sketch_wire_size(sum);
    void *buf = cr_xmalloc(cap);
    size_t len = cr_sketch_write(sum, buf, cap);
    cr_sketch_destroy(&sum);
    cr_msg_counts a = {.table = id, .op = CR_COUNTS_DATA, .node = n->peers->id, .data = buf, .n = len};
    cr_proto_msg out;
    int rc = len ? cr_proto_encode_counts(&a, &out, e) : cr_errf(e, "counts: table '%s': sketch not written", s->def.name);
    if (rc == 0) up(n, &out);
    free(buf);
    return rc;
}

static int on_counts(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    cr_msg_counts c;
    if (cr_proto_decode_counts(m, &c, e) < 0) return -1;
    if (c.op == CR_COUNTS_DATA) return cr_errf(e, "COUNTS: a node does not take counts");
    cr_shard *s = table_of(n, c.table, e);
    if (!s || (c.op == CR_COUNTS_ON && cr_shard_need_range(s, "counting accesses", e) < 0)) return -1;
    if (c.op == CR_COUNTS_READ) return counts_read(n, c.table, s, e);
    if (c.op == CR_COUNTS_ON && counts_on(n, c.table, s, e) < 0) return -1;
    if (c.op == CR_COUNTS_OFF) cr_shard_counts_free(s);
    ack(n);
    return 0;
}

/* ",sampling={drawn=...,postponed=...}" for stats. */
static size_t put_samp(char *b, size_t cap, const cr_sampling_stats *t) {
    return (size_t)snprintf(b, cap, ",sampling={drawn=%llu,served_local=%llu,served_pooled=%llu,remote=%llu,reused=%llu,postponed=%llu,localized=%llu}",
                            (unsigned long long)t->drawn, (unsigned long long)t->local,
                            (unsigned long long)t->pooled, (unsigned long long)t->remote,
                            (unsigned long long)t->reused, (unsigned long long)t->postponed,
                            (unsigned long long)t->localized);
}

/* ",access={...},relocation={...}" for stats: accesses by technique (keys)
 * and the relocation protocol's traffic, with the rows held and away. */
static size_t put_manage(cr_node_ctl *n, char *b, size_t cap) {
    long long held = 0, away = 0;
    for (int i = 0; i < cr_shards_count(n->shards); i++) {
        held += atomic_load(&n->shards->t[i]->dir->held);
        away += atomic_load(&n->shards->t[i]->dir->away);
    }
    return cr_counters_put_access(n->cnt, held, away, b, cap);
}

/* name as the body of a Lua string literal (every byte not alphanumeric
 * or '_' as \ddd). */
static void lua_quoted(const char *name, char *out, size_t cap) {
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && o + 5 < cap; p++) {
        if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_')
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\%03u", (unsigned)*p);
    }
    out[o] = '\0';
}

/* ",sparse={[name]={rows=,bytes=},...}": what each sparse table stores here. */
static size_t put_sparse(cr_node_ctl *n, char *b, size_t cap) {
    size_t len = (size_t)snprintf(b, cap, ",sparse={");
    for (int i = 0; i < cr_shards_count(n->shards) && len < cap; i++) {
        cr_shard *s = n->shards->t[i];
        if (!s->sp) continue;
        char q[CR_TABLE_NAME_MAX * 4 + 1];
        lua_quoted(s->def.name, q, sizeof q);
        len += (size_t)snprintf(b + len, cap - len, "[\"%s\"]={rows=%lld,bytes=%zu},", q,
                                (long long)atomic_load(&s->sp_rows), cr_shard_sparse_bytes(s));
    }
    if (len < cap) len += (size_t)snprintf(b + len, cap - len, "}");
    return len < cap ? len : cap;
}

/* ",workers={...}": each local worker's clocks, operations and samplers;
 * their samplers' sum into *sum. */
static size_t put_workers(cr_node_ctl *n, char *b, size_t cap, cr_sampling_stats *sum) {
    size_t len = (size_t)snprintf(b, cap, ",workers={");
    for (int i = 0; i < n->peers->wpn; i++) {
        cr_clock_stat c;
        cr_sampling_stats st;
        cr_clocks_stat(n->clk, i, &c);
        cr_dists_stats(n->samp, i, &st);
        len += (size_t)snprintf(b + len, cap - len,
                                "{worker=%d,node=%d,clock=%lld,barriers=%lld,wait=%.6f,max_gap=%lld",
                                cr_peers_gw(n->peers, i), n->peers->id, (long long)c.clock, (long long)c.barrier,
                                c.wait_s, (long long)c.max_gap);
        len += cr_counters_put_worker(n->cnt, i, b + len, cap - len);
        len += put_samp(b + len, cap - len, &st);
        len += (size_t)snprintf(b + len, cap - len, "},");
        cr_sampling_stats_add(sum, &st);
    }
    return len + (size_t)snprintf(b + len, cap - len, "}");
}

/* The node's counters and each local worker's, as a serialized Lua table. */
static int on_stats(cr_node_ctl *n, const cr_proto_msg *m, cr_err *e) {
    if (cr_proto_decode_empty(m, e) < 0) return -1;
    int nt = cr_shards_count(n->shards);
    size_t cap = 3072 + (size_t)n->peers->wpn * 400 + (size_t)nt * (4 * CR_TABLE_NAME_MAX + 64) +
                 cr_pfilter_stats_room(nt), len = 0;
    char *b = cr_xmalloc(cap);
    len += (size_t)snprintf(b + len, cap - len, "{node=%d,", n->peers->id);
    len += cr_counters_put_traffic(n->cnt, b + len, cap - len);
    cr_sampling_stats sum = {0};
    len += put_workers(n, b + len, cap - len, &sum);
    len += put_samp(b + len, cap - len, &sum);
    len += put_manage(n, b + len, cap - len);
    len += put_sparse(n, b + len, cap - len);
    len += cr_pfilter_stats_put(n->filt, n->shards->t, nt, b + len, cap - len);
    cr_replica_stats rs;
    cr_replicas_stats(n->replicas, &rs);
    int rn = cr_replicas_stats_put(&rs, b + len, cap - len);
    if (rn > 0 && (size_t)rn < cap - len) len += (size_t)rn;
    len += (size_t)snprintf(b + len, cap - len, "}");
    cr_proto_msg out;
    cr_msg_reply r = {.worker = -1, .data = b, .n = len};
    cr_proto_encode_reply(CR_M_REPLY, &r, &out, NULL);
    up(n, &out);
    free(b);
    return 0;
}

static const handler_fn handlers[] = {
    [CR_M_HB] = on_hb,           [CR_M_SHUTDOWN] = on_shutdown, [CR_M_TABLE] = on_table,
    [CR_M_MODEL] = on_model,     [CR_M_CALL] = on_call,         [CR_M_CANCEL] = on_cancel,
    [CR_M_POLICY] = on_policy,   [CR_M_CLOCKS] = on_clocks,     [CR_M_SETCLOCKS] = on_setclocks,
    [CR_M_SETLR] = on_setlr,     [CR_M_GETROWS] = on_getrows,   [CR_M_SETROWS] = on_setrows,
    [CR_M_STATS] = on_stats,     [CR_M_ERROR] = on_error,       [CR_M_DIST] = on_dist,
    [CR_M_SAMPLING] = on_sampling, [CR_M_MANAGE] = on_manage,   [CR_M_COUNTS] = on_counts,
};
#define NHANDLERS ((int)(sizeof handlers / sizeof handlers[0]))

int cr_node_ctl_handle(void *ctx, cr_parts *p) {
    cr_node_ctl *n = ctx;
    cr_proto_msg m;
    cr_err e;
    int rc;
    if (cr_proto_view(p, 0, &m, &e) < 0) {
        rc = -1;
    } else if (m.h.type <= 0 || m.h.type >= NHANDLERS || !handlers[m.h.type]) {
        rc = cr_errf(&e, "node %d does not take %s messages", n->peers->id, cr_proto_name(m.h.type));
    } else {
        rc = handlers[m.h.type](n, &m, &e);
    }
    if (rc < 0) cr_link_error(n->link, e.msg);
    return rc == 1;
}
