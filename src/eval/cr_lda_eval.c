/* LDA log-likelihood and document-completion perplexity (see cr_lda_eval.h). */
#include "eval/cr_lda_eval.h"

#include <math.h>
#include <stdlib.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

static int check_counts(const char *what, const float *a, int64_t rows, int64_t cols, cr_err *e) {
    for (int64_t i = 0; i < rows * cols; i++)
        if (!(a[i] >= 0) || !isfinite(a[i]))
            return cr_errf(e, "%s[%lld][%lld] = %g is not a non-negative count", what, (long long)(i / cols + 1),
                           (long long)(i % cols + 1), a[i]);
    return 0;
}

static int check_hyper(double alpha, double beta, cr_err *e) {
    if (!(alpha > 0) || !isfinite(alpha)) return cr_errf(e, "alpha must be positive, got %g", alpha);
    if (!(beta > 0) || !isfinite(beta)) return cr_errf(e, "beta must be positive, got %g", beta);
    return 0;
}

/* Topic totals: n_k as given, or the column sums of n_wk. Caller frees. */
static double *topic_totals(const cr_mat *n_wk, const float *n_k, cr_err *e) {
    int64_t K = n_wk->cols;
    double *t = cr_xcalloc((size_t)K, sizeof(double));
    if (n_k) {
        if (check_counts("n_k", n_k, 1, K, e)) {
            free(t);
            return NULL;
        }
        for (int64_t k = 0; k < K; k++) t[k] = n_k[k];
    } else {
        for (int64_t w = 0; w < n_wk->rows; w++)
            for (int64_t k = 0; k < K; k++) t[k] += n_wk->data[w * K + k];
    }
    return t;
}

int cr_lda_loglik(const cr_mat *n_dk, const cr_mat *n_wk, const float *n_k, double alpha, double beta,
                  cr_lda_ll *out, cr_err *e) {
    if (check_hyper(alpha, beta, e)) return -1;
    int64_t V = n_wk->rows, K = n_wk->cols;
    if (V <= 0 || K <= 0) return cr_errf(e, "n_wk is empty");
    if (n_dk && n_dk->cols != K)
        return cr_errf(e, "n_dk has %lld topics (columns), n_wk has %lld", (long long)n_dk->cols, (long long)K);
    if (check_counts("n_wk", n_wk->data, V, K, e)) return -1;
    if (n_dk && check_counts("n_dk", n_dk->data, n_dk->rows, K, e)) return -1;
    double *nk = topic_totals(n_wk, n_k, e);
    if (!nk) return -1;
    double w = (double)K * (lgamma(V * beta) - (double)V * lgamma(beta)), N = 0;
    for (int64_t k = 0; k < K; k++) {
        w -= lgamma(nk[k] + V * beta);
        N += nk[k];
    }
    free(nk);
    for (int64_t i = 0; i < V * K; i++) w += lgamma(n_wk->data[i] + beta);
    double d = 0;
    if (n_dk) {
        d = (double)n_dk->rows * (lgamma(K * alpha) - (double)K * lgamma(alpha));
        for (int64_t r = 0; r < n_dk->rows; r++) {
            double nd = 0;
            for (int64_t k = 0; k < K; k++) {
                float c = n_dk->data[r * K + k];
                d += lgamma(c + alpha);
                nd += c;
            }
            d -= lgamma(nd + K * alpha);
        }
    }
    if (!(N > 0)) return cr_errf(e, "no tokens: the topic totals sum to 0");
    *out = (cr_lda_ll){w, d, w + d, N, (w + d) / N};
    return 0;
}

static int check_docs(const int64_t *tokens, const int64_t *offsets, int64_t ndocs, int64_t V, cr_err *e) {
    if (ndocs <= 0) return cr_errf(e, "no documents");
    if (offsets[0] != 0) return cr_errf(e, "offsets must start at 0, got %lld", (long long)offsets[0]);
    for (int64_t d = 0; d < ndocs; d++) {
        if (offsets[d + 1] < offsets[d])
            return cr_errf(e, "offsets decrease at document %lld", (long long)d + 1);
        for (int64_t i = offsets[d]; i < offsets[d + 1]; i++)
            if (tokens[i] < 0 || tokens[i] >= V)
                return cr_errf(e, "document %lld token %lld: word id %lld out of range [0, %lld)", (long long)d + 1,
                               (long long)(i - offsets[d] + 1), (long long)tokens[i], (long long)V);
    }
    return 0;
}

typedef struct {
    const cr_mat *n_wk;
    const double *inv_den; /* 1 / (n_k + V beta) */
    double alpha, beta;
    int iters, burnin;
    int64_t K;
    double *p, *theta; /* K each */
    int *ndk;          /* K */
    int *z;            /* topics of the first half */
} fold_ctx;

static double phi(const fold_ctx *c, int64_t w, int64_t k) {
    return ((double)c->n_wk->data[w * c->K + k] + c->beta) * c->inv_den[k];
}

/* Estimate c->theta for the h tokens w[0..h) by Gibbs fold-in. */
static void fold_in(fold_ctx *c, const int64_t *w, int64_t h, cr_rng *g) {
    int64_t K = c->K;
    for (int64_t k = 0; k < K; k++) {
        c->ndk[k] = 0;
        c->theta[k] = h == 0 ? 1.0 / (double)K : 0;
    }
    if (h == 0) return;
    for (int64_t i = 0; i < h; i++) c->ndk[c->z[i] = (int)cr_rng_below(g, (uint64_t)K)]++;
    int samples = 0;
    for (int it = 0; it < c->iters; it++) {
        for (int64_t i = 0; i < h; i++) {
            c->ndk[c->z[i]]--;
            double sum = 0;
            for (int64_t k = 0; k < K; k++) sum = c->p[k] = sum + (c->ndk[k] + c->alpha) * phi(c, w[i], k);
            double u = cr_rng_uniform(g) * sum;
            int64_t k = 0;
            while (k < K - 1 && c->p[k] <= u) k++;
            c->ndk[c->z[i] = (int)k]++;
        }
        if (it < c->burnin) continue;
        for (int64_t k = 0; k < K; k++) c->theta[k] += (c->ndk[k] + c->alpha) / ((double)h + (double)K * c->alpha);
        samples++;
    }
    for (int64_t k = 0; k < K; k++) c->theta[k] /= samples;
}

int cr_lda_perplexity(const cr_mat *n_wk, const float *n_k, double alpha, double beta, const int64_t *tokens,
                      const int64_t *offsets, int64_t ndocs, const cr_lda_perp_opts *opts,
                      cr_lda_perp_result *out, cr_err *e) {
    if (check_hyper(alpha, beta, e)) return -1;
    int64_t V = n_wk->rows, K = n_wk->cols;
    if (V <= 0 || K <= 0) return cr_errf(e, "n_wk is empty");
    int iters = opts && opts->iters > 0 ? opts->iters : 20;
    int burnin = opts && opts->burnin >= 0 ? opts->burnin : iters / 2;
    if (opts && opts->iters < 0) return cr_errf(e, "iters must be positive");
    if (burnin >= iters) return cr_errf(e, "burnin (%d) must be less than iters (%d)", burnin, iters);
    if (check_counts("n_wk", n_wk->data, V, K, e) || check_docs(tokens, offsets, ndocs, V, e)) return -1;
    double *nk = topic_totals(n_wk, n_k, e);
    if (!nk) return -1;
    for (int64_t k = 0; k < K; k++) nk[k] = 1.0 / (nk[k] + (double)V * beta);
    int64_t maxh = 0;
    for (int64_t d = 0; d < ndocs; d++)
        if ((offsets[d + 1] - offsets[d]) / 2 > maxh) maxh = (offsets[d + 1] - offsets[d]) / 2;
    fold_ctx c = {n_wk, nk, alpha, beta, iters, burnin, K, cr_xmalloc((size_t)K * sizeof(double)),
                  cr_xmalloc((size_t)K * sizeof(double)), cr_xmalloc((size_t)K * sizeof(int)),
                  cr_xmalloc((size_t)(maxh + 1) * sizeof(int))};
    double ll = 0;
    int64_t ntok = 0;
    for (int64_t d = 0; d < ndocs; d++) {
        const int64_t *w = tokens + offsets[d];
        int64_t n = offsets[d + 1] - offsets[d], h = n / 2;
        cr_rng g;
        cr_rng_seed2(&g, opts ? opts->seed : 0, (uint64_t)d);
        fold_in(&c, w, h, &g);
        for (int64_t i = h; i < n; i++) {
            double p = 0;
            for (int64_t k = 0; k < K; k++) p += c.theta[k] * phi(&c, w[i], k);
            ll += log(p);
        }
        ntok += n - h;
    }
    free(nk);
    free(c.p);
    free(c.theta);
    free(c.ndk);
    free(c.z);
    if (ntok == 0) return cr_errf(e, "no tokens to evaluate (all documents are empty)");
    *out = (cr_lda_perp_result){exp(-ll / (double)ntok), ll, ntok, ndocs};
    return 0;
}
