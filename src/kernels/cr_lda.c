/* LDA sweeps: the plain O(K) collapsed Gibbs sampler and the LightLDA-style
 * Metropolis-Hastings sampler. See cr_lda.h for the model and the contract. */
#include "kernels/cr_lda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

/* One alias slot: keep `topic` with probability prob, else take `alias`.
 * 12 bytes: a draw touches one cache line (rarely two). */
typedef struct aent {
    float prob;
    int32_t topic, alias;
} aent;

/* A drawn word proposal: the alias slot and the coin, not yet read, so
 * that the slot can be prefetched a token ahead (the table depends on the
 * snapshot only, not on the state). */
typedef struct wprop {
    const aent *a;
    float coin;
    int dense;
} wprop;

#define CR_LDA_PEND 8 /* proposals drawn ahead per token (more steps draw on the spot) */
/* Proposals are drawn AHEAD tokens ahead and their memory prefetched
 * AHEAD - 1 tokens ahead: a token takes about as long as a miss to DRAM,
 * so one token of distance is not enough. */
#define CR_LDA_AHEAD 3
#define RING(i) ((i) % (CR_LDA_AHEAD + 1))

/* A token's proposals drawn ahead: word-table draws, and doc proposals as a
 * token position (>= 0: the proposal is that token's topic when the step
 * runs) or -1 - topic (the uniform branch). Both depend on nothing the
 * sweep changes, so drawing them early leaves them exact. */
typedef struct tprop {
    wprop w[CR_LDA_PEND];
    int64_t dpos[CR_LDA_PEND];
} tprop;

/* Scratch for builds: K weights, topics, two stacks, K doubles. */
typedef struct bscratch {
    double *w, *p;
    int32_t *tp, *small, *large;
} bscratch;

/* MH: everything a step reads of one topic, in one half cache line (at
 * K = 1000 separate arrays of K would be about 40 KiB that every token
 * touches at random topics: more than L1). ck: current total; ndk: the
 * current document's count; inv = 1 / (max(snapk, 0) + V beta), inv1 the
 * same with snapk + 1, invm1 with snapk - 1 (negative when snapk < 1: no
 * token of the snapshot can be left out of it). */
typedef struct tglob {
    double inv, inv1, invm1;
    int32_t ck, ndk;
} tglob;

/* A token of the MH visiting order: token tbeg + tok of document dbeg + doc
 * (offsets from the chunk's first token and document). */
typedef struct sent {
    int32_t tok, doc;
} sent;

/* Everything a sweep over one chunk reads and writes. The MH sampler keeps
 * a slice's current and snapshot counts interleaved, so that both are one
 * cache miss, and compact: a row holds a (current, snapshot) pair only for
 * the topics whose bit is set (bm), in topic order, so the pair of topic k
 * is slot pre[k / 64] + (the set bits below k in its word) of the row's
 * slots from pb. A row's nonzeros are few (at K = 1000 on gcide-docs about
 * 14 per word after a few sweeps, against 1000 topics): dense rows (8 K
 * bytes) made the model slices a tenth as large, and a document was
 * refilled once per slice that has tokens of it (17 times per token at
 * K = 1000, 7 at K = 100). A new pair is inserted in place (the row's later
 * pairs shift); each row reserves min(K, its nonzeros + 2 x its tokens in
 * the chunk) slots: a token adds at most two (its -1 and its +1). */
typedef struct sctx {
    int K, flags;
    double alpha, beta, vbeta;
    const int32_t *snapk;   /* snapshot totals */
    int32_t *pw;            /* MH: the slice's (current, snapshot) pairs, compact (above) */
    uint64_t *bm;           /* MH: per row of the slice bw words, bit k set if the row has a pair for k */
    int32_t *pre;           /* MH: per row of the slice bw counts: set bits in the words before */
    int64_t *pb;            /* MH: per row of the slice its first slot */
    int32_t *pn;            /* MH: per row of the slice its slots in use */
    int64_t bw, bm_rows;    /* words per row; rows the per-row arrays have room for */
    int64_t r0;             /* MH: the slice's first row */
    const int32_t *snap;    /* MH: the snapshot rows */
    const int32_t *cur0;    /* MH chain tests: current rows to start from (NULL: the snapshot) */
    const int32_t *rn;      /* MH: tokens of each of the chunk's rows in the chunk (NULL: reserve K) */
    int32_t *cw;            /* plain: current counts, nkeys x K */
    int32_t *ck;            /* current totals */
    int32_t *ndk;           /* plain: current document's topic counts */
    double *inv;            /* plain: 1 / (max(ck, 0) + V beta) */
    tglob *tg;              /* MH: per topic (ck, the caller's copy, written back at the end) */
    aent *dense;            /* K slots of beta * inv */
    double Q;               /* dense mass */
    int64_t *soff;          /* nkeys + 1 offsets into sp */
    aent *sp;               /* sparse tables, one per row */
    double *S;              /* sparse mass per row */
    cr_rng rng;             /* acceptance tests */
    cr_rng prng;            /* proposals */
    const int64_t *doc_off; /* the corpus's document offsets */
    const int32_t *row;     /* the corpus's token rows */
    const sent *seq;        /* MH: the order tokens are visited in */
    int64_t nseq, tbeg, dbeg;
    tprop ring[CR_LDA_AHEAD + 1]; /* proposals of tokens i .. i + AHEAD (by i % (AHEAD + 1)) */
    bscratch b;             /* MH: table builds */
} sctx;

/* xoshiro256** inline (cr_rng_next: the generator of cr_rng_u64, without a call). */
static inline uint64_t nx(cr_rng *r) { return cr_rng_next(r); }

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

/* n bytes for a large working array: 2 MiB aligned and advised as huge
 * pages (a hint; where the kernel refuses, plain pages). free() releases it. */
static void *big_alloc(size_t n) {
    void *p = NULL;
    if (n < ((size_t)1 << 21) || posix_memalign(&p, (size_t)1 << 21, n) != 0) return cr_xmalloc(n ? n : 1);
    (void)madvise(p, n, MADV_HUGEPAGE);
    return p;
}

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
    while (nl > 0) nl--, out[large[nl]] = (aent){1.0f, tp[large[nl]], tp[large[nl]]};
    while (ns > 0) ns--, out[small[ns]] = (aent){1.0f, tp[small[ns]], tp[small[ns]]};
}

/* Room for n more sparse slots in the corpus's arena (kept contents). */
static void arena_grow(sctx *x, cr_lda_corpus *c, int64_t used, int64_t n) {
    size_t need = (size_t)(used + n) * sizeof(aent);
    if (need <= c->arena_cap) return;
    size_t cap = need * 3 / 2 + ((size_t)1 << 20);
    aent *a = big_alloc(cap);
    if (used) memcpy(a, x->sp, (size_t)used * sizeof(aent));
    free(c->arena);
    c->arena = a;
    c->arena_cap = cap;
    x->sp = a;
}

/* The dense table over all K topics and the per-row sparse tables over each
 * row's positive snapshot entries. One scan of each snapshot row, which
 * also fills the (current, snapshot) pairs. */
static void build_dense(sctx *x, bscratch *b) {
    int K = x->K;
    x->Q = 0;
    for (int k = 0; k < K; k++) {
        tglob *g = &x->tg[k];
        g->inv = 1.0 / (pos(x->snapk[k]) + x->vbeta);
        g->inv1 = 1.0 / (pos(x->snapk[k]) + 1 + x->vbeta);
        g->invm1 = x->snapk[k] >= 1 ? 1.0 / (pos(x->snapk[k] - 1) + x->vbeta) : -1.0;
        g->ck = x->ck[k];
        g->ndk = 0;
        b->w[k] = x->beta * g->inv;
        b->tp[k] = k;
        x->Q += b->w[k];
    }
    alias_build(x->dense, b->w, b->tp, K, x->Q, b->small, b->large, b->p);
}

/* The rank of topic k in a row: its slot among the row's pairs. */
static inline int64_t rank_of(const uint64_t *bits, const int32_t *pre, int k) {
    return pre[k >> 6] + __builtin_popcountll(bits[k >> 6] & (((uint64_t)1 << (k & 63)) - 1));
}

/* One snapshot row (and with cur, the current row; else the snapshot is
 * current): its entries nonzero in either into the compact pairs pr, the
 * bits and the rank prefix pre, its positive snapshot entries as the
 * sparse table's weights (b->w, b->tp); returns how many of those, *np the
 * pairs, *S the weights' mass. At K = 1000 most of a row is zero: it is
 * scanned 16 entries (a cache line) at a time. */
static int scan_row(const sctx *x, const int32_t *row, const int32_t *cur, int32_t *pr, uint64_t *bits,
                    int32_t *pre, bscratch *b, double *S, int32_t *np) {
    int K = x->K, m = 0, n = 0;
    double sum = 0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        int k1 = k0 + 16 < K ? k0 + 16 : K;
        if (!(k0 & 63)) pre[k0 >> 6] = n;
        if (k1 - k0 == 16 && !cur) { /* eight 8-byte loads, no branch per entry */
            uint64_t v[8], any = 0;
            memcpy(v, row + k0, sizeof v);
            for (int j = 0; j < 8; j++) any |= v[j];
            if (!any) continue;
        }
        for (int k = k0; k < k1; k++) {
            int32_t c = cur ? cur[k] : row[k];
            if (row[k] == 0 && c == 0) continue;
            pr[2 * n] = c;
            pr[2 * n + 1] = row[k];
            n++;
            bits[k >> 6] |= (uint64_t)1 << (k & 63);
            if (row[k] > 0) {
                b->w[m] = row[k] * x->tg[k].inv;
                b->tp[m++] = k;
                sum += b->w[m - 1];
            }
        }
    }
    *S = sum;
    *np = n;
    return m;
}

/* Room for n more slots of pairs in the corpus's workspace (kept contents:
 * the slice's rows before). */
static void slots_grow(sctx *x, cr_lda_corpus *c, int64_t used, int64_t n) {
    size_t need = (size_t)(used + n) * 2 * sizeof(int32_t);
    if (need <= c->ws_cap) {
        x->pw = c->ws;
        return;
    }
    size_t cap = need * 3 / 2 + ((size_t)1 << 20);
    int32_t *a = big_alloc(cap);
    if (used) memcpy(a, c->ws, (size_t)used * 2 * sizeof(int32_t));
    free(c->ws);
    c->ws = a;
    c->ws_cap = cap;
    x->pw = a;
}

/* Slice [r0, r1) of the chunk's rows: their (current, snapshot) pairs in
 * the corpus's workspace and their sparse tables in its arena (both reused
 * by the next slice). One scan of each snapshot row. */
static void build_slice(sctx *x, cr_lda_corpus *c, int64_t r0, int64_t r1, bscratch *b) {
    int K = x->K;
    int64_t n = 0, used = 0;
    x->r0 = r0;
    x->sp = c->arena;
    if (r1 - r0 > x->bm_rows) {
        free(x->bm);
        free(x->pre);
        free(x->pb);
        free(x->pn);
        x->bm_rows = r1 - r0;
        x->bm = cr_xmalloc((size_t)(x->bm_rows * x->bw) * sizeof *x->bm);
        x->pre = cr_xmalloc((size_t)(x->bm_rows * x->bw) * sizeof *x->pre);
        x->pb = cr_xmalloc((size_t)x->bm_rows * sizeof *x->pb);
        x->pn = cr_xmalloc((size_t)x->bm_rows * sizeof *x->pn);
    }
    memset(x->bm, 0, (size_t)((r1 - r0) * x->bw) * sizeof *x->bm);
    for (int64_t r = r0; r < r1; r++) {
        double S;
        int32_t np;
        slots_grow(x, c, used, K);
        int m = scan_row(x, x->snap + r * K, x->cur0 ? x->cur0 + r * K : NULL, x->pw + 2 * used,
                         x->bm + (r - r0) * x->bw, x->pre + (r - r0) * x->bw, b, &S, &np);
        int64_t room = x->rn ? np + 2 * (int64_t)x->rn[r] : K;
        x->pb[r - r0] = used;
        x->pn[r - r0] = np;
        used += room < K ? room : K;
        arena_grow(x, c, n, m);
        x->soff[r] = n;
        x->S[r] = S;
        if (m > 0) alias_build(x->sp + n, b->w, b->tp, m, S, b->small, b->large, b->p);
        n += m;
    }
    x->soff[r1] = n;
}

/* The slice's changes into the caller's dwk (its pairs still in cache):
 * zero where the bit is clear (the row has no pair there). */
static void flush_slice(const sctx *x, int32_t *dwk, int64_t r0, int64_t r1) {
    int K = x->K;
    for (int64_t r = r0; r < r1; r++) {
        const int32_t *pr = x->pw + 2 * x->pb[r - r0];
        const uint64_t *bits = x->bm + (r - r0) * x->bw;
        int32_t *out = dwk + r * K;
        memset(out, 0, (size_t)K * sizeof *out);
        for (int64_t b = 0; b < x->bw; b++)
            for (uint64_t m = bits[b]; m; m &= m - 1, pr += 2) {
                int k = (int)(b * 64 + __builtin_ctzll(m));
                out[k] = pr[0] - pr[1];
            }
    }
}

/* The token being sampled: its row's pairs, its topic s0 when the call
 * started (the snapshot holds it there), and the proposal family's
 * constants. The word proposal from state x is
 *   q_x(k) ~ f_x(k) = (e_wk + [k = x] + beta) / (e_k + [k = x] + V beta)
 * with e = the snapshot without this token: it does not depend on the
 * token's own topic, so the MH step is exact for it (a table that counted
 * the token at s0 would favour s0, and the chain with it). From s0 it is
 * the table; from another x it differs at s0 and x only (see word_step).
 * own = 0 (the snapshot does not hold the token, e.g. a push not yet
 * applied): q = the table for every x. */
typedef struct tok {
    int32_t *p;    /* the row's pairs (compact) */
    uint64_t *bits; /* the row's bits (x->bm): a clear bit k means pair k is (0, 0) */
    int32_t *pre;  /* the row's rank prefix (x->pre) */
    int32_t *pn;   /* the row's pairs in use (x->pn) */
    int64_t r;     /* row */
    int s0, own;
    double fe0;    /* f_e(s0) */
    double ze;     /* sum_k f_e(k) */
    double zt;     /* the table's mass S_r + Q */
} tok;

static const int32_t zpair[2] = {0, 0};

/* The (current, snapshot) pair of topic k of the token's row: the row's
 * pair, or (0, 0) without touching it when its bit is clear. At K = 1000
 * most of a row's topics are zero and uniform proposals (the document
 * proposal's alpha share, the dense table) land on random ones: the bits
 * (K / 8 bytes a row) answer from cache where the pairs (8 K bytes) miss. */
static inline const int32_t *at(const tok *t, int k) {
    return (t->bits[k >> 6] >> (k & 63)) & 1 ? t->p + 2 * rank_of(t->bits, t->pre, k) : zpair;
}

static inline double tw(const sctx *x, const tok *t, int k) { return (pos(at(t, k)[1]) + x->beta) * x->tg[k].inv; }

static inline void tok_init(const sctx *x, tok *t, int64_t r, int s0) {
    t->p = x->pw + 2 * x->pb[r - x->r0];
    t->bits = x->bm + (r - x->r0) * x->bw;
    t->pre = x->pre + (r - x->r0) * x->bw;
    t->pn = x->pn + (r - x->r0);
    t->r = r;
    t->s0 = s0;
    int32_t sn = at(t, s0)[1];
    t->own = sn >= 1 && x->tg[s0].invm1 > 0 && !(x->flags & CR_LDA_TEST_NO_OWN);
    t->zt = x->S[r] + x->Q;
    t->fe0 = t->own ? (sn - 1 + x->beta) * x->tg[s0].invm1 : tw(x, t, s0);
    t->ze = t->zt - tw(x, t, s0) + t->fe0;
}

/* f_e(k), and Z_x = sum_k f_x(k). */
static inline double fe(const sctx *x, const tok *t, int k) { return k == t->s0 ? t->fe0 : tw(x, t, k); }
static inline double zx(const sctx *x, const tok *t, int k) {
    if (k == t->s0 || !t->own) return t->zt;
    return t->ze - tw(x, t, k) + (pos(at(t, k)[1]) + 1 + x->beta) * x->tg[k].inv1;
}

/* pi(k) without the document part: (n_wk + beta) / (n_k + V beta), current. */
static inline double wpart(const sctx *x, const tok *t, int k) {
    return (pos(at(t, k)[0]) + x->beta) / (pos(x->tg[k].ck) + x->vbeta);
}

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

static inline int resolve(wprop w) { return w.coin < w.a->prob ? w.a->topic : w.a->alias; }

/* The proposal from state s != s0: f_s = f_e + (g(s) - f_e(s)) at s, so
 * with that share propose s itself (no move, returns -1); else a draw from
 * f_e: the table, thinned at s0 (f_e(s0) <= table(s0)). */
static inline int draw_off(sctx *x, const tok *t, int s, wprop w) {
    double fs = tw(x, t, s), gs = (pos(at(t, s)[1]) + 1 + x->beta) * x->tg[s].inv1;
    if (unif(&x->rng) * (t->ze - fs + gs) < gs - fs) return -1;
    for (;;) {
        int k = resolve(w);
        if (k != t->s0 || unif(&x->rng) * tw(x, t, t->s0) < t->fe0) return k;
        w = wdraw(x, t->r);
    }
}

/* A word-proposal MH step from state s with the drawn table slot w:
 * accept t with min(1, pi(t) q_t(s) / (pi(s) q_s(t))), q_x(k) = f_e(k) / Z_x
 * for k != x. */
static inline int word_step(sctx *x, const tok *t, int s, wprop w) {
    int u = s == t->s0 || !t->own ? resolve(w) : draw_off(x, t, s, w);
    if (u < 0 || u == s) return s;
    const tglob *gu = &x->tg[u], *gs = &x->tg[s];
    double num = (gu->ndk + x->alpha) * (pos(at(t, u)[0]) + x->beta) * (pos(gs->ck) + x->vbeta);
    double den = (gs->ndk + x->alpha) * (pos(at(t, s)[0]) + x->beta) * (pos(gu->ck) + x->vbeta);
    if (!(x->flags & CR_LDA_TEST_NO_QRATIO)) {
        num *= fe(x, t, s) * zx(x, t, s);
        den *= fe(x, t, u) * zx(x, t, u);
    }
    return unif(&x->rng) * den < num ? u : s;
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
 * chain's token holds s in z). q_d(k) ~ n_dk + alpha with the token
 * counted, so the n_dk + alpha terms cancel in the ratio. */
static inline int doc_step(sctx *x, const int32_t *z, const tok *tk, int s, int64_t dp) {
    int t = dp >= 0 ? z[dp] : (int)(-1 - dp);
    if (t == s) return s;
    double num = wpart(x, tk, t), den = wpart(x, tk, s);
    return unif(&x->rng) * den < num ? t : s;
}

/* Remove / add a token of topic k from / to the current counts (MH: the
 * token's row: a pair whose bit is clear is (0, 0), inserted now at its
 * rank (the row's reserve has room) and its bit set; plain: row of counts
 * p). */
static inline void move_mh(sctx *x, tok *t, int k, int d) {
    x->tg[k].ndk += d;
    uint64_t *w = &t->bits[k >> 6], b = (uint64_t)1 << (k & 63);
    int64_t i = rank_of(t->bits, t->pre, k);
    if (!(*w & b)) {
        memmove(t->p + 2 * (i + 1), t->p + 2 * i, (size_t)(*t->pn - i) * 2 * sizeof *t->p);
        t->p[2 * i] = t->p[2 * i + 1] = 0;
        (*t->pn)++;
        *w |= b;
        for (int64_t j = (k >> 6) + 1; j < x->bw; j++) t->pre[j]++;
    }
    t->p[2 * i] += d;
    x->tg[k].ck += d;
}
static inline void move_plain(sctx *x, int32_t *p, int k, int d) {
    x->ndk[k] += d;
    p[k] += d;
    x->ck[k] += d;
}

/* Stage 1 of the lookahead, for the j-th token of the visiting order: draw
 * its proposals, prefetch the word proposals' alias slots, and if it
 * enters a document, the document's topics (a slice enters a document by
 * reading them all: at K = 1000 its rows are smaller, so a document has
 * tokens in more slices, and each entry missed in cache). */
static inline void look_draw(sctx *x, const int32_t *z, int64_t j, int steps) {
    int64_t i = x->tbeg + x->seq[j].tok, d = x->dbeg + x->seq[j].doc;
    int64_t d0 = x->doc_off[d], L = x->doc_off[d + 1] - d0, r = x->row[i];
    tprop *p = &x->ring[RING(j)];
    if (j == 0 || x->seq[j].doc != x->seq[j - 1].doc)
        for (int64_t a = 0; a < L && a < 64; a += 16) __builtin_prefetch(z + d0 + a);
    __builtin_prefetch(x->bm + (r - x->r0) * x->bw);
    __builtin_prefetch(x->pre + (r - x->r0) * x->bw);
    __builtin_prefetch(x->pb + (r - x->r0));
    for (int st = 0; st < steps && st < CR_LDA_PEND; st++) {
        p->w[st] = wdraw(x, r);
        __builtin_prefetch(p->w[st].a);
        p->dpos[st] = ddraw(x, d0, L);
    }
}

/* Stage 2, for the j-th token (its slots fetched by now): prefetch the
 * pairs its steps will read. */
static inline void look_fetch(sctx *x, const int32_t *z, int64_t j, int steps) {
    const tprop *p = &x->ring[RING(j)];
    int64_t i = x->tbeg + x->seq[j].tok;
    int64_t r = (int64_t)x->row[i] - x->r0;
    const int32_t *pr = x->pw + 2 * x->pb[r];
    const uint64_t *bits = x->bm + r * x->bw;
    const int32_t *pre = x->pre + r * x->bw;
    __builtin_prefetch(pr + 2 * rank_of(bits, pre, z[i]), 1);
    __builtin_prefetch(x->tg + z[i], 1);
    for (int st = 0; st < steps && st < CR_LDA_PEND; st++) {
        int u = resolve(p->w[st]);
        int64_t dp = p->dpos[st];
        int t = dp >= 0 ? z[dp] : (int)(-1 - dp);
        if ((bits[u >> 6] >> (u & 63)) & 1) __builtin_prefetch(pr + 2 * rank_of(bits, pre, u));
        __builtin_prefetch(x->tg + u);
        if ((bits[t >> 6] >> (t & 63)) & 1) __builtin_prefetch(pr + 2 * rank_of(bits, pre, t));
        __builtin_prefetch(x->tg + t);
    }
}

/* The MH steps of token i of the document [t0, t0 + L) with its proposals
 * drawn ahead in cur; returns 1 if its topic changed. */
static inline int mh_token(sctx *x, int32_t *z, int64_t i, int64_t t0, int64_t L, const tprop *cur, int steps) {
    int s0 = z[i], s = s0;
    tok t;
    tok_init(x, &t, x->row[i], s0);
    move_mh(x, &t, s, -1);
    for (int st = 0; st < steps; st++) {
        int pre = st < CR_LDA_PEND;
        s = word_step(x, &t, s, pre ? cur->w[st] : wdraw(x, t.r));
        z[i] = s;
        z[i] = s = doc_step(x, z, &t, s, pre ? cur->dpos[st] : ddraw(x, t0, L));
    }
    move_mh(x, &t, s, +1);
    return s != s0;
}

/* Fill / clear the document scratch from z[t0 .. t1) (plain: ndk; MH: tg). */
static void doc_enter(sctx *x, const int32_t *z, int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; i++) x->ndk[z[i]]++;
}
static void doc_leave(sctx *x, const int32_t *z, int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; i++) x->ndk[z[i]] = 0;
}
static void mh_enter(sctx *x, const int32_t *z, int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; i++) x->tg[z[i]].ndk++;
}
static void mh_leave(sctx *x, const int32_t *z, int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; i++) x->tg[z[i]].ndk = 0;
}

/* MH over the visiting order x->seq. A document's counts are filled when
 * the order enters it and cleared when it leaves. Each token's proposals
 * were drawn and its memory fetched tokens ahead (x->ring): the chain
 * waits on memory much less. Returns how many tokens changed. */
static int64_t mh_seq(sctx *x, int32_t *z, int steps) {
    int64_t changed = 0, d = -1, t0 = 0, L = 0;
    for (int64_t j = 0; j < x->nseq && j < CR_LDA_AHEAD; j++) look_draw(x, z, j, steps);
    for (int64_t j = 0; j < x->nseq && j < CR_LDA_AHEAD - 1; j++) look_fetch(x, z, j, steps);
    for (int64_t j = 0; j < x->nseq; j++) {
        int64_t dj = x->dbeg + x->seq[j].doc;
        if (dj != d) {
            if (d >= 0) mh_leave(x, z, t0, t0 + L);
            d = dj;
            t0 = x->doc_off[d];
            L = x->doc_off[d + 1] - t0;
            mh_enter(x, z, t0, t0 + L);
        }
        tprop cur = x->ring[RING(j)];
        if (j + CR_LDA_AHEAD < x->nseq) look_draw(x, z, j + CR_LDA_AHEAD, steps);
        if (j + CR_LDA_AHEAD - 1 < x->nseq) look_fetch(x, z, j + CR_LDA_AHEAD - 1, steps);
        changed += mh_token(x, z, x->tbeg + x->seq[j].tok, t0, L, &cur, steps);
    }
    if (d >= 0) mh_leave(x, z, t0, t0 + L);
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
        int32_t *cwr = x->cw + (int64_t)row[i] * x->K;
        move_plain(x, cwr, s, -1);
        set_inv(x, inv_ck, s);
        double u = unif(&x->rng) * plain_weights(x, cwr, inv_ck, p);
        int lo = 0, hi = x->K - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (p[mid] > u) hi = mid;
            else lo = mid + 1;
        }
        move_plain(x, cwr, lo, +1);
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

/* Context over chunk ch: ck is the caller's copy of the totals. MH: the
 * pairs from snap (in the corpus's workspace) and the tables. Free with
 * ctx_free. */
static void ctx_init(sctx *x, cr_lda_corpus *c, int64_t ch, const int32_t *snap, const int32_t *nk, int32_t *ck,
                     const cr_lda_sample_opts *o, int mh) {
    int64_t nkeys = cr_lda_chunk_nkeys(c, ch);
    int K = c->K;
    memset(x, 0, sizeof *x);
    x->K = K;
    x->alpha = o->alpha;
    x->beta = o->beta;
    x->vbeta = (double)c->V * o->beta;
    x->snapk = nk;
    x->ck = ck;
    x->flags = o->test_flags;
    cr_rng_seed2(&x->rng, o->seed, (uint64_t)ch);
    cr_rng_seed2(&x->prng, o->seed ^ 0x5bd1e995u, (uint64_t)ch);
    if (!mh) {
        x->ndk = cr_xcalloc((size_t)K, sizeof *x->ndk);
        x->inv = cr_xmalloc((size_t)K * sizeof *x->inv);
        return;
    }
    x->tg = cr_xmalloc((size_t)K * sizeof *x->tg);
    x->bw = (K + 63) / 64;
    x->snap = snap;
    x->dense = cr_xmalloc((size_t)K * sizeof *x->dense);
    x->soff = cr_xmalloc((size_t)(nkeys + 1) * sizeof *x->soff);
    x->S = cr_xmalloc((size_t)(nkeys ? nkeys : 1) * sizeof *x->S);
    x->b = (bscratch){cr_xmalloc((size_t)K * sizeof(double)), cr_xmalloc((size_t)K * sizeof(double)),
                      cr_xmalloc((size_t)K * sizeof(int32_t)), cr_xmalloc((size_t)K * sizeof(int32_t)),
                      cr_xmalloc((size_t)K * sizeof(int32_t))};
    build_dense(x, &x->b);
}

static void ctx_free(sctx *x) {
    free(x->ndk);
    free(x->inv);
    free(x->tg);
    free(x->bm);
    free(x->pre);
    free(x->pb);
    free(x->pn);
    free(x->dense);
    free(x->soff);
    free(x->S);
    free(x->b.w);
    free(x->b.p);
    free(x->b.tp);
    free(x->b.small);
    free(x->b.large);
}

/* The MH visiting order of chunk ch: its rows cut into the slices [bnd[s],
 * bnd[s + 1]) (nsl of them), the slices one after the other, each in
 * document order; *start (nsl + 1 entries, the caller's) where each
 * slice's tokens begin. A slice's rows and tables are built just before
 * its tokens and its changes written just after, so they stay in cache
 * (LightLDA's model slices) and the workspace holds one slice; the price is
 * filling a document's counts once per slice that has tokens of it. */
static sent *visit_order(const cr_lda_corpus *c, int64_t ch, const int64_t *bnd, int64_t nsl, int64_t **start) {
    int64_t d0 = c->chunk_doc[ch], d1 = c->chunk_doc[ch + 1], tb = c->doc_off[d0], n = c->doc_off[d1] - tb;
    sent *seq = cr_xmalloc((size_t)(n ? n : 1) * sizeof *seq);
    int64_t *off = cr_xcalloc((size_t)(nsl + 1), sizeof *off), *at = cr_xmalloc((size_t)(nsl + 1) * sizeof *at);
    int32_t *rs = cr_xmalloc((size_t)(bnd[nsl] ? bnd[nsl] : 1) * sizeof *rs); /* row -> slice */
    for (int64_t s = 0; s < nsl; s++)
        for (int64_t r = bnd[s]; r < bnd[s + 1]; r++) rs[r] = (int32_t)s;
    for (int64_t i = tb; i < c->doc_off[d1]; i++) off[rs[c->row[i]] + 1]++;
    for (int64_t s = 0; s < nsl; s++) off[s + 1] += off[s];
    memcpy(at, off, (size_t)(nsl + 1) * sizeof *at);
    for (int64_t d = d0; d < d1; d++)
        for (int64_t i = c->doc_off[d]; i < c->doc_off[d + 1]; i++)
            seq[at[rs[c->row[i]]]++] = (sent){(int32_t)(i - tb), (int32_t)(d - d0)};
    free(rs);
    free(at);
    *start = off;
    return seq;
}

/* Model slices of about CR_LDA_SLICE_BYTES each of what the sweep reads
 * of their rows: bits, rank prefix and pairs, and alias slots, estimated
 * from each row's tokens in the chunk (a row has about as many pairs as
 * tokens, at most K). Measured on gcide-docs (ns per token at K = 100 /
 * 1000): 2 MiB 146 / 192, 4 MiB 132 / 174, 8 MiB 145 / 189, 16 MiB
 * 158 / 256, one slice 167 / 312: past a few MiB the slice's rows no
 * longer stay in cache while the token streams (z, rows, the visiting
 * order) pass through it. */
#define CR_LDA_SLICE_BYTES ((int64_t)4 << 20)

/* The slice bounds of nkeys rows with rn tokens each (want > 0: slices of
 * want rows each) into a new array of *nsl + 1 entries. */
static int64_t *slice_bounds(int K, int64_t nkeys, const int32_t *rn, int64_t want, int64_t *nsl) {
    int64_t fixed = ((int64_t)K + 63) / 64 * 12 + 24;
    int64_t n = 0, *b = cr_xmalloc((size_t)(nkeys + 2) * sizeof *b);
    b[0] = 0;
    for (int64_t r = 0; r < nkeys;) {
        int64_t r1 = r, bytes = 0;
        if (want > 0) r1 = r + want < nkeys ? r + want : nkeys;
        else
            do {
                bytes += fixed + (int64_t)(8 + sizeof(aent)) * (rn[r1] < K ? rn[r1] : K);
                r1++;
            } while (r1 < nkeys && bytes < CR_LDA_SLICE_BYTES);
        b[++n] = r = r1;
    }
    *nsl = n;
    return b;
}

/* MH over chunk ch slice by slice; the changes go to dwk. Returns how many
 * tokens changed. */
static int64_t sweep_mh(sctx *x, cr_lda_corpus *c, int64_t ch, int32_t *dwk, const cr_lda_sample_opts *o) {
    int64_t nkeys = cr_lda_chunk_nkeys(c, ch), nsl, *start, changed = 0;
    x->doc_off = c->doc_off;
    x->row = c->row;
    x->dbeg = c->chunk_doc[ch];
    x->tbeg = c->doc_off[x->dbeg];
    int32_t *rn = cr_xcalloc((size_t)(nkeys ? nkeys : 1), sizeof *rn);
    for (int64_t i = x->tbeg; i < c->doc_off[c->chunk_doc[ch + 1]]; i++) rn[c->row[i]]++;
    x->rn = rn;
    int64_t *bnd = slice_bounds(x->K, nkeys, rn, o->slice_rows, &nsl);
    sent *seq = visit_order(c, ch, bnd, nsl, &start);
    for (int64_t sl = 0; sl < nsl; sl++) {
        int64_t r0 = bnd[sl], r1 = bnd[sl + 1];
        build_slice(x, c, r0, r1, &x->b);
        x->seq = seq + start[sl];
        x->nseq = start[sl + 1] - start[sl];
        changed += mh_seq(x, c->z, o->mh_steps);
        flush_slice(x, dwk, r0, r1);
    }
    for (int k = 0; k < x->K; k++) x->ck[k] = x->tg[k].ck;
    x->rn = NULL;
    free(rn);
    free(bnd);
    free(seq);
    free(start);
    return changed;
}

/* Plain Gibbs over chunk ch. Returns how many tokens changed. */
static int64_t sweep_plain(sctx *x, cr_lda_corpus *c, int64_t ch) {
    double *p = cr_xmalloc((size_t)x->K * sizeof *p);
    for (int k = 0; k < x->K; k++) set_inv(x, x->inv, k);
    int64_t changed = 0;
    for (int64_t d = c->chunk_doc[ch]; d < c->chunk_doc[ch + 1]; d++) {
        int64_t t0 = c->doc_off[d], t1 = c->doc_off[d + 1];
        doc_enter(x, c->z, t0, t1);
        changed += plain_doc(x, c->z, c->row, t0, t1, x->inv, p);
        doc_leave(x, c->z, t0, t1);
    }
    free(p);
    return changed;
}

int cr_lda_sample(cr_lda_corpus *c, int64_t ch, const int32_t *nwk, const int32_t *nk, int32_t *dwk, int32_t *dk,
                  const cr_lda_sample_opts *o, cr_lda_sample_stats *st, cr_err *e) {
    if (check_sample(c, ch, o, e)) return -1;
    int64_t nkeys = cr_lda_chunk_nkeys(c, ch), K = c->K, n = nkeys * K;
    int mh = o->sampler == CR_LDA_MH;
    memcpy(dk, nk, (size_t)K * sizeof *dk);
    sctx x;
    ctx_init(&x, c, ch, nwk, nk, dk, o, mh);
    if (!mh) {
        memcpy(dwk, nwk, (size_t)n * sizeof *dwk);
        x.cw = dwk;
    }
    st->changed = mh ? sweep_mh(&x, c, ch, dwk, o) : sweep_plain(&x, c, ch);
    if (!mh)
        for (int64_t i = 0; i < n; i++) dwk[i] -= nwk[i];
    for (int64_t k = 0; k < K; k++) dk[k] -= nk[k];
    ctx_free(&x);
    st->tokens = c->doc_off[c->chunk_doc[ch + 1]] - c->doc_off[c->chunk_doc[ch]];
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
static void exact_cond(const sctx *x, const tok *p, double *exact) {
    double tot = 0;
    for (int k = 0; k < x->K; k++) tot += exact[k] = (x->tg[k].ndk + x->alpha) * wpart(x, p, k);
    for (int k = 0; k < x->K; k++) exact[k] /= tot;
}

/* Independent chains of the token's MH steps from starts q % K. */
static void run_chains(sctx *x, const tok *t, int32_t *z, int64_t token, int64_t t0, int64_t L, int64_t chains,
                       int steps, int32_t *out) {
    for (int64_t q = 0; q < chains; q++) {
        int s = (int)(q % x->K);
        for (int st = 0; st < steps; st++) {
            z[token] = s;
            s = word_step(x, t, s, wdraw(x, t->r));
            z[token] = s;
            s = doc_step(x, z, t, s, ddraw(x, t0, L));
        }
        out[q] = s;
    }
}

int cr_lda_mh_chain(cr_lda_corpus *c, int64_t ch, const int32_t *nwk, const int32_t *nk, const int32_t *cur_wk,
                    const int32_t *cur_k, int64_t token, const cr_lda_sample_opts *o, int flags, int64_t chains,
                    int steps, int32_t *out, double *exact, cr_err *e) {
    if (check_sample(c, ch, o, e)) return -1;
    int64_t t0c = c->doc_off[c->chunk_doc[ch]], t1c = c->doc_off[c->chunk_doc[ch + 1]];
    if (token < t0c || token >= t1c)
        return cr_errf(e, "token %lld is not in chunk %lld", (long long)token, (long long)ch + 1);
    int64_t nkeys = cr_lda_chunk_nkeys(c, ch), K = c->K, d = c->chunk_doc[ch];
    while (c->doc_off[d + 1] <= token) d++;
    int32_t *ck = cr_xmalloc((size_t)K * sizeof *ck);
    memcpy(ck, cur_k, (size_t)K * sizeof *ck);
    sctx x;
    ctx_init(&x, c, ch, nwk, nk, ck, o, 1);
    x.cur0 = cur_wk; /* the current counts, not the snapshot's */
    build_slice(&x, c, 0, nkeys, &x.b);
    x.flags = flags | o->test_flags;
    int64_t t0 = c->doc_off[d], L = c->doc_off[d + 1] - t0;
    int s0 = c->z[token];
    tok t;
    tok_init(&x, &t, c->row[token], s0);
    mh_enter(&x, c->z, t0, t0 + L);
    move_mh(&x, &t, s0, -1);
    if (exact) exact_cond(&x, &t, exact);
    run_chains(&x, &t, c->z, token, t0, L, chains, steps, out);
    c->z[token] = s0;
    ctx_free(&x);
    free(ck);
    return 0;
}
