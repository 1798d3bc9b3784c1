#include "ps/cr_wsample.h"

#include "ps/cr_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "ps/cr_node_impl.h"

/* Rows of keys held elsewhere, being pulled into `rows`; or, on a
 * relocating table, keys being moved here (rows NULL: a localize, read
 * through the router once it is done). Referred to by the sampler (until
 * it releases the ticket) and by asynchronous pulls still to copy from it. */
typedef struct fetch {
    uint32_t req; /* the client's request (0: complete) */
    int done;
    uint64_t tested; /* the pull (cr_wsample.pulls) that last found it not in */
    float *rows;
    int64_t refs;
} fetch;

/* One sampler: of distribution `dist`, made under scheme generation gen. */
typedef struct samp {
    uint32_t serial;
    int dist;
    uint64_t gen;
    int retired;
    int pools;     /* level 2 or 3: fetches fill bounded pools */
    int localizes; /* 1 once a fetch of this sampler localized instead of copying */
    cr_sampler *s;
    cr_shard *t;
    struct cr_wsample *w;
} samp;

/* A row an asynchronous pull still has to copy: row `row` of the caller's
 * buffer is row `slot` of fetch f, or (slot -1, a localizing fetch) the
 * row of `key` read through the router once f is done. */
typedef struct late_row {
    int64_t row, slot, key;
    fetch *f;
} late_row;

typedef struct pend {
    uint32_t id;
    cr_shard *t; /* the table (rows read through its router at the finish) */
    float *rows;
    int32_t dim;
    late_row *r;
    int64_t n;
} pend;

struct cr_wsample {
    cr_node *n;
    int lw, gw;
    cr_wclient *wc;
    samp **sp;
    int nsp, capsp;
    uint32_t next_serial, next_pend;
    pend **pd;
    int npd, cappd;
    cr_sample *buf; /* scratch: one pull's samples */
    int64_t capbuf;
    int64_t nfetch;
    int64_t *rkey, *rat, caprd; /* scratch: keys read through the router, their rows' positions */
    float *rrow;                /* scratch: those rows */
    int64_t caprrow;
    uint64_t localized;         /* keys sampling localized instead of fetching copies */
    uint64_t pulls;             /* pull_in calls: a fetch found not in is not tested again in the same pull */
    cr_sampling_stats gone; /* counters of freed samplers */
    char err[CR_ERR_MAX];   /* an error met inside a callback, raised at the next call */
};

/* ---- fetches: the sampler's io ------------------------------------------ */

static void fetch_unref(cr_wsample *w, fetch *f) {
    if (--f->refs > 0) return;
    if (!f->done) cr_wclient_forget(w->wc, f->req); /* a late reply is then ignored */
    free(f->rows);
    free(f);
    w->nfetch--;
}

/* On a relocating table a bounded pool's fetch (levels 2 and 3) moves the
 * keys here (docs/management.md) instead of copying their rows: the pulls
 * then read them through the router, from this node's shard while they
 * stay, through all the pool's passes. A level-1 handle's fetch is for
 * one use of each key: it copies (a move for one read would cost more and
 * keep the row away from a node that may want it). */
static int io_fetch(void *ctx, const int64_t *keys, int64_t n, uint64_t *ticket, cr_err *e) {
    samp *sp = ctx;
    cr_wsample *w = sp->w;
    fetch *f = cr_xcalloc(1, sizeof *f);
    int loc = sp->pools && cr_dir_relocating(sp->t);
    if (!loc) f->rows = cr_xmalloc((size_t)n * (size_t)sp->t->def.dim * sizeof(float));
    f->refs = 1;
    w->nfetch++;
    if (loc) {
        sp->localizes = 1;
        w->localized += (uint64_t)n;
    }
    if ((loc ? cr_wclient_localize(w->wc, sp->t, keys, n, &f->req, e)
             : cr_wclient_prefetch(w->wc, sp->t, keys, n, f->rows, &f->req, e)) < 0) {
        fetch_unref(w, f);
        return -1;
    }
    f->done = f->req == 0;
    *ticket = (uint64_t)(uintptr_t)f;
    return 0;
}

/* 1 when f's rows are in. A reply error is kept for the next call. */
static int fetch_test(cr_wsample *w, fetch *f) {
    if (f->done) return 1;
    cr_err e;
    int rc = cr_wclient_test(w->wc, f->req, &e);
    if (rc < 0) {
        if (!w->err[0]) snprintf(w->err, sizeof w->err, "%s", e.msg);
        return 1; /* the pull goes on to wait, which fails */
    }
    return f->done = rc;
}

static int fetch_wait(cr_wsample *w, fetch *f, cr_err *e) {
    if (f->done) return 0;
    if (cr_wclient_wait(w->wc, f->req, e) < 0) return -1;
    f->done = 1;
    return 0;
}

static int io_ready(void *ctx, uint64_t ticket) {
    samp *sp = ctx;
    return fetch_test(sp->w, (fetch *)(uintptr_t)ticket);
}

static void io_release(void *ctx, uint64_t ticket) {
    samp *sp = ctx;
    fetch_unref(sp->w, (fetch *)(uintptr_t)ticket);
}

/* ---- samplers -------------------------------------------------------- */

cr_wsample *cr_wsample_new(cr_node *n, int lw, cr_wclient *wc) {
    cr_wsample *w = cr_xcalloc(1, sizeof *w);
    w->n = n;
    w->lw = lw;
    w->gw = cr_peers_gw(&n->peers, lw);
    w->wc = wc;
    w->next_serial = 1;
    w->next_pend = 1;
    return w;
}

static void samp_free(cr_wsample *w, int i) {
    samp *sp = w->sp[i];
    cr_sampling_stats st;
    cr_sampler_stats(sp->s, &st);
    cr_sampling_stats_add(&w->gone, &st);
    cr_sampler_destroy(&sp->s);
    free(sp);
    w->sp[i] = w->sp[--w->nsp];
}

/* Free retired samplers that serve no handle any more. */
static void sweep(cr_wsample *w) {
    for (int i = w->nsp - 1; i >= 0; i--)
        if (w->sp[i]->retired && cr_sampler_handles(w->sp[i]->s) == 0) samp_free(w, i);
}

void cr_wsample_stats(const cr_wsample *w, cr_sampling_stats *out) {
    *out = w->gone;
    for (int i = 0; i < w->nsp; i++) {
        cr_sampling_stats st;
        cr_sampler_stats(w->sp[i]->s, &st);
        cr_sampling_stats_add(out, &st);
    }
    out->localized += w->localized;
}

int64_t cr_wsample_fetches(const cr_wsample *w) { return w->nfetch; }

/* Publish the totals to the node (job:stats). */
static void report(cr_wsample *w) {
    cr_sampling_stats st;
    cr_wsample_stats(w, &st);
    cr_dists_set_stats(&w->n->samp, w->lw, &st);
}

void cr_wsample_destroy(cr_wsample **wp) {
    cr_wsample *w = wp ? *wp : NULL;
    if (!w) return;
    for (int i = 0; i < w->npd; i++) {
        for (int64_t k = 0; k < w->pd[i]->n; k++) fetch_unref(w, w->pd[i]->r[k].f);
        free(w->pd[i]->r);
        free(w->pd[i]);
    }
    while (w->nsp > 0) samp_free(w, w->nsp - 1);
    free(w->rkey);
    free(w->rat);
    free(w->rrow);
    free(w->pd);
    free(w->sp);
    free(w->buf);
    free(w);
    *wp = NULL;
}

static int find_dist(cr_node *n, const char *name) {
    int k = cr_dists_count(&n->samp);
    for (int i = 0; i < k; i++)
        if (!strcmp(n->samp.d[i]->name, name)) return i;
    return -1;
}

static int no_dist(cr_node *n, const char *name, cr_err *e) {
    char list[CR_ERR_MAX / 2] = "";
    size_t len = 0;
    int k = cr_dists_count(&n->samp);
    for (int i = 0; i < k && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", n->samp.d[i]->name);
    if (k == 0) return cr_errf(e, "prepare_sample: no distribution '%s' (none declared: job:distribution{...})", name);
    return cr_errf(e, "prepare_sample: no distribution '%s' (declared: %s)", name, list);
}

/* The sampler's "is key k local": its row is on this node now. On a table
 * that is not relocating, its home range; on a relocating one, a key whose
 * row is here (home and present, or relocated here) or that is replicated
 * (the router serves it from the replica), looked at under its stripe lock.
 * A key may move between the draw and the pull: pulls of local samples go
 * through the router, which finds it wherever it is. */
static int held_here(void *ctx, int64_t k) {
    cr_shard *t = ctx;
    if (!cr_dir_relocating(t)) return cr_dir_is_home(t, k);
    if (cr_dir_tech(t, k) == CR_TECH_REPLICATE) return 1;
    pthread_mutex_t *m = &t->locks[(uint64_t)k % CR_SHARD_STRIPES];
    float *st;
    pthread_mutex_lock(m);
    int here = cr_dir_row(t, k, &st) != NULL;
    pthread_mutex_unlock(m);
    return here;
}

/* The configuration of distribution d under the node's scheme (an entry
 * naming d, else one naming its table, else the default), and its generation. */
static void scheme_conf(cr_node *n, const cr_dist *d, cr_shard *t, cr_sampling_conf *c, uint64_t *gen) {
    cr_sampling_conf_default(c, CR_SAMPLING_CONFORM);
    cr_sampling_entry x;
    if (cr_dists_entry(&n->samp, d->name, t->def.name, &x, gen)) {
        c->level = (int)x.level;
        c->pool = x.pool;
        c->reuse = x.reuse;
        c->postpone = x.postpone != 0;
    }
    c->local_lo = t->lo < t->hi ? t->lo : 0;
    c->local_hi = t->lo < t->hi ? t->hi : 0;
    c->is_local = held_here;
    c->local_ctx = t;
}

/* A new sampler for distribution di under the node's current scheme. */
static samp *samp_new(cr_wsample *w, int di, cr_shard *t, cr_err *e) {
    const cr_dist *d = w->n->samp.d[di];
    cr_sampling_conf c;
    uint64_t gen;
    scheme_conf(w->n, d, t, &c, &gen);
    if (c.level == CR_SAMPLING_LOCAL && d->local.m == 0)
        return cr_errf(e, "prepare_sample: '%s' at level 4 (local): %s", d->name, d->local_err), NULL;
    samp *sp = cr_xcalloc(1, sizeof *sp);
    sp->serial = w->next_serial++;
    if (w->next_serial == 0) w->next_serial = 1;
    sp->dist = di;
    sp->gen = gen;
    sp->pools = c.level == CR_SAMPLING_BOUNDED || c.level == CR_SAMPLING_LONGTERM;
    sp->t = t;
    sp->w = w;
    cr_sampling_io io = {.ctx = sp, .fetch = io_fetch, .ready = io_ready, .release = io_release};
    /* a stream of its own per worker, distribution and sampler */
    uint64_t stream = cr_mix64(((uint64_t)w->gw << 40) ^ ((uint64_t)di << 32) ^ sp->serial);
    sp->s = cr_sampler_new(&d->pi, &d->local, &c, &io, w->n->peers.seed, stream, e);
    if (!sp->s) {
        free(sp);
        return NULL;
    }
    if (w->nsp == w->capsp) {
        w->capsp = w->capsp ? 2 * w->capsp : 4;
        w->sp = cr_xrealloc(w->sp, (size_t)w->capsp * sizeof *w->sp);
    }
    w->sp[w->nsp++] = sp;
    return sp;
}

/* The sampler to prepare from: the current one of distribution di, unless
 * the scheme changed since it was made (then it retires). */
static samp *current(cr_wsample *w, int di, cr_shard *t, cr_err *e) {
    uint64_t gen;
    gen = cr_dists_gen(&w->n->samp);
    for (int i = 0; i < w->nsp; i++) {
        samp *sp = w->sp[i];
        if (sp->retired || sp->dist != di) continue;
        if (sp->gen == gen) return sp;
        sp->retired = 1;
    }
    sweep(w);
    return samp_new(w, di, t, e);
}

/* An error a callback met (a refused fetch) fails the next call. */
static int pending_error(cr_wsample *w, cr_err *e) {
    if (!w->err[0]) return 0;
    cr_errf(e, "%s", w->err);
    w->err[0] = '\0';
    return -1;
}

static int prepare_in(cr_wsample *w, cr_shard *t, const char *dist, int64_t n, cr_shandle *h, cr_err *e) {
    if (pending_error(w, e) < 0) return -1;
    if (n < 0 || n > CR_WSAMPLE_MAX_N)
        return cr_errf(e, "prepare_sample: bad number of samples %lld (0 to %d in one handle)", (long long)n,
                       CR_WSAMPLE_MAX_N);
    int di = find_dist(w->n, dist);
    if (di < 0) return no_dist(w->n, dist, e);
    const cr_dist *d = w->n->samp.d[di];
    cr_shard *dt = cr_node_table_at(w->n, d->table, NULL);
    if (dt != t)
        return cr_errf(e, "prepare_sample: distribution '%s' is over table '%s', not table '%s'", dist,
                       dt ? dt->def.name : "?", t->def.name);
    samp *sp = current(w, di, t, e);
    if (!sp) return -1;
    int rc = cr_sampler_prepare(sp->s, n, &h->id, e);
    h->sampler = sp->serial;
    report(w);
    return rc;
}

static samp *find_samp(cr_wsample *w, uint32_t serial) {
    for (int i = 0; i < w->nsp; i++)
        if (w->sp[i]->serial == serial) return w->sp[i];
    return NULL;
}

int64_t cr_wsample_left(cr_wsample *w, cr_shandle h) {
    samp *sp = find_samp(w, h.sampler);
    return sp ? cr_sampler_left(sp->s, h.id) : -1;
}

void cr_wsample_close(cr_wsample *w, cr_shandle h) {
    samp *sp = find_samp(w, h.sampler);
    if (sp) {
        cr_sampler_close(sp->s, h.id);
        cr_sampler_flush(sp->s);
    }
    sweep(w);
}

/* ---- pulls ---------------------------------------------------------------- */

static pend *new_pend(cr_wsample *w, cr_shard *t, float *rows, int64_t m) {
    if (w->npd == w->cappd) {
        w->cappd = w->cappd ? 2 * w->cappd : 4;
        w->pd = cr_xrealloc(w->pd, (size_t)w->cappd * sizeof *w->pd);
    }
    pend *p = cr_xcalloc(1, sizeof *p);
    p->id = w->next_pend++;
    if (w->next_pend == 0) w->next_pend = 1;
    p->t = t;
    p->rows = rows;
    p->dim = t->def.dim;
    p->r = cr_xmalloc((size_t)(m ? m : 1) * sizeof *p->r);
    w->pd[w->npd++] = p;
    return p;
}

/* Rows of home keys go through the router when the table is not plain
 * classic: a relocated key may be away, and a replicated key is read from
 * this node's replica (the home row lags it by sync rounds, and misses the
 * worker's own pushes until then). */
static inline int routed(const cr_shard *t) { return cr_dir_relocating(t) || t->dir->repl; }

/* Whether f's rows are in, testing the client at most once per pull: the
 * samples of one fetch are many (thousands per batch for KGE's negatives),
 * and each test polls the client's socket (a system call); testing every
 * sample made an asynchronous pull on 2 nodes take 9 ms a batch against 2
 * on one. */
static int ready_now(cr_wsample *w, fetch *f) {
    if (f->done) return 1;
    if (f->tested == w->pulls) return 0;
    f->tested = w->pulls;
    return fetch_test(w, f);
}

/* Copy the row of sample x into out: from the shard, from its fetch if it
 * has arrived (or once it has, when waiting), or later (p: an async pull). */
static int place_row(cr_wsample *w, cr_shard *t, const cr_sample *x, float *out, int64_t row, int64_t m,
                     pend **p, int async, cr_err *e) {
    size_t dim = (size_t)t->def.dim;
    if (x->ticket == CR_SAMPLE_LOCAL) /* a home key: through the router when not plain classic */
        return routed(t) ? cr_wclient_pull_borrow(w->wc, t, &x->key, 1, out + (size_t)row * dim, e)
                                    : (cr_shard_pull(t, &x->key, 1, out + (size_t)row * dim), 0);
    fetch *f = (fetch *)(uintptr_t)x->ticket;
    if (async && !ready_now(w, f)) {
        if (!*p) *p = new_pend(w, t, out, m);
        (*p)->r[(*p)->n++] = (late_row){row, x->slot, x->key, f};
        f->refs++;
        return 0;
    }
    if (fetch_wait(w, f, e) < 0) return -1;
    memcpy(out + (size_t)row * dim, f->rows + (size_t)x->slot * dim, dim * sizeof(float));
    return 0;
}

/* ---- pulls through the router (a relocating table) ----------------------- */

static void reserve_routed(cr_wsample *w, int64_t n, size_t dim) {
    if (n > w->caprd) {
        w->caprd = n > 2 * w->caprd ? n : 2 * w->caprd;
        free(w->rkey);
        free(w->rat);
        w->rkey = cr_xmalloc((size_t)w->caprd * sizeof *w->rkey);
        w->rat = cr_xmalloc((size_t)w->caprd * sizeof *w->rat);
    }
    if ((int64_t)((size_t)n * dim) > w->caprrow) {
        w->caprrow = (int64_t)((size_t)n * dim);
        free(w->rrow);
        w->rrow = cr_xmalloc((size_t)w->caprrow * sizeof *w->rrow);
    }
}

/* Rows of w->rkey[0..n) read through the router in one batch (shared memory
 * for keys here, one request per home for the others) into rows at
 * positions w->rat[0..n); all m rows in key order go straight. */
static int read_routed(cr_wsample *w, cr_shard *t, int64_t n, int64_t m, float *rows, cr_err *e) {
    size_t dim = (size_t)t->def.dim;
    if (n == 0) return 0;
    if (n == m) return cr_wclient_pull_borrow(w->wc, t, w->rkey, n, rows, e);
    if (cr_wclient_pull_borrow(w->wc, t, w->rkey, n, w->rrow, e) < 0) return -1;
    for (int64_t i = 0; i < n; i++)
        memcpy(rows + (size_t)w->rat[i] * dim, w->rrow + (size_t)i * dim, dim * sizeof(float));
    return 0;
}

/* The m samples in w->buf on a table that relocates (or whose sampler
 * localized): rows of fetched copies are copied as before (place_row);
 * every other sample (a key here at its draw, or one its fetch moved
 * here) is read through the router, all in one batch, once its localize
 * is done; an async pull leaves those not done yet to cr_wsample_finish. */
static int pull_routed(cr_wsample *w, cr_shard *t, int64_t m, float *rows, pend **p, int async, cr_err *e) {
    int64_t n = 0;
    reserve_routed(w, m, (size_t)t->def.dim);
    for (int64_t i = 0; i < m; i++) {
        const cr_sample *x = &w->buf[i];
        fetch *f = x->ticket == CR_SAMPLE_LOCAL ? NULL : (fetch *)(uintptr_t)x->ticket;
        if (f && f->rows) {
            if (place_row(w, t, x, rows, i, m, p, async, e) < 0) return -1;
            continue;
        }
        if (f && async && !fetch_test(w, f)) {
            if (!*p) *p = new_pend(w, t, rows, m);
            (*p)->r[(*p)->n++] = (late_row){i, -1, x->key, f};
            f->refs++;
            continue;
        }
        if (f && fetch_wait(w, f, e) < 0) return -1;
        w->rkey[n] = x->key;
        w->rat[n++] = i;
    }
    return read_routed(w, t, n, m, rows, e);
}

static int closed_handle(cr_err *e) {
    return cr_errf(e, "pull_sample: the handle is closed (all its samples were pulled, or it was closed)");
}

static int pull_in(cr_wsample *w, cr_shard *t, cr_shandle h, int64_t m, int64_t *keys, float *rows,
                   uint32_t *pend_id, cr_err *e) {
    if (pend_id) *pend_id = 0;
    if (pending_error(w, e) < 0) return -1;
    w->pulls++;
    samp *sp = find_samp(w, h.sampler);
    if (!sp || cr_sampler_left(sp->s, h.id) < 0) return closed_handle(e);
    if (sp->t != t)
        return cr_errf(e, "pull_sample: handle of table '%s' used with table '%s'", sp->t->def.name, t->def.name);
    if (m < 0 || m > cr_sampler_left(sp->s, h.id))
        return cr_errf(e, "pull_sample: the handle has %lld samples left, asked for %lld",
                       (long long)cr_sampler_left(sp->s, h.id), (long long)m);
    if (m > w->capbuf) {
        free(w->buf);
        w->capbuf = m > 2 * w->capbuf ? m : 2 * w->capbuf;
        w->buf = cr_xmalloc((size_t)w->capbuf * sizeof *w->buf);
    }
    if (cr_sampler_pull(sp->s, h.id, m, w->buf, e) < 0) return -1;
    pend *p = NULL;
    int rc = 0, all_local = 1;
    for (int64_t i = 0; i < m; i++) {
        keys[i] = w->buf[i].key;
        all_local &= w->buf[i].ticket == CR_SAMPLE_LOCAL;
    }
    int reloc = cr_dir_relocating(t) || sp->localizes;
    if (all_local && (reloc || routed(t))) rc = cr_wclient_pull_borrow(w->wc, t, keys, m, rows, e); /* moved, replicated */
    else if (all_local) cr_shard_pull(t, keys, m, rows); /* one call: rows grouped by lock stripe */
    else if (reloc) rc = pull_routed(w, t, m, rows, &p, pend_id != NULL, e);
    for (int64_t i = 0; i < m && rc == 0 && !all_local && !reloc; i++)
        rc = place_row(w, t, &w->buf[i], rows, i, m, &p, pend_id != NULL, e);
    if (p && rc == 0) *pend_id = p->id;
    else if (p) cr_wsample_finish(w, p->id, NULL); /* drops it */
    cr_sampler_flush(sp->s); /* the rows are copied: fetches no longer needed go now */
    sweep(w);
    report(w);
    return rc;
}

/* Accesses made for the sampler are not the worker's own (cause
 * "sampling"): what counts is the keys it hands out. */
int cr_wsample_prepare(cr_wsample *w, cr_shard *t, const char *dist, int64_t n, cr_shandle *h, cr_err *e) {
    int was = cr_wclient_cause(w->wc, CR_CAUSE_SAMPLING);
    int rc = prepare_in(w, t, dist, n, h, e);
    cr_wclient_cause(w->wc, was);
    return rc;
}

int cr_wsample_pull(cr_wsample *w, cr_shard *t, cr_shandle h, int64_t m, int64_t *keys, float *rows,
                    uint32_t *pend_id, cr_err *e) {
    int was = cr_wclient_cause(w->wc, CR_CAUSE_SAMPLING);
    int rc = pull_in(w, t, h, m, keys, rows, pend_id, e);
    cr_wclient_cause(w->wc, was);
    if (rc == 0) cr_wclient_count_sampled(w->wc, t, keys, m);
    return rc;
}

int cr_wsample_finish(cr_wsample *w, uint32_t id, cr_err *e) {
    int at = -1;
    for (int i = 0; i < w->npd; i++)
        if (w->pd[i]->id == id) at = i;
    if (at < 0) return cr_errf(e, "pull_sample: no asynchronous pull %u to wait for", id);
    pend *p = w->pd[at];
    w->pd[at] = w->pd[--w->npd];
    int rc = 0;
    size_t dim = (size_t)p->dim;
    int64_t nr = 0;
    reserve_routed(w, p->n, dim);
    for (int64_t k = 0; k < p->n; k++) {
        late_row *r = &p->r[k];
        if (rc == 0 && e) rc = fetch_wait(w, r->f, e);
        if (rc == 0 && e && r->slot < 0) { /* localized: read through the router below, in one batch */
            w->rkey[nr] = r->key;
            w->rat[nr++] = r->row;
        } else if (rc == 0 && e) {
            memcpy(p->rows + (size_t)r->row * dim, r->f->rows + (size_t)r->slot * dim, dim * sizeof(float));
        }
        fetch_unref(w, r->f);
    }
    if (rc == 0 && e && nr) rc = read_routed(w, p->t, nr, -1, p->rows, e);
    free(p->r);
    free(p);
    return rc;
}

void cr_wsample_drop_pulls(cr_wsample *w) {
    while (w->npd > 0) cr_wsample_finish(w, w->pd[w->npd - 1]->id, NULL);
}
