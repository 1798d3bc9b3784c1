/* LDA evaluation: the lgamma log-likelihood equals the chain-rule (Polya
 * urn) product computed token by token; perplexity matches a hand
 * computation for K = 1, near-deterministic topics, and the exact posterior
 * mean of theta enumerated over all topic assignments of short documents. */
#include <stdlib.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "eval/cr_lda_eval.h"

static void test_loglik_chain_rule(void) {
    enum { D = 4, V = 7, K = 3, L = 9 };
    const double alpha = 0.3, beta = 0.05;
    cr_rng g;
    cr_rng_seed(&g, 5);
    float ndk[D * K] = {0}, nwk[V * K] = {0}, nk[K] = {0};
    double chain = 0, doc_chain = 0;
    for (int d = 0; d < D; d++)
        for (int i = 0; i < L; i++) {
            int w = (int)cr_rng_below(&g, V), k = (int)cr_rng_below(&g, K);
            doc_chain += log((ndk[d * K + k] + alpha) / (i + K * alpha));
            chain += log((nwk[w * K + k] + beta) / (nk[k] + V * beta));
            ndk[d * K + k]++;
            nwk[w * K + k]++;
            nk[k]++;
        }
    cr_mat Md = {D, K, ndk}, Mw = {V, K, nwk};
    cr_lda_ll ll, ll2;
    cr_err e;
    CR_CHECK(cr_lda_loglik(&Md, &Mw, nk, alpha, beta, &ll, &e) == 0);
    CR_CHECK_NEAR(ll.word_ll, chain, 1e-9);
    CR_CHECK_NEAR(ll.doc_ll, doc_chain, 1e-9);
    CR_CHECK_NEAR(ll.tokens, D * L, 0);
    CR_CHECK_NEAR(ll.per_token, (chain + doc_chain) / (D * L), 1e-11);
    CR_CHECK(cr_lda_loglik(NULL, &Mw, NULL, alpha, beta, &ll2, &e) == 0); /* n_k from column sums */
    CR_CHECK_NEAR(ll2.total, chain, 1e-9);
    nwk[3] = -1;
    CR_CHECK(cr_lda_loglik(&Md, &Mw, nk, alpha, beta, &ll, &e) == -1);
    CR_CHECK_STR(e.msg, "n_wk[2][1] = -1 is not a non-negative count");
    CR_CHECK(cr_lda_loglik(&Md, &Mw, nk, 0, beta, &ll, &e) == -1);
    CR_CHECK_STR(e.msg, "alpha must be positive, got 0");
}

/* K = 1: theta = 1, so perplexity = exp(-mean log phi_w) of the second halves. */
static void test_perplexity_one_topic(void) {
    float nwk[3] = {5, 3, 2};
    cr_mat Mw = {3, 1, nwk};
    int64_t tok[7] = {0, 1, 2, 2, 0, 1, 1}, off[3] = {0, 4, 7}; /* halves: {2,2} and {1,1} */
    const double beta = 0.5;
    double phi[3];
    for (int w = 0; w < 3; w++) phi[w] = (nwk[w] + beta) / (10 + 3 * beta);
    double ll = 2 * log(phi[2]) + 2 * log(phi[1]);
    cr_lda_perp_result r;
    cr_err e;
    CR_CHECK(cr_lda_perplexity(&Mw, NULL, 0.1, beta, tok, off, 2, NULL, &r, &e) == 0);
    CR_CHECK(r.eval_tokens == 4 && r.docs == 2);
    CR_CHECK_NEAR(r.loglik, ll, 1e-12);
    CR_CHECK_NEAR(r.perplexity, exp(-ll / 4), 1e-9);
}

/* Two topics over disjoint words with a tiny beta: a document of topic-0
 * words folds in with all its first-half tokens on topic 0. */
static void test_perplexity_separated(void) {
    float nwk[4 * 2] = {50, 0, 30, 0, 0, 40, 0, 20}, nk[2] = {80, 60};
    cr_mat Mw = {4, 2, nwk};
    int64_t tok[6] = {0, 1, 0, 1, 1, 0}, off[2] = {0, 6};
    const double alpha = 0.1, beta = 1e-7;
    double th0 = (3 + alpha) / (3 + 2 * alpha), th1 = alpha / (3 + 2 * alpha), ll = 0;
    for (int i = 3; i < 6; i++) {
        int w = (int)tok[i];
        ll += log(th0 * (nwk[2 * w] + beta) / (80 + 4 * beta) + th1 * (nwk[2 * w + 1] + beta) / (60 + 4 * beta));
    }
    cr_lda_perp_opts o = {10, 2, 9};
    cr_lda_perp_result r;
    cr_err e;
    CR_CHECK(cr_lda_perplexity(&Mw, nk, alpha, beta, tok, off, 1, &o, &r, &e) == 0);
    CR_CHECK_NEAR(r.loglik, ll, 1e-9);
}

/* Exact E[theta | first half] by enumerating the K^h assignments. */
static void exact_theta(const float *nwk, const double *nk, int V, int K, double alpha, double beta,
                        const int64_t *w, int h, double *theta) {
    int total = 1;
    for (int i = 0; i < h; i++) total *= K;
    double Z = 0;
    for (int k = 0; k < K; k++) theta[k] = 0;
    for (int code = 0; code < total; code++) {
        int n[8] = {0}, c = code;
        double p = 1;
        for (int i = 0; i < h; i++, c /= K) {
            int k = c % K;
            p *= (nwk[w[i] * K + k] + beta) / (nk[k] + V * beta);
            p *= (n[k] + alpha) / (i + K * alpha); /* Polya urn prior of the sequence */
            n[k]++;
        }
        Z += p;
        for (int k = 0; k < K; k++) theta[k] += p * (n[k] + alpha) / (h + K * alpha);
    }
    for (int k = 0; k < K; k++) theta[k] /= Z;
}

static void test_perplexity_exact_posterior(void) {
    enum { V = 6, K = 3, DOCS = 5, LEN = 8 };
    const double alpha = 0.5, beta = 0.1;
    cr_rng g;
    cr_rng_seed(&g, 21);
    float nwk[V * K];
    double nk[K] = {0};
    for (int i = 0; i < V * K; i++) nk[i % K] += nwk[i] = (float)cr_rng_below(&g, 20);
    int64_t tok[DOCS * LEN], off[DOCS + 1];
    for (int d = 0; d <= DOCS; d++) off[d] = d * LEN;
    for (int i = 0; i < DOCS * LEN; i++) tok[i] = (int64_t)cr_rng_below(&g, V);
    double ll = 0;
    for (int d = 0; d < DOCS; d++) {
        double th[K];
        exact_theta(nwk, nk, V, K, alpha, beta, tok + d * LEN, LEN / 2, th);
        for (int i = LEN / 2; i < LEN; i++) {
            double p = 0;
            for (int k = 0; k < K; k++) p += th[k] * (nwk[tok[d * LEN + i] * K + k] + beta) / (nk[k] + V * beta);
            ll += log(p);
        }
    }
    cr_mat Mw = {V, K, nwk};
    cr_lda_perp_opts o = {20000, 50, 1};
    cr_lda_perp_result r, r2;
    cr_err e;
    CR_CHECK(cr_lda_perplexity(&Mw, NULL, alpha, beta, tok, off, DOCS, &o, &r, &e) == 0);
    CR_CHECK_NEAR(r.perplexity, exp(-ll / (DOCS * LEN / 2)), 0.003 * r.perplexity); /* MC error ~0.1%; prior-only theta: 1.3% off */
    CR_CHECK(cr_lda_perplexity(&Mw, NULL, alpha, beta, tok, off, DOCS, &o, &r2, &e) == 0);
    CR_CHECK(r.loglik == r2.loglik); /* seeded: identical */
}

static void test_perplexity_errors(void) {
    float nwk[4] = {1, 1, 1, 1};
    cr_mat Mw = {2, 2, nwk};
    int64_t tok[3] = {0, 2, 1}, off[2] = {0, 3}, off0[2] = {0, 0};
    cr_lda_perp_result r;
    cr_err e;
    CR_CHECK(cr_lda_perplexity(&Mw, NULL, 0.1, 0.1, tok, off, 1, NULL, &r, &e) == -1);
    CR_CHECK_STR(e.msg, "document 1 token 2: word id 2 out of range [0, 2)");
    CR_CHECK(cr_lda_perplexity(&Mw, NULL, 0.1, 0.1, tok, off0, 1, NULL, &r, &e) == -1);
    CR_CHECK_STR(e.msg, "no tokens to evaluate (all documents are empty)");
    cr_lda_perp_opts o = {5, 5, 0};
    CR_CHECK(cr_lda_perplexity(&Mw, NULL, 0.1, 0.1, tok, off0, 1, &o, &r, &e) == -1);
    CR_CHECK_STR(e.msg, "burnin (5) must be less than iters (5)");
}

int main(void) {
    CR_RUN(test_loglik_chain_rule);
    CR_RUN(test_perplexity_one_topic);
    CR_RUN(test_perplexity_separated);
    CR_RUN(test_perplexity_exact_posterior);
    CR_RUN(test_perplexity_errors);
    return cr_test_done();
}
