#include "ps/cr_wsample.h"

#include "ps/cr_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "ps/cr_node_impl.h"

/* Rows of keys held elsewhere, being pulled into `rows`. Referred to by the
 * sampler (until it releases the ticket) and by asynchronous pulls still to
 * copy from it. */
typedef struct fetch {
    uint32_t req; /* the client's request (0: complete) */
    int done;
    float *rows;
    int64_t refs;
} fetch;

/* One sampler: of distribution `dist`, made under scheme generation gen. */
typedef struct samp {
    uint32_t serial;
    int dist;
    uint64_t gen;
    int retired;
    cr_sampler *s;
    cr_shard *t;
    struct cr_wsample *w;
} samp;

/* A row an asynchronous pull still has to copy: row `row` of the caller's
 * buffer is row `slot` of fetch f. */
typedef struct late_row {
    int64_t row, slot;
    fetch *f;
} late_row;

typedef struct pend {
    uint32_t id;
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

static int io_fetch(void *ctx, const int64_t *keys, int64_t n, uint64_t *ticket, cr_err *e) {
    samp *sp = ctx;
    cr_wsample *w = sp->w;
    fetch *f = cr_xcalloc(1, sizeof *f);
    f->rows = cr_xmalloc((size_t)n * (size_t)sp->t->def.dim * sizeof(float));
    f->refs = 1;
    w->nfetch++;
    if (cr_wclient_pull_copy(w->wc, sp->t, keys, n, f->rows, &f->req, e) < 0) {
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
    w->gw = n->id * n->wpn + lw;
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
}

int64_t cr_wsample_fetches(const cr_wsample *w) { return w->nfetch; }

/* Publish the totals to the node (job:stats). */
static void report(cr_wsample *w) {
    cr_sampling_stats st;
    cr_wsample_stats(w, &st);
    pthread_mutex_lock(&w->n->mu);
    w->n->ws[w->lw].samp = st;
    pthread_mutex_unlock(&w->n->mu);
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
    free(w->pd);
    free(w->sp);
    free(w->buf);
    free(w);
    *wp = NULL;
}

static int find_dist(cr_node *n, const char *name) {
    int k = atomic_load(&n->ndists);
    for (int i = 0; i < k; i++)
        if (!strcmp(n->dists[i]->name, name)) return i;
    return -1;
}

static int no_dist(cr_node *n, const char *name, cr_err *e) {
    char list[CR_ERR_MAX / 2] = "";
    size_t len = 0;
    int k = atomic_load(&n->ndists);
    for (int i = 0; i < k && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", n->dists[i]->name);
    if (k == 0) return cr_errf(e, "prepare_sample: no distribution '%s' (none declared: job:distribution{...})", name);
    return cr_errf(e, "prepare_sample: no distribution '%s' (declared: %s)", name, list);
}

/* The configuration of distribution d under the node's scheme (an entry
 * naming d, else one naming its table, else the default), and its generation. */
static void scheme_conf(cr_node *n, const cr_dist *d, const cr_shard *t, cr_sampling_conf *c, uint64_t *gen) {
    cr_sampling_conf_default(c, CR_SAMPLING_CONFORM);
    pthread_mutex_lock(&n->mu);
    *gen = n->samp_gen;
    const cr_sampling_entry *x = NULL;
    for (int i = 1; i < n->nsamp && !x; i++)
        if (!strcmp(n->samp[i].name, d->name)) x = &n->samp[i];
    for (int i = 1; i < n->nsamp && !x; i++)
        if (!strcmp(n->samp[i].name, t->def.name)) x = &n->samp[i];
    if (!x && n->nsamp > 0) x = &n->samp[0];
    if (x) {
        c->level = (int)x->level;
        c->pool = x->pool;
        c->reuse = x->reuse;
        c->postpone = x->postpone != 0;
    }
    pthread_mutex_unlock(&n->mu);
    c->local_lo = t->lo < t->hi ? t->lo : 0;
    c->local_hi = t->lo < t->hi ? t->hi : 0;
}

/* A new sampler for distribution di under the node's current scheme. */
static samp *samp_new(cr_wsample *w, int di, cr_shard *t, cr_err *e) {
    const cr_dist *d = w->n->dists[di];
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
    sp->t = t;
    sp->w = w;
    cr_sampling_io io = {.ctx = sp, .fetch = io_fetch, .ready = io_ready, .release = io_release};
    /* a stream of its own per worker, distribution and sampler */
    uint64_t stream = cr_mix64(((uint64_t)w->gw << 40) ^ ((uint64_t)di << 32) ^ sp->serial);
    sp->s = cr_sampler_new(&d->pi, &d->local, &c, &io, w->n->seed, stream, e);
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
    pthread_mutex_lock(&w->n->mu);
    gen = w->n->samp_gen;
    pthread_mutex_unlock(&w->n->mu);
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
    const cr_dist *d = w->n->dists[di];
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

static pend *new_pend(cr_wsample *w, float *rows, int32_t dim, int64_t m) {
    if (w->npd == w->cappd) {
        w->cappd = w->cappd ? 2 * w->cappd : 4;
        w->pd = cr_xrealloc(w->pd, (size_t)w->cappd * sizeof *w->pd);
    }
    pend *p = cr_xcalloc(1, sizeof *p);
    p->id = w->next_pend++;
    if (w->next_pend == 0) w->next_pend = 1;
    p->rows = rows;
    p->dim = dim;
    p->r = cr_xmalloc((size_t)(m ? m : 1) * sizeof *p->r);
    w->pd[w->npd++] = p;
    return p;
}

/* Copy the row of sample x into out: from the shard, from its fetch if it
 * has arrived (or once it has, when waiting), or later (p: an async pull). */
static int place_row(cr_wsample *w, cr_shard *t, const cr_sample *x, float *out, int64_t row, int64_t m,
                     pend **p, int async, cr_err *e) {
    size_t dim = (size_t)t->def.dim;
    if (x->ticket == CR_SAMPLE_LOCAL) /* a home key: through the router when it may have moved away */
        return cr_dir_relocating(t) ? cr_wclient_pull_borrow(w->wc, t, &x->key, 1, out + (size_t)row * dim, e)
                                    : (cr_shard_pull(t, &x->key, 1, out + (size_t)row * dim), 0);
    fetch *f = (fetch *)(uintptr_t)x->ticket;
    if (async && !fetch_test(w, f)) {
        if (!*p) *p = new_pend(w, out, (int32_t)dim, m);
        (*p)->r[(*p)->n++] = (late_row){row, x->slot, f};
        f->refs++;
        return 0;
    }
    if (fetch_wait(w, f, e) < 0) return -1;
    memcpy(out + (size_t)row * dim, f->rows + (size_t)x->slot * dim, dim * sizeof(float));
    return 0;
}

static int closed_handle(cr_err *e) {
    return cr_errf(e, "pull_sample: the handle is closed (all its samples were pulled, or it was closed)");
}

static int pull_in(cr_wsample *w, cr_shard *t, cr_shandle h, int64_t m, int64_t *keys, float *rows,
                   uint32_t *pend_id, cr_err *e) {
    if (pend_id) *pend_id = 0;
    if (pending_error(w, e) < 0) return -1;
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
    if (all_local && cr_dir_relocating(t)) rc = cr_wclient_pull_borrow(w->wc, t, keys, m, rows, e); /* moved keys */
    else if (all_local) cr_shard_pull(t, keys, m, rows); /* one call: rows grouped by lock stripe */
    for (int64_t i = 0; i < m && rc == 0 && !all_local; i++)
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
    for (int64_t k = 0; k < p->n; k++) {
        late_row *r = &p->r[k];
        if (rc == 0 && e) rc = fetch_wait(w, r->f, e);
        if (rc == 0 && e) memcpy(p->rows + (size_t)r->row * dim, r->f->rows + (size_t)r->slot * dim, dim * sizeof(float));
        fetch_unref(w, r->f);
    }
    free(p->r);
    free(p);
    return rc;
}
