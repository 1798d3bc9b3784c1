/* LDA sweeps: the plain O(K) collapsed Gibbs sampler and the LightLDA-style
 * Metropolis-Hastings sampler. See cr_lda.h for the model and the contract. */
#include "kernels/cr_lda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

/* One alias slot: keep `topic` with probability prob, else take `alias`.
 * 12 bytes, so a draw touches one cache line. */
typedef struct aent {
    float prob;
    int32_t topic, alias;
} aent;

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
    cr_rng rng;
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

static inline int32_t alias_draw(const aent *t, uint32_t n, cr_rng *r) {
    uint32_t c;
    const aent *a = t + below32(r, n, &c);
    return (float)c * 0x1.0p-32f < a->prob ? a->topic : a->alias;
}

static inline double pos(int32_t x) { return x > 0 ? (double)x : 0.0; }

/* Vose's build of n slots for weights w of topics tp (n >= 1, sum > 0);
 * small/large are n ints of scratch, p n doubles of scratch. */
static void alias_build(aent *out, const double *w, const int32_t *tp, int n, double total, int32_t *small,
                        int32_t *large, double *p) {
    int ns = 0, nl = 0;
    double scale = n / total;
    for (int j = 0; j < n; j++) {
        p[j] = w[j] * scale;
        if (p[j] < 1.0) small[ns++] = j;
        else large[nl++] = j;
    }
    while (ns > 0 && nl > 0) {
        int l = small[--ns], g = large[--nl];
        out[l] = (aent){(float)p[l], tp[l], tp[g]};
        p[g] += p[l] - 1.0;
        if (p[g] < 1.0) small[ns++] = g;
        else large[nl++] = g;
    }
    while (nl > 0) out[large[nl - 1]] = (aent){1.0f, tp[large[nl - 1]], tp[large[nl - 1]]}, nl--;
    while (ns > 0) out[small[ns - 1]] = (aent){1.0f, tp[small[ns - 1]], tp[small[ns - 1]]}, ns--;
}

/* Scratch for builds: K weights, topics, two stacks, K doubles. */
typedef struct bscratch {
    double *w, *p;
    int32_t *tp, *small, *large;
} bscratch;

/* The dense table over all K topics and the per-row sparse tables over each
 * row's positive snapshot entries. One scan of each snapshot row. */
static void build_tables(sctx *x, int64_t nkeys, bscratch *b) {
    int K = x->K;
    x->Q = 0;
    for (int k = 0; k < K; k++) {
        x->inv[k] = 1.0 / (pos(x->snapk[k]) + x->vbeta);
        b->w[k] = x->beta * x->inv[k];
        b->tp[k] = k;
        x->Q += b->w[k];
    }
    alias_build(x->dense, b->w, b->tp, K, x->Q, b->small, b->large, b->p);
    int64_t cap = nkeys * 4 + 64, n = 0;
    x->sp = cr_xmalloc((size_t)cap * sizeof *x->sp);
    for (int64_t r = 0; r < nkeys; r++) {
        const int32_t *row = x->snap + r * K;
        int m = 0;
        double S = 0;
        for (int k = 0; k < K; k++)
            if (row[k] > 0) {
                b->w[m] = row[k] * x->inv[k];
                b->tp[m++] = k;
                S += b->w[m - 1];
            }
        if (n + m > cap) x->sp = cr_xrealloc(x->sp, (size_t)(cap = (n + m) * 2) * sizeof *x->sp);
        x->soff[r] = n;
        x->S[r] = S;
        if (m > 0) alias_build(x->sp + n, b->w, b->tp, m, S, b->small, b->large, b->p);
        n += m;
    }
    x->soff[nkeys] = n;
}

/* pi(t) / pi(s) parts: (n_wk + beta) / (n_k + V beta) of current counts. */
static inline double wpart(const sctx *x, const int32_t *cwr, int k) {
    return (pos(cwr[k]) + x->beta) / (pos(x->ck[k]) + x->vbeta);
}

/* A word-proposal MH step from state s for row r. */
static inline int word_step(sctx *x, int64_t r, const int32_t *cwr, int s) {
    double S = x->S[r];
    int t;
    if (unif(&x->rng) * (S + x->Q) < S)
        t = alias_draw(x->sp + x->soff[r], (uint32_t)(x->soff[r + 1] - x->soff[r]), &x->rng);
    else
        t = alias_draw(x->dense, (uint32_t)x->K, &x->rng);
    if (t == s) return s;
    const int32_t *swr = x->snap + r * x->K;
    double num = (x->ndk[t] + x->alpha) * (cwr[t] > 0 ? cwr[t] + x->beta : x->beta) * (pos(x->ck[s]) + x->vbeta);
    double den = (x->ndk[s] + x->alpha) * (cwr[s] > 0 ? cwr[s] + x->beta : x->beta) * (pos(x->ck[t]) + x->vbeta);
    if (!(x->flags & CR_LDA_TEST_NO_QRATIO)) {
        num *= (pos(swr[s]) + x->beta) * x->inv[s];
        den *= (pos(swr[t]) + x->beta) * x->inv[t];
    }
    return unif(&x->rng) * den < num ? t : s;
}

/* A doc-proposal MH step from state s; z[t0 .. t0 + L) is the document with
 * the chain's token at state s. The n_dk + alpha terms cancel in the ratio. */
static inline int doc_step(sctx *x, const int32_t *z, int64_t L, const int32_t *cwr, int s) {
    double u = unif(&x->rng) * ((double)L + x->K * x->alpha);
    int t;
    if (u < (double)L) {
        int64_t j = (int64_t)u;
        t = z[j < L ? j : L - 1];
    } else {
        uint32_t c;
        t = (int)below32(&x->rng, (uint32_t)x->K, &c);
    }
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

/* MH over the tokens of one document [t0, t1). Returns how many changed. */
static int64_t mh_doc(sctx *x, int32_t *z, const int32_t *row, int64_t t0, int64_t t1, int steps) {
    int64_t changed = 0, L = t1 - t0;
    for (int64_t i = t0; i < t1; i++) {
        int s0 = z[i], s = s0;
        int64_t r = row[i];
        const int32_t *cwr = x->cw + r * x->K;
        move(x, r, s, -1);
        for (int st = 0; st < steps; st++) {
            s = word_step(x, r, cwr, s);
            z[i] = s;
            s = doc_step(x, z + t0, L, cwr, s);
            z[i] = s;
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
    x->ndk = cr_xcalloc((size_t)K, sizeof *x->ndk);
    x->inv = cr_xmalloc((size_t)K * sizeof *x->inv);
    if (!mh) return;
    x->dense = cr_xmalloc((size_t)K * sizeof *x->dense);
    x->soff = cr_xmalloc((size_t)(nkeys + 1) * sizeof *x->soff);
    x->S = cr_xmalloc((size_t)(nkeys ? nkeys : 1) * sizeof *x->S);
    bscratch b = {cr_xmalloc((size_t)K * sizeof(double)), cr_xmalloc((size_t)K * sizeof(double)),
                  cr_xmalloc((size_t)K * sizeof(int32_t)), cr_xmalloc((size_t)K * sizeof(int32_t)),
                  cr_xmalloc((size_t)K * sizeof(int32_t))};
    build_tables(x, nkeys, &b);
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
    memcpy(dwk, nwk, (size_t)n * sizeof *dwk);
    memcpy(dk, nk, (size_t)K * sizeof *dk);
    int mh = o->sampler == CR_LDA_MH;
    sctx x;
    ctx_init(&x, c, ch, nwk, nk, dwk, dk, o, mh);
    double *p = mh ? NULL : cr_xmalloc((size_t)K * sizeof *p);
    for (int k = 0; !mh && k < K; k++) set_inv(&x, x.inv, k);
    int64_t changed = 0;
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
    memcpy(cw, cur_wk, (size_t)(nkeys * K) * sizeof *cw);
    memcpy(ck, cur_k, (size_t)K * sizeof *ck);
    sctx x;
    ctx_init(&x, c, ch, nwk, nk, cw, ck, o, 1);
    x.flags = flags;
    int64_t t0 = c->doc_off[d], L = c->doc_off[d + 1] - t0, r = c->row[token];
    int s0 = c->z[token];
    doc_enter(&x, c->z, t0, t0 + L);
    move(&x, r, s0, -1);
    if (exact) exact_cond(&x, cw + r * K, exact);
    for (int64_t q = 0; q < chains; q++) {
        int s = (int)(q % K);
        for (int st = 0; st < steps; st++) {
            c->z[token] = s;
            s = word_step(&x, r, cw + r * K, s);
            c->z[token] = s;
            s = doc_step(&x, c->z + t0, L, cw + r * K, s);
        }
        out[q] = s;
    }
    c->z[token] = s0;
    ctx_free(&x);
    free(cw);
    free(ck);
    return 0;
}
