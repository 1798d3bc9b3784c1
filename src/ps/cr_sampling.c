#include "ps/cr_sampling.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

/* A fetch the sampler asked for and how many things still refer to it:
 * unpulled samples of handles, plus one while a pool owns it. */
typedef struct fetchref {
    uint64_t ticket;
    int64_t refs;
} fetchref;

/* G draws from pi, traversed U times. slot[i] is the row of keys[i] in the
 * pool's fetch (-1: local). perm is the current pass's order. */
typedef struct pool {
    int64_t *keys, *slot;
    uint64_t *perm;
    uint64_t draw0;  /* serial number of keys[0]'s draw */
    uint64_t ticket; /* CR_SAMPLE_LOCAL when every key is local */
    int64_t pos;     /* next position in perm */
    uint32_t pass;   /* passes started so far - 1 */
} pool;

/* A prepared handle: samples [head, tail) are still to be served. At level
 * 3 the array has room for n + n so that each sample can be moved to the
 * end once (postponing) without shifting the others. */
typedef struct handle {
    uint32_t id;
    cr_sample *s;
    int64_t head, tail, cap;
} handle;

struct cr_sampler {
    cr_sampling_conf c;
    const cr_alias *pi, *local_pi;
    cr_sampling_io io;
    cr_rng rng;
    uint64_t draws;
    int pools_live;
    pool cur, next;
    handle **h;
    int64_t nh, caph;
    uint32_t next_id;
    fetchref *f;
    int64_t nf, capf;
    uint64_t *retire; /* tickets released at the start of the next call */
    int64_t nr, capr;
    cr_sampling_stats st;
};

void cr_sampling_conf_default(cr_sampling_conf *c, cr_sampling_level level) {
    memset(c, 0, sizeof *c);
    c->level = (int)level;
    c->pool = CR_SAMPLING_POOL_DEFAULT;
    c->reuse = CR_SAMPLING_REUSE_DEFAULT;
    c->postpone = level == CR_SAMPLING_LONGTERM;
}

int cr_sampling_conf_check(const cr_sampling_conf *c, cr_err *e) {
    if (c->level < CR_SAMPLING_CONFORM || c->level > CR_SAMPLING_LOCAL)
        return cr_errf(e, "sampling: unknown level %d (1 conform, 2 bounded, 3 longterm, 4 local)", c->level);
    if (c->pool < 1) return cr_errf(e, "sampling: pool size must be at least 1 (got %lld)", (long long)c->pool);
    if (c->reuse < 1)
        return cr_errf(e, "sampling: reuse count must be at least 1 (got %lld)", (long long)c->reuse);
    if (c->postpone && c->level != CR_SAMPLING_LONGTERM)
        return cr_errf(e, "sampling: postponing needs level 3 (longterm): it breaks level %d", c->level);
    if (c->local_lo < 0 || c->local_lo > c->local_hi)
        return cr_errf(e, "sampling: bad local key range [%lld, %lld)", (long long)c->local_lo,
                       (long long)c->local_hi);
    return 0;
}

static int is_local(const cr_sampler *s, int64_t k) {
    if (s->c.is_local) return s->c.is_local(s->c.local_ctx, k);
    return k >= s->c.local_lo && k < s->c.local_hi;
}

/* ---- fetch references ---------------------------------------------- */

static fetchref *find_fetch(cr_sampler *s, uint64_t ticket) {
    for (int64_t i = 0; i < s->nf; i++)
        if (s->f[i].ticket == ticket) return &s->f[i];
    return NULL;
}

static void ref_fetch(cr_sampler *s, uint64_t ticket, int64_t by) {
    if (ticket == CR_SAMPLE_LOCAL) return;
    fetchref *r = find_fetch(s, ticket);
    if (!r) {
        if (s->nf == s->capf) {
            s->capf = s->capf ? 2 * s->capf : 8;
            s->f = cr_xrealloc(s->f, (size_t)s->capf * sizeof *s->f);
        }
        r = &s->f[s->nf++];
        r->ticket = ticket;
        r->refs = 0;
    }
    r->refs += by;
}

/* Drop one reference; the last one queues the ticket for release. Why
 * queued: the caller still reads the rows of the samples just pulled. */
static void unref_fetch(cr_sampler *s, uint64_t ticket) {
    if (ticket == CR_SAMPLE_LOCAL) return;
    fetchref *r = find_fetch(s, ticket);
    if (!r || --r->refs > 0) return;
    *r = s->f[--s->nf];
    if (s->nr == s->capr) {
        s->capr = s->capr ? 2 * s->capr : 8;
        s->retire = cr_xrealloc(s->retire, (size_t)s->capr * sizeof *s->retire);
    }
    s->retire[s->nr++] = ticket;
}

static void flush_retired(cr_sampler *s) {
    for (int64_t i = 0; i < s->nr; i++)
        if (s->io.release) s->io.release(s->io.ctx, s->retire[i]);
    s->nr = 0;
}

/* Fetch the non-local keys among keys[0 .. n): slot[i] gets the row of
 * keys[i] in the fetch or -1 if local; *ticket the fetch (CR_SAMPLE_LOCAL
 * when nothing was needed). The fetch starts with no reference. */
static int fetch_keys(cr_sampler *s, const int64_t *keys, int64_t n, int64_t *slot, uint64_t *ticket,
                      cr_err *e) {
    int64_t *far = cr_xmalloc((size_t)(n ? n : 1) * sizeof *far), nfar = 0;
    for (int64_t i = 0; i < n; i++) {
        slot[i] = is_local(s, keys[i]) ? -1 : nfar;
        if (slot[i] >= 0) far[nfar++] = keys[i];
    }
    *ticket = CR_SAMPLE_LOCAL;
    int rc = 0;
    if (nfar > 0) rc = s->io.fetch(s->io.ctx, far, nfar, ticket, e);
    if (rc == 0) s->st.remote += (uint64_t)nfar;
    free(far);
    return rc;
}

/* ---- pools (levels 2 and 3) ----------------------------------------- */

static void pool_free(pool *p) {
    free(p->keys);
    free(p->slot);
    free(p->perm);
    memset(p, 0, sizeof *p);
    p->ticket = CR_SAMPLE_LOCAL;
}

/* Draw G keys, start their fetch and take the pool's own reference. */
static int pool_fill(cr_sampler *s, pool *p, cr_err *e) {
    int64_t g = s->c.pool;
    p->keys = cr_xmalloc((size_t)g * sizeof *p->keys);
    p->slot = cr_xmalloc((size_t)g * sizeof *p->slot);
    p->perm = cr_xmalloc((size_t)g * sizeof *p->perm);
    p->draw0 = s->draws;
    for (int64_t i = 0; i < g; i++) {
        p->keys[i] = (int64_t)cr_alias_draw(s->pi, &s->rng);
        p->perm[i] = (uint64_t)i;
    }
    s->draws += (uint64_t)g;
    s->st.drawn += (uint64_t)g;
    if (fetch_keys(s, p->keys, g, p->slot, &p->ticket, e)) {
        pool_free(p);
        return -1;
    }
    ref_fetch(s, p->ticket, 1);
    cr_rng_shuffle_u64(&s->rng, p->perm, (uint64_t)g);
    p->pos = 0;
    p->pass = 0;
    return 0;
}

/* The pool is used up: the next one becomes current and a new next one is
 * drawn and fetched right away, one pool ahead of use. A next pool whose
 * fetch failed earlier (keys NULL) is filled first. */
static int pool_rotate(cr_sampler *s, cr_err *e) {
    if (!s->next.keys && pool_fill(s, &s->next, e)) return -1;
    unref_fetch(s, s->cur.ticket);
    pool_free(&s->cur);
    s->cur = s->next;
    memset(&s->next, 0, sizeof s->next);
    s->next.ticket = CR_SAMPLE_LOCAL;
    return pool_fill(s, &s->next, e);
}

/* The next sample of the pool stream: position pos of the current pass; a
 * finished pass starts the next one in a fresh order, U passes move on. */
static int pool_sample(cr_sampler *s, cr_sample *out, cr_err *e) {
    if (!s->pools_live) {
        if (pool_fill(s, &s->cur, e)) return -1;
        s->pools_live = 1;
        if (pool_fill(s, &s->next, e)) return -1;
    }
    pool *p = &s->cur;
    if (p->pos == s->c.pool) { /* state is changed only once nothing can fail */
        if ((int64_t)p->pass + 1 >= s->c.reuse) {
            if (pool_rotate(s, e)) return -1;
            p = &s->cur;
        } else {
            p->pos = 0;
            p->pass++;
            cr_rng_shuffle_u64(&s->rng, p->perm, (uint64_t)s->c.pool);
        }
    }
    uint64_t i = p->perm[p->pos++];
    out->key = p->keys[i];
    out->slot = p->slot[i];
    out->ticket = out->slot < 0 ? CR_SAMPLE_LOCAL : p->ticket;
    out->draw = p->draw0 + i;
    out->use = p->pass;
    out->postponed = 0;
    ref_fetch(s, out->ticket, 1);
    return 0;
}

/* ---- handles ---------------------------------------------------------- */

static handle *find_handle(const cr_sampler *s, uint32_t id, int64_t *at) {
    for (int64_t i = 0; i < s->nh; i++)
        if (s->h[i]->id == id) {
            if (at) *at = i;
            return s->h[i];
        }
    return NULL;
}

/* Unreference the unserved samples, free, and unlink handle number at. */
static void handle_drop(cr_sampler *s, int64_t at) {
    handle *hd = s->h[at];
    for (int64_t i = hd->head; i < hd->tail; i++) unref_fetch(s, hd->s[i].ticket);
    free(hd->s);
    free(hd);
    s->h[at] = s->h[--s->nh];
}

/* Level 1 (and 4): n fresh draws, their non-local rows fetched in one go. */
static int fill_direct(cr_sampler *s, handle *hd, int64_t n, cr_err *e) {
    int local = s->c.level == CR_SAMPLING_LOCAL;
    const cr_alias *a = local ? s->local_pi : s->pi;
    int64_t *keys = cr_xmalloc((size_t)(n ? n : 1) * sizeof *keys);
    int64_t *slot = cr_xmalloc((size_t)(n ? n : 1) * sizeof *slot);
    for (int64_t i = 0; i < n; i++) keys[i] = (int64_t)cr_alias_draw(a, &s->rng);
    uint64_t ticket = CR_SAMPLE_LOCAL;
    int rc = 0;
    if (local) {
        for (int64_t i = 0; i < n; i++) slot[i] = -1;
    } else {
        rc = fetch_keys(s, keys, n, slot, &ticket, e);
    }
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        cr_sample *x = &hd->s[hd->tail++];
        x->key = keys[i];
        x->slot = slot[i];
        x->ticket = slot[i] < 0 ? CR_SAMPLE_LOCAL : ticket;
        x->draw = s->draws++;
        x->use = 0;
        x->postponed = 0;
        ref_fetch(s, x->ticket, 1);
    }
    if (rc == 0) s->st.drawn += (uint64_t)n;
    free(keys);
    free(slot);
    return rc;
}

int cr_sampler_prepare(cr_sampler *s, int64_t n, uint32_t *handle_id, cr_err *e) {
    flush_retired(s);
    int twice = s->c.level == CR_SAMPLING_LONGTERM && s->c.postpone;
    if (n < 0 || (uint64_t)n > SIZE_MAX / (2 * sizeof(cr_sample)))
        return cr_errf(e, "prepare_sample: bad number of samples %lld", (long long)n);
    handle *hd = cr_xcalloc(1, sizeof *hd);
    hd->cap = (twice ? 2 : 1) * n;
    hd->s = cr_xmalloc((size_t)(hd->cap + 1) * sizeof *hd->s);
    if (s->nh == s->caph) {
        s->caph = s->caph ? 2 * s->caph : 4;
        s->h = cr_xrealloc(s->h, (size_t)s->caph * sizeof *s->h);
    }
    s->h[s->nh++] = hd;
    if (s->next_id == 0) s->next_id = 1; /* ids wrap around, skipping 0 */
    hd->id = s->next_id++;
    int rc = 0;
    if (s->c.level == CR_SAMPLING_CONFORM || s->c.level == CR_SAMPLING_LOCAL) {
        rc = fill_direct(s, hd, n, e);
    } else {
        for (int64_t i = 0; rc == 0 && i < n; i++) {
            rc = pool_sample(s, &hd->s[hd->tail], e);
            if (rc == 0) hd->tail++;
        }
    }
    if (rc) {
        handle_drop(s, s->nh - 1);
        return -1;
    }
    *handle_id = hd->id;
    return 0;
}

/* Level 3: the head sample's row is neither here nor arrived, it was not
 * postponed before, and something follows it that could be served first. */
static int should_postpone(const cr_sampler *s, const handle *hd) {
    const cr_sample *x = &hd->s[hd->head];
    if (!s->c.postpone || x->postponed || x->ticket == CR_SAMPLE_LOCAL || !s->io.ready) return 0;
    if (hd->head + 1 >= hd->tail || hd->tail == hd->cap) return 0;
    return !s->io.ready(s->io.ctx, x->ticket);
}

static void serve(cr_sampler *s, const cr_sample *x, cr_sample *out) {
    *out = *x;
    if (x->ticket == CR_SAMPLE_LOCAL) s->st.local++;
    else s->st.pooled++;
    if (x->use > 0) s->st.reused++;
    unref_fetch(s, x->ticket);
}

int cr_sampler_pull(cr_sampler *s, uint32_t h, int64_t m, cr_sample *out, cr_err *e) {
    flush_retired(s);
    int64_t at;
    handle *hd = find_handle(s, h, &at);
    if (!hd) return cr_errf(e, "pull_sample: no open handle %u", h);
    int64_t left = hd->tail - hd->head;
    if (m < 0 || m > left)
        return cr_errf(e, "pull_sample: handle %u has %lld samples left, asked for %lld", h, (long long)left,
                       (long long)m);
    for (int64_t i = 0; i < m;) {
        if (should_postpone(s, hd)) {
            hd->s[hd->tail] = hd->s[hd->head++];
            hd->s[hd->tail++].postponed++;
            s->st.postponed++;
            continue;
        }
        serve(s, &hd->s[hd->head++], &out[i++]);
    }
    if (hd->head == hd->tail) handle_drop(s, at);
    return 0;
}

int64_t cr_sampler_left(const cr_sampler *s, uint32_t h) {
    handle *hd = find_handle(s, h, NULL);
    return hd ? hd->tail - hd->head : -1;
}

int64_t cr_sampler_handles(const cr_sampler *s) { return s->nh; }

void cr_sampler_flush(cr_sampler *s) { flush_retired(s); }

void cr_sampler_close(cr_sampler *s, uint32_t h) {
    flush_retired(s);
    int64_t at;
    if (find_handle(s, h, &at)) handle_drop(s, at);
}

void cr_sampler_stats(const cr_sampler *s, cr_sampling_stats *out) { *out = s->st; }

void cr_sampling_stats_add(cr_sampling_stats *sum, const cr_sampling_stats *x) {
    sum->drawn += x->drawn;
    sum->local += x->local;
    sum->pooled += x->pooled;
    sum->remote += x->remote;
    sum->reused += x->reused;
    sum->postponed += x->postponed;
    sum->localized += x->localized;
}

cr_sampler *cr_sampler_new(const cr_alias *pi, const cr_alias *local_pi, const cr_sampling_conf *c,
                           const cr_sampling_io *io, uint64_t seed, uint64_t stream, cr_err *e) {
    if (cr_sampling_conf_check(c, e)) return NULL;
    if (!pi || pi->m == 0) return cr_errf(e, "sampling: no distribution to sample from"), NULL;
    if (c->level == CR_SAMPLING_LOCAL && (!local_pi || local_pi->m == 0))
        return cr_errf(e, "sampling: level 4 (local) needs the local alias table"), NULL;
    if (c->level != CR_SAMPLING_LOCAL && (!io || !io->fetch))
        return cr_errf(e, "sampling: no fetch function"), NULL;
    cr_sampler *s = cr_xcalloc(1, sizeof *s);
    s->c = *c;
    s->pi = pi;
    s->local_pi = local_pi;
    if (io) s->io = *io;
    s->next_id = 1;
    s->cur.ticket = s->next.ticket = CR_SAMPLE_LOCAL;
    cr_rng_seed2(&s->rng, seed, stream);
    return s;
}

void cr_sampler_destroy(cr_sampler **sp) {
    cr_sampler *s = sp ? *sp : NULL;
    if (!s) return;
    while (s->nh > 0) handle_drop(s, s->nh - 1);
    unref_fetch(s, s->cur.ticket);
    unref_fetch(s, s->next.ticket);
    pool_free(&s->cur);
    pool_free(&s->next);
    flush_retired(s);
    free(s->h);
    free(s->f);
    free(s->retire);
    free(s);
    *sp = NULL;
}
