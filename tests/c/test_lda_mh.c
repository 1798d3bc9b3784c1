/* LDA samplers on a tiny problem: the MH chain of one token, with the rest
 * of the state fixed and a stale snapshot different from the current
 * counts, reaches the exact conditional (chi-square of independent chains
 * against it); the same chain with the word proposal's q ratio dropped
 * fails that test; the plain sampler's draws of a lone token follow the same
 * conditional; whole sweeps of both samplers (with the snapshot updated
 * between chunks, as the parameter server does) visit the joint topic
 * assignments of a tiny corpus with their exact posterior frequencies, and
 * the MH sweeps without the own-token correction of the proposal do not. */
#include <stdlib.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "cr_test.h"
#include "kernels/cr_lda.h"
#include "stat_util.h"

enum { K = 5, V = 7 };

/* Upper tail of the chi-square distribution with df degrees of freedom
 * (Wilson-Hilferty: accurate to a few percent at the tails used here). */
static double chi2_pvalue(double x, int df) {
    double h = 2.0 / (9.0 * df), z = (cbrt(x / df) - (1 - h)) / sqrt(h);
    return 0.5 * erfc(z / sqrt(2.0));
}

/* A corpus over the given documents (word ids, -1 ends a document). */
static cr_lda_corpus *make_corpus(const int *w, int n, int64_t vocab) {
    cr_lda_corpus *c = cr_xcalloc(1, sizeof *c);
    c->word = cr_xmalloc((size_t)n * sizeof *c->word);
    c->doc_off = cr_xmalloc((size_t)(n + 2) * sizeof *c->doc_off);
    c->doc_off[0] = 0;
    for (int i = 0; i < n; i++) {
        if (w[i] < 0) c->doc_off[++c->ndocs] = c->ntokens;
        else c->word[c->ntokens++] = w[i];
    }
    c->V = vocab;
    return c;
}

/* State of the tiny problem: current counts = own + other workers', a
 * snapshot that differs (some entries lower, some higher, one negative). */
typedef struct tiny {
    cr_lda_corpus *c;
    int64_t nkeys;
    int32_t cur[V * K], curk[K], snap[V * K], snapk[K];
} tiny;

static void tiny_init(tiny *t) {
    static const int docs[] = {0, 1, 2, 3, 1, 0, -1, 4, 5, 6, 2, 2, -1, 1, 3, 5, 0, -1};
    cr_err e;
    t->c = make_corpus(docs, (int)(sizeof docs / sizeof *docs), V);
    cr_lda_corpus_init(t->c, K, 3, &e);
    cr_lda_corpus_chunks(t->c, 1000, &e);
    t->nkeys = cr_lda_chunk_nkeys(t->c, 0);
    int32_t own[V * K], ownk[K];
    cr_lda_chunk_counts(t->c, 0, own, ownk);
    cr_rng g;
    cr_rng_seed(&g, 11);
    memset(t->curk, 0, sizeof t->curk);
    memset(t->snapk, 0, sizeof t->snapk);
    for (int i = 0; i < V * K; i++) {
        t->cur[i] = own[i] + (int32_t)cr_rng_below(&g, 6) * (i % 3 == 0);
        t->snap[i] = t->cur[i] + (int32_t)cr_rng_below(&g, 9) - 4;
        t->curk[i % K] += t->cur[i];
        t->snapk[i % K] += t->snap[i] > 0 ? t->snap[i] : 0;
    }
    t->snap[1 * K + 2] = -2; /* a late decrement: counts as 0 */
    t->snap[1 * K + 0] = 40; /* the stale proposal strongly favours topic 0 for word 1 */
}

/* The exact conditional of token i written out from the counts. */
static void exact_by_hand(const tiny *t, int64_t i, double alpha, double beta, double *p) {
    const cr_lda_corpus *c = t->c;
    int64_t d = 0;
    while (c->doc_off[d + 1] <= i) d++;
    int ndk[K] = {0};
    for (int64_t j = c->doc_off[d]; j < c->doc_off[d + 1]; j++)
        if (j != i) ndk[c->z[j]]++;
    double tot = 0;
    int r = c->row[i], s = c->z[i];
    for (int k = 0; k < K; k++) {
        double nw = t->cur[r * K + k] - (k == s), nk = t->curk[k] - (k == s);
        tot += p[k] = (ndk[k] + alpha) * (nw + beta) / (nk + V * beta);
    }
    for (int k = 0; k < K; k++) p[k] /= tot;
}

/* Chi-square p-value of `chains` independent MH chains of token i. */
static double chain_pvalue(tiny *t, int64_t i, int flags, double *exact) {
    enum { CHAINS = 40000 };
    static int32_t out[CHAINS];
    cr_lda_sample_opts o = {CR_LDA_MH, 0.5, 0.1, 1, 99, 0, 0};
    cr_err e;
    if (cr_lda_mh_chain(t->c, 0, t->snap, t->snapk, t->cur, t->curk, i, &o, flags, CHAINS, 30, out, exact, &e))
        return -1;
    long cnt[K] = {0};
    for (int q = 0; q < CHAINS; q++) cnt[out[q]]++;
    return chi2_pvalue(st_chi2(cnt, exact, K, CHAINS), K - 1);
}

static void test_mh_chain_reaches_exact_conditional(void) {
    tiny t;
    tiny_init(&t);
    double ex[K], hand[K];
    for (int64_t i = 0; i < t.c->ntokens; i += 4) {
        double pv = chain_pvalue(&t, i, 0, ex);
        exact_by_hand(&t, i, 0.5, 0.1, hand);
        for (int k = 0; k < K; k++) CR_CHECK_NEAR(ex[k], hand[k], 1e-12);
        if (pv <= 0.001) printf("  token %d: p = %g\n", (int)i, pv);
        CR_CHECK(pv > 0.001);
    }
    cr_lda_corpus_destroy(&t.c);
}

/* Token 1 is word 1, whose stale proposal is far from the target: without
 * the q ratio the chain settles elsewhere. */
static void test_wrong_acceptance_fails(void) {
    tiny t;
    tiny_init(&t);
    double ex[K];
    CR_CHECK(t.c->word[1] == 1);
    double good = chain_pvalue(&t, 1, 0, ex), bad = chain_pvalue(&t, 1, CR_LDA_TEST_NO_QRATIO, ex);
    CR_CHECK(good > 0.001);
    CR_CHECK(bad < 1e-6);
    cr_lda_corpus_destroy(&t.c);
}

/* A lone token resampled by the plain sampler against fixed other counts:
 * each call draws from the exact conditional (the delta is undone). */
static void test_plain_draws_exact_conditional(void) {
    static const int doc[] = {3, -1};
    cr_lda_corpus *c = make_corpus(doc, 2, V);
    cr_err e;
    cr_lda_corpus_init(c, K, 1, &e);
    cr_lda_corpus_chunks(c, 10, &e);
    int32_t nw[K] = {3, 0, 7, 1, 2}, nk[K] = {10, 4, 12, 6, 9}, dw[K], dk[K];
    nw[c->z[0]]++;
    nk[c->z[0]]++;
    cr_lda_sample_opts o = {CR_LDA_PLAIN, 0.5, 0.1, 1, 0, 0, 0};
    double p[K], tot = 0;
    long cnt[K] = {0};
    for (int k = 0; k < K; k++) tot += p[k] = (0 + 0.5) * (nw[k] - (k == c->z[0]) + 0.1) / (nk[k] - (k == c->z[0]) + V * 0.1);
    for (int k = 0; k < K; k++) p[k] /= tot;
    int z0 = c->z[0];
    enum { N = 40000 };
    for (int n = 0; n < N; n++) {
        cr_lda_sample_stats st;
        o.seed = (uint64_t)n;
        c->z[0] = z0;
        CR_CHECK(cr_lda_sample(c, 0, nw, nk, dw, dk, &o, &st, &e) == 0);
        CR_CHECK(st.tokens == 1);
        cnt[c->z[0]]++;
        int sum = 0;
        for (int k = 0; k < K; k++) sum += dw[k] + (dw[k] != dk[k]) * 1000;
        CR_CHECK(sum == 0);
    }
    CR_CHECK(chi2_pvalue(st_chi2(cnt, p, K, N), K - 1) > 0.001);
    cr_lda_corpus_destroy(&c);
}


/* Log of the collapsed joint p(w, z) of a tiny corpus at topics z (K = 2). */
static double joint_log(const cr_lda_corpus *c, const int32_t *z, double alpha, double beta) {
    enum { K2 = 2 };
    double ll = 0;
    int nwk[V * K2] = {0}, nk[K2] = {0};
    for (int64_t d = 0; d < c->ndocs; d++) {
        int ndk[K2] = {0};
        for (int64_t i = c->doc_off[d]; i < c->doc_off[d + 1]; i++) ndk[z[i]]++, nwk[c->word[i] * K2 + z[i]]++, nk[z[i]]++;
        for (int k = 0; k < K2; k++) ll += lgamma(ndk[k] + alpha);
        ll -= lgamma((double)(c->doc_off[d + 1] - c->doc_off[d]) + K2 * alpha);
    }
    for (int k = 0; k < K2; k++) {
        ll -= lgamma(nk[k] + (double)c->V * beta);
        for (int w = 0; w < c->V; w++) ll += lgamma(nwk[w * K2 + k] + beta);
    }
    return ll;
}

/* Sweeps visit the joint assignments of a 6-token corpus (64 states at
 * K = 2) with the exact posterior frequencies. docs: word ids, -1 ends a
 * document; tpc: tokens per chunk; after each chunk its deltas go into
 * the global counts, from which the next chunk's snapshot is taken.
 * Returns the chi-square p-value. */
static double joint_pvalue(const int *docs, int nd, int tpc, int sampler, int flags) {
    enum { N = 6, S = 64, SWEEPS = 300000, THIN = 2 }; /* every THIN-th sweep: successive ones are correlated */
    cr_lda_corpus *c = make_corpus(docs, nd, 3);
    cr_err e;
    cr_lda_corpus_init(c, 2, 5, &e);
    cr_lda_corpus_chunks(c, tpc, &e);
    const double alpha = 0.7, beta = 0.4;
    double p[S], tot = 0;
    for (int st = 0; st < S; st++) {
        int32_t z[N];
        for (int i = 0; i < N; i++) z[i] = (st >> i) & 1;
        tot += p[st] = exp(joint_log(c, z, alpha, beta));
    }
    for (int st = 0; st < S; st++) p[st] /= tot;
    int32_t nwk[3 * 2], nk[2], snap[3 * 2], dw[3 * 2], dk[2];
    cr_lda_word_topic_counts(c, 0, 3, nwk);
    nk[0] = nk[1] = 0;
    for (int i = 0; i < 6; i++) nk[i % 2] += nwk[i];
    cr_lda_sample_opts o = {sampler, alpha, beta, 1, 0, flags, 0}; /* one MH step: the wrong variant shows most */
    long cnt[S] = {0};
    for (int sw = 0; sw < SWEEPS; sw++) {
        for (int64_t ch = 0; ch < c->nchunks; ch++) {
            cr_lda_sample_stats r;
            const int64_t *keys = c->key + c->key_off[ch];
            int64_t nkeys = cr_lda_chunk_nkeys(c, ch);
            for (int64_t j = 0; j < nkeys; j++) memcpy(snap + 2 * j, nwk + 2 * keys[j], 2 * sizeof *snap);
            o.seed = (uint64_t)sw;
            if (cr_lda_sample(c, ch, snap, nk, dw, dk, &o, &r, &e)) return -1;
            for (int64_t j = 0; j < nkeys * 2; j++) nwk[2 * keys[j / 2] + j % 2] += dw[j];
            for (int k = 0; k < 2; k++) nk[k] += dk[k];
        }
        if (sw % THIN) continue;
        int st = 0;
        for (int i = 0; i < N; i++) st |= c->z[i] << i;
        cnt[st]++;
    }
    double pv = chi2_pvalue(st_chi2(cnt, p, S, SWEEPS / THIN), S - 1);
    printf("  %s%s: joint p = %.3g (tv %.4f)\n", sampler == CR_LDA_MH ? "mh" : "plain",
           flags ? " (wrong)" : "", pv, st_tv(cnt, p, S, SWEEPS / THIN));
    cr_lda_corpus_destroy(&c);
    return pv;
}

/* Two documents of three tokens, one chunk: the plain sampler is exact. */
static void test_joint_posterior_plain(void) {
    static const int docs[] = {0, 1, 1, -1, 2, 0, 1, -1};
    CR_CHECK(joint_pvalue(docs, 8, 1000, CR_LDA_PLAIN, 0) > 0.001);
}

/* Six one-token documents, a chunk each: the MH sampler's snapshot holds
 * the token itself; with the proposal corrected for it the sweeps are
 * exact, without (LightLDA's plain stale table) they are not. */
static void test_joint_posterior_mh(void) {
    static const int docs[] = {0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 0, -1};
    CR_CHECK(joint_pvalue(docs, 12, 1, CR_LDA_MH, 0) > 0.001);
    CR_CHECK(joint_pvalue(docs, 12, 1, CR_LDA_MH, CR_LDA_TEST_NO_OWN) < 1e-6);
}


int main(void) {
    CR_RUN(test_mh_chain_reaches_exact_conditional);
    CR_RUN(test_wrong_acceptance_fails);
    CR_RUN(test_plain_draws_exact_conditional);
    CR_RUN(test_joint_posterior_plain);
    CR_RUN(test_joint_posterior_mh);
    return cr_test_done();
}
