/* LDA sweeps: the plain O(K) collapsed Gibbs sampler and the LightLDA-style
 * Metropolis-Hastings sampler. See cr_lda.h for the model and the contract. */
#include "kernels/cr_lda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

/* One alias slot: keep `topic` with probability prob, else take `alias`.
 * qt and qa are the two topics' unnormalized proposal weights
 * (n_wk + beta) / (n_k + V beta) of the snapshot, so that the acceptance
 * ratio of a sparse draw needs no load from the snapshot row. 20 bytes: a
 * draw touches one cache line (rarely two). */
typedef struct aent {
    float prob;
    int32_t topic, alias;
    float qt, qa;
} aent;

/* A drawn word proposal: the alias slot and the coin, not yet read, so
 * that the slot can be prefetched a token ahead (the proposal depends on
 * the snapshot only, not on the state). */
typedef struct wprop {
    const aent *a;
    float coin;
    int dense;
} wprop;

#define CR_LDA_PEND 8 /* proposals drawn ahead per token (more steps draw on the spot) */

/* A token's proposals drawn ahead: word proposals, and doc proposals as a
 * token position (>= 0: the proposal is that token's topic when the step
 * runs) or -1 - topic (the uniform branch). Both depend on nothing the
 * sweep changes, so drawing them early leaves them exact. */
typedef struct tprop {
    wprop w[CR_LDA_PEND];
    int64_t dpos[CR_LDA_PEND];
} tprop;

/* Everything a sweep over one chunk reads and writes. */
typedef struct sctx {
    int K, flags;
    double alpha, beta, vbeta;
    const int32_t *snap, *snapk; /* stale snapshot: proposals */
    int32_t *cw, *ck;            /* current counts (nkeys x K, K) */
    int32_t *ndk;                /* current document's topic counts */
    double *inv;                 /* 1 / (max(snapk, 0) + V beta) */
    aent *dense;                 /* K slots of beta * inv */
    double Q;                    /* dense mass */
    int64_t *soff;               /* nkeys + 1 offsets into sp */
    aent *sp;                    /* sparse tables, one per row */
    double *S;                   /* sparse mass per row */
    cr_rng rng;                  /* acceptance tests */
    cr_rng prng;                 /* proposals */
    const int64_t *doc_off;      /* the corpus's document offsets */
    int64_t tend;                /* the chunk's end token */
    int64_t dla;                 /* document of the token drawn ahead */
    tprop ring[2];               /* proposals of tokens i + 1 and i + 2 (by i & 1) */
} sctx;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** inline (the same generator as cr_rng_u64, without a call). */
static inline uint64_t nx(cr_rng *r) {
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static inline double unif(cr_rng *r) { return (double)(nx(r) >> 11) * 0x1.0p-53; }

/* Uniform in [0, n) from the high 32 bits of x (Lemire, with rejection so
 * it is exact); *lo32 keeps the low bits for the alias coin. */
static inline uint32_t below32(cr_rng *r, uint32_t n, uint32_t *lo32) {
    uint64_t x = nx(r);
    uint64_t m = (x >> 32) * (uint64_t)n;
    if ((uint32_t)m < n) {
        uint32_t t = (uint32_t)(-n) % n;
        while ((uint32_t)m < t) {
            x = nx(r);
            m = (x >> 32) * (uint64_t)n;
        }
    }
    *lo32 = (uint32_t)x;
    return (uint32_t)(m >> 32);
}

static inline double pos(int32_t x) { return x > 0 ? (double)x : 0.0; }

/* Vose's build of n slots for weights w of topics tp (n >= 1, sum > 0),
 * whose proposal weights are q; small/large are n ints of scratch, p n
 * doubles of scratch. */
static void alias_build(aent *out, const double *w, const int32_t *tp, const float *q, int n, double total,
                        int32_t *small, int32_t *large, double *p) {
    int ns = 0, nl = 0;
    double scale = n / total;
    for (int j = 0; j < n; j++) {
        p[j] = w[j] * scale;
        if (p[j] < 1.0) small[ns++] = j;
        else large[nl++] = j;
    }
    while (ns > 0 && nl > 0) {
        int l = small[--ns], g = large[--nl];
        out[l] = (aent){(float)p[l], tp[l], tp[g], q[l], q[g]};
        p[g] += p[l] - 1.0;
        if (p[g] < 1.0) small[ns++] = g;
        else large[nl++] = g;
    }
    while (nl > 0) nl--, out[large[nl]] = (aent){1.0f, tp[large[nl]], tp[large[nl]], q[large[nl]], q[large[nl]]};
    while (ns > 0) ns--, out[small[ns]] = (aent){1.0f, tp[small[ns]], tp[small[ns]], q[small[ns]], q[small[ns]]};
}

/* Scratch for builds: K weights, topics, two stacks, K doubles, K q's. */
typedef struct bscratch {
    double *w, *p;
    int32_t *tp, *small, *large;
    float *q;
} bscratch;

/* The dense table over all K topics and the per-row sparse tables over each
 * row's positive snapshot entries. One scan of each snapshot row, which
 * also copies it into the current counts. */
static void build_tables(sctx *x, int64_t nkeys, bscratch *b) {
    int K = x->K;
    x->Q = 0;
    for (int k = 0; k < K; k++) {
        x->inv[k] = 1.0 / (pos(x->snapk[k]) + x->vbeta);
        b->w[k] = x->beta * x->inv[k];
        b->q[k] = (float)b->w[k];
        b->tp[k] = k;
        x->Q += b->w[k];
    }
    alias_build(x->dense, b->w, b->tp, b->q, K, x->Q, b->small, b->large, b->p);
    int64_t cap = nkeys * 4 + 64, n = 0;
    x->sp = cr_xmalloc((size_t)cap * sizeof *x->sp);
    for (int64_t r = 0; r < nkeys; r++) {
        const int32_t *row = x->snap + r * K;
        int32_t *cur = x->cw + r * K;
        int m = 0;
        double S = 0;
        for (int k = 0; k < K; k++) {
            cur[k] = row[k];
            if (row[k] > 0) {
                b->w[m] = row[k] * x->inv[k];
                b->q[m] = (float)((row[k] + x->beta) * x->inv[k]);
                b->tp[m++] = k;
                S += b->w[m - 1];
            }
        }
        if (n + m > cap) x->sp = cr_xrealloc(x->sp, (size_t)(cap = (n + m) * 2) * sizeof *x->sp);
        x->soff[r] = n;
        x->S[r] = S;
        if (m > 0) alias_build(x->sp + n, b->w, b->tp, b->q, m, S, b->small, b->large, b->p);
        n += m;
    }
    x->soff[nkeys] = n;
}

/* pi(t) / pi(s) parts: (n_wk + beta) / (n_k + V beta) of current counts. */
static inline double wpart(const sctx *x, const int32_t *cwr, int k) {
    return (pos(cwr[k]) + x->beta) / (pos(x->ck[k]) + x->vbeta);
}

/* Snapshot proposal weight of topic k for the row at swr. */
static inline double qw(const sctx *x, const int32_t *swr, int k) { return (pos(swr[k]) + x->beta) * x->inv[k]; }

static inline wprop wdraw(sctx *x, int64_t r) {
    double S = x->S[r];
    wprop p;
    uint32_t c;
    p.dense = !(unif(&x->prng) * (S + x->Q) < S);
    if (!p.dense) p.a = x->sp + x->soff[r] + below32(&x->prng, (uint32_t)(x->soff[r + 1] - x->soff[r]), &c);
    else p.a = x->dense + below32(&x->prng, (uint32_t)x->K, &c);
    p.coin = (float)c * 0x1.0p-32f;
    return p;
}

/* A word-proposal MH step from state s for row r with the drawn proposal p.
 * *qs is q(s), or < 0 when not known yet; it is updated with the new
 * state's. The q's are floats from the tables (the same values for a
 * topic, however it is reached). */
static inline int word_step(sctx *x, int64_t r, const int32_t *cwr, int s, double *qs, wprop p) {
    const int32_t *swr = x->snap + r * x->K;
    int t = p.coin < p.a->prob ? p.a->topic : p.a->alias;
    double qt = p.coin < p.a->prob ? p.a->qt : p.a->qa;
    if (p.dense) qt = (float)qw(x, swr, t);
    if (t == s) return s;
    if (*qs < 0) *qs = (float)qw(x, swr, s);
    double num = (x->ndk[t] + x->alpha) * (cwr[t] > 0 ? cwr[t] + x->beta : x->beta) * (pos(x->ck[s]) + x->vbeta);
    double den = (x->ndk[s] + x->alpha) * (cwr[s] > 0 ? cwr[s] + x->beta : x->beta) * (pos(x->ck[t]) + x->vbeta);
    if (!(x->flags & CR_LDA_TEST_NO_QRATIO)) {
        num *= *qs;
        den *= qt;
    }
    if (unif(&x->rng) * den < num) {
        *qs = qt;
        return t;
    }
    return s;
}

/* A doc proposal for a token of the document of L tokens from token d0:
 * with probability K alpha / (L + K alpha) a uniform topic, else the topic
 * of a uniformly random token of it (encoded as in tprop). */
static inline int64_t ddraw(sctx *x, int64_t d0, int64_t L) {
    double u = unif(&x->prng) * ((double)L + x->K * x->alpha);
    if (u < (double)L) {
        int64_t j = (int64_t)u;
        return d0 + (j < L ? j : L - 1);
    }
    uint32_t c;
    return -1 - (int64_t)below32(&x->prng, (uint32_t)x->K, &c);
}

/* A doc-proposal MH step from state s with the drawn proposal dp (the
 * chain's token holds s in z). The n_dk + alpha terms cancel in the ratio. */
static inline int doc_step(sctx *x, const int32_t *z, const int32_t *cwr, int s, int64_t dp) {
    int t = dp >= 0 ? z[dp] : (int)(-1 - dp);
    if (t == s) return s;
    double num = wpart(x, cwr, t), den = wpart(x, cwr, s);
    return unif(&x->rng) * den < num ? t : s;
}

/* Remove / add token (row r, topic k) from / to the current counts. */
static inline void move(sctx *x, int64_t r, int k, int d) {
    x->ndk[k] += d;
    x->cw[r * x->K + k] += d;
    x->ck[k] += d;
}

/* Stage 1 of the lookahead, for token i: draw its proposals, prefetch
 * the word proposals' alias slots. Called in token order. */
static inline void look_draw(sctx *x, const int32_t *row, int64_t i, int steps) {
    while (x->doc_off[x->dla + 1] <= i) x->dla++;
    int64_t d0 = x->doc_off[x->dla], L = x->doc_off[x->dla + 1] - d0, r = row[i];
    tprop *p = &x->ring[i & 1];
    for (int st = 0; st < steps && st < CR_LDA_PEND; st++) {
        p->w[st] = wdraw(x, r);
        __builtin_prefetch(p->w[st].a);
        p->dpos[st] = ddraw(x, d0, L);
    }
}

/* Stage 2, for token i (its slots fetched by now): prefetch the count
 * entries its steps will read. */
static inline void look_fetch(sctx *x, const int32_t *z, const int32_t *row, int64_t i, int steps) {
    const tprop *p = &x->ring[i & 1];
    int64_t r = row[i];
    const int32_t *cwr = x->cw + r * x->K, *swr = x->snap + r * x->K;
    __builtin_prefetch(cwr + z[i], 1);
    __builtin_prefetch(swr + z[i]);
    for (int st = 0; st < steps && st < CR_LDA_PEND; st++) {
        const wprop *w = &p->w[st];
        int t = w->coin < w->a->prob ? w->a->topic : w->a->alias;
        __builtin_prefetch(cwr + t);
        if (w->dense) __builtin_prefetch(swr + t);
        int64_t dp = p->dpos[st];
        __builtin_prefetch(cwr + (dp >= 0 ? z[dp] : -1 - dp));
    }
}

/* MH over the tokens of one document [t0, t1). Returns how many changed.
 * Token i's proposals were drawn two tokens ahead and its memory fetched
 * one token ahead (x->ring): the chain waits on memory much less. */
static int64_t mh_doc(sctx *x, int32_t *z, const int32_t *row, int64_t t0, int64_t t1, int steps) {
    int64_t changed = 0;
    for (int64_t i = t0; i < t1; i++) {
        int s0 = z[i], s = s0;
        int64_t r = row[i];
        const int32_t *cwr = x->cw + r * x->K;
        tprop cur = x->ring[i & 1];
        if (i + 2 < x->tend) look_draw(x, row, i + 2, steps);
        if (i + 1 < x->tend) look_fetch(x, z, row, i + 1, steps);
        move(x, r, s, -1);
        double qs = -1;
        for (int st = 0; st < steps; st++) {
            int pre = st < CR_LDA_PEND;
            s = word_step(x, r, cwr, s, &qs, pre ? cur.w[st] : wdraw(x, r));
            z[i] = s;
            int u = doc_step(x, z, cwr, s, pre ? cur.dpos[st] : ddraw(x, t0, t1 - t0));
            if (u != s) qs = -1;
            z[i] = s = u;
        }
        move(x, r, s, +1);
        changed += s != s0;
    }
    return changed;
}

/* The exact conditional of a token (already removed) into p (K
 * cumulative weights); returns the total. inv_ck caches 1 / (n_k + V beta). */
static inline double plain_weights(const sctx *x, const int32_t *cwr, const double *inv_ck, double *p) {
    double tot = 0;
    for (int k = 0; k < x->K; k++) {
        tot += (x->ndk[k] + x->alpha) * (cwr[k] > 0 ? cwr[k] + x->beta : x->beta) * inv_ck[k];
        p[k] = tot;
    }
    return tot;
}

static inline void set_inv(const sctx *x, double *inv_ck, int k) { inv_ck[k] = 1.0 / (pos(x->ck[k]) + x->vbeta); }

/* Plain O(K) Gibbs over one document [t0, t1). */
static int64_t plain_doc(sctx *x, int32_t *z, const int32_t *row, int64_t t0, int64_t t1, double *inv_ck,
                         double *p) {
    int64_t changed = 0;
    for (int64_t i = t0; i < t1; i++) {
        int s = z[i];
        int64_t r = row[i];
        const int32_t *cwr = x->cw + r * x->K;
        move(x, r, s, -1);
        set_inv(x, inv_ck, s);
        double u = unif(&x->rng) * plain_weights(x, cwr, inv_ck, p);
        int lo = 0, hi = x->K - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (p[mid] > u) hi = mid;
            else lo = mid + 1;
        }
        move(x, r, lo, +1);
        set_inv(x, inv_ck, lo);
        z[i] = lo;
        changed += lo != s;
    }
    return changed;
}

static int check_sample(const cr_lda_corpus *c, int64_t ch, const cr_lda_sample_opts *o, cr_err *e) {
    if (c->K < 2 || !c->z) return cr_errf(e, "corpus has no topics (call init first)");
    if (!c->chunk_doc || ch < 0 || ch >= c->nchunks)
        return cr_errf(e, "no chunk %lld (%lld chunks)", (long long)ch + 1, (long long)c->nchunks);
    if (!(o->alpha > 0)) return cr_errf(e, "alpha must be > 0");
    if (!(o->beta > 0)) return cr_errf(e, "beta must be > 0");
    if (o->sampler == CR_LDA_MH && o->mh_steps < 1) return cr_errf(e, "mh_steps must be >= 1");
    return 0;
}

/* Context over chunk ch with cw/ck = copies of the snapshot (the caller's
 * dwk/dk); MH tables when mh. Free with ctx_free. */
static void ctx_init(sctx *x, const cr_lda_corpus *c, int64_t ch, const int32_t *nwk, const int32_t *nk, int32_t *cw,
                     int32_t *ck, const cr_lda_sample_opts *o, int mh) {
    int64_t nkeys = cr_lda_chunk_nkeys(c, ch);
    int K = c->K;
    memset(x, 0, sizeof *x);
    *x = (sctx){.K = K, .alpha = o->alpha, .beta = o->beta, .vbeta = (double)c->V * o->beta, .snap = nwk,
                .snapk = nk, .cw = cw, .ck = ck};
    cr_rng_seed2(&x->rng, o->seed, (uint64_t)ch);
    cr_rng_seed2(&x->prng, o->seed ^ 0x5bd1e995u, (uint64_t)ch);
    x->ndk = cr_xcalloc((size_t)K, sizeof *x->ndk);
    x->inv = cr_xmalloc((size_t)K * sizeof *x->inv);
    if (!mh) return;
    x->dense = cr_xmalloc((size_t)K * sizeof *x->dense);
    x->soff = cr_xmalloc((size_t)(nkeys + 1) * sizeof *x->soff);
    x->S = cr_xmalloc((size_t)(nkeys ? nkeys : 1) * sizeof *x->S);
    bscratch b = {cr_xmalloc((size_t)K * sizeof(double)), cr_xmalloc((size_t)K * sizeof(double)),
                  cr_xmalloc((size_t)K * sizeof(int32_t)), cr_xmalloc((size_t)K * sizeof(int32_t)),
                  cr_xmalloc((size_t)K * sizeof(int32_t)), cr_xmalloc((size_t)K * sizeof(float))};
    build_tables(x, nkeys, &b);
    free(b.q);
    free(b.w);
    free(b.p);
    free(b.tp);
    free(b.small);
    free(b.large);
}

static void ctx_free(sctx *x) {
    free(x->ndk);
    free(x->inv);
    free(x->dense);
    free(x->soff);
    free(x->S);
    free(x->sp);
}

/* Fill / clear the document scratch from z[t0 .. t1). */
static void doc_enter(sctx *x, const int32_t *z, int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; i++) x->ndk[z[i]]++;
}
static void doc_leave(sctx *x, const int32_t *z, int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; i++) x->ndk[z[i]] = 0;
}

int cr_lda_sample(cr_lda_corpus *c, int64_t ch, const int32_t *nwk, const int32_t *nk, int32_t *dwk, int32_t *dk,
                  const cr_lda_sample_opts *o, cr_lda_sample_stats *st, cr_err *e) {
    if (check_sample(c, ch, o, e)) return -1;
    int64_t nkeys = cr_lda_chunk_nkeys(c, ch), K = c->K, n = nkeys * K;
    int mh = o->sampler == CR_LDA_MH;
    if (!mh) memcpy(dwk, nwk, (size_t)n * sizeof *dwk); /* MH copies while building its tables */
    memcpy(dk, nk, (size_t)K * sizeof *dk);
    sctx x;
    ctx_init(&x, c, ch, nwk, nk, dwk, dk, o, mh);
    double *p = mh ? NULL : cr_xmalloc((size_t)K * sizeof *p);
    for (int k = 0; !mh && k < K; k++) set_inv(&x, x.inv, k);
    int64_t changed = 0, tbeg = c->doc_off[c->chunk_doc[ch]];
    x.tend = c->doc_off[c->chunk_doc[ch + 1]];
    x.doc_off = c->doc_off;
    x.dla = c->chunk_doc[ch];
    for (int64_t i = tbeg; mh && i < tbeg + 2 && i < x.tend; i++) look_draw(&x, c->row, i, o->mh_steps);
    if (mh && tbeg < x.tend) look_fetch(&x, c->z, c->row, tbeg, o->mh_steps);
    for (int64_t d = c->chunk_doc[ch]; d < c->chunk_doc[ch + 1]; d++) {
        int64_t t0 = c->doc_off[d], t1 = c->doc_off[d + 1];
        doc_enter(&x, c->z, t0, t1);
        changed += mh ? mh_doc(&x, c->z, c->row, t0, t1, o->mh_steps)
                      : plain_doc(&x, c->z, c->row, t0, t1, x.inv, p);
        doc_leave(&x, c->z, t0, t1);
    }
    free(p);
    ctx_free(&x);
    for (int64_t i = 0; i < n; i++) dwk[i] -= nwk[i];
    for (int64_t k = 0; k < K; k++) dk[k] -= nk[k];
    st->tokens = c->doc_off[c->chunk_doc[ch + 1]] - c->doc_off[c->chunk_doc[ch]];
    st->changed = changed;
    return 0;
}

double cr_lda_doc_loglik(const cr_lda_corpus *c, double alpha) {
    if (c->K < 2 || !c->z) return 0;
    int K = c->K;
    int32_t *ndk = cr_xcalloc((size_t)K, sizeof *ndk);
    double la = lgamma(alpha), sum = 0;
    for (int64_t d = 0; d < c->ndocs; d++) {
        int64_t t0 = c->doc_off[d], t1 = c->doc_off[d + 1];
        for (int64_t i = t0; i < t1; i++) ndk[c->z[i]]++;
        for (int64_t i = t0; i < t1; i++)
            if (ndk[c->z[i]] > 0) {
                sum += lgamma(ndk[c->z[i]] + alpha) - la;
                ndk[c->z[i]] = 0;
            }
        sum -= lgamma((double)(t1 - t0) + K * alpha) - lgamma(K * alpha);
    }
    free(ndk);
    return sum;
}

double cr_lda_word_loglik(const int32_t *counts, int64_t n, double beta) {
    double lb = lgamma(beta), sum = 0;
    for (int64_t i = 0; i < n; i++)
        if (counts[i] != 0) sum += lgamma(counts[i] + beta) - lb;
    return sum;
}

/* The exact conditional of the (removed) token into exact, normalized. */
static void exact_cond(const sctx *x, const int32_t *cwr, double *exact) {
    double tot = 0;
    for (int k = 0; k < x->K; k++) tot += exact[k] = (x->ndk[k] + x->alpha) * wpart(x, cwr, k);
    for (int k = 0; k < x->K; k++) exact[k] /= tot;
}

int cr_lda_mh_chain(cr_lda_corpus *c, int64_t ch, const int32_t *nwk, const int32_t *nk, const int32_t *cur_wk,
                    const int32_t *cur_k, int64_t token, const cr_lda_sample_opts *o, int flags, int64_t chains,
                    int steps, int32_t *out, double *exact, cr_err *e) {
    if (check_sample(c, ch, o, e)) return -1;
    int64_t t0c = c->doc_off[c->chunk_doc[ch]], t1c = c->doc_off[c->chunk_doc[ch + 1]];
    if (token < t0c || token >= t1c) return cr_errf(e, "token %lld is not in chunk %lld", (long long)token, (long long)ch + 1);
    int64_t nkeys = cr_lda_chunk_nkeys(c, ch), K = c->K, d = c->chunk_doc[ch];
    while (c->doc_off[d + 1] <= token) d++;
    int32_t *cw = cr_xmalloc((size_t)(nkeys * K) * sizeof *cw), *ck = cr_xmalloc((size_t)K * sizeof *ck);
    sctx x;
    ctx_init(&x, c, ch, nwk, nk, cw, ck, o, 1); /* copies the snapshot into cw: replaced by the current counts */
    memcpy(cw, cur_wk, (size_t)(nkeys * K) * sizeof *cw);
    memcpy(ck, cur_k, (size_t)K * sizeof *ck);
    x.flags = flags;
    int64_t t0 = c->doc_off[d], L = c->doc_off[d + 1] - t0, r = c->row[token];
    int s0 = c->z[token];
    doc_enter(&x, c->z, t0, t0 + L);
    move(&x, r, s0, -1);
    if (exact) exact_cond(&x, cw + r * K, exact);
    for (int64_t q = 0; q < chains; q++) {
        int s = (int)(q % K);
        double qs = -1;
        for (int st = 0; st < steps; st++) {
            c->z[token] = s;
            s = word_step(&x, r, cw + r * K, s, &qs, wdraw(&x, r));
            c->z[token] = s;
            int u = doc_step(&x, c->z, cw + r * K, s, ddraw(&x, t0, L));
            if (u != s) qs = -1;
            s = u;
        }
        out[q] = s;
    }
    c->z[token] = s0;
    ctx_free(&x);
    free(cw);
    free(ck);
    return 0;
}
