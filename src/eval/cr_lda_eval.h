#ifndef CR_LDA_EVAL_H
#define CR_LDA_EVAL_H
/* LDA evaluation: collapsed training log-likelihood and held-out perplexity
 * by document completion.
 *
 * Counts come as float32 matrices (as parameter tables hold them): n_wk is
 * V x K (word-topic), n_dk is D x K (document-topic), n_k has K topic totals.
 * Counts must be finite and non-negative. Inputs stay owned by the caller. */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_mat.h"

typedef struct cr_lda_ll {
    double word_ll;   /* log p(w | z, beta) */
    double doc_ll;    /* log p(z | alpha); 0 when no n_dk was given */
    double total;     /* word_ll + doc_ll */
    double tokens;    /* N = sum_k n_k */
    double per_token; /* total / N */
} cr_lda_ll;

/* Collapsed joint log-likelihood log p(w, z) of the current assignment:
 *   word_ll = K [lgamma(V beta) - V lgamma(beta)]
 *             + sum_k [sum_w lgamma(n_wk + beta) - lgamma(n_k + V beta)]
 *   doc_ll  = D [lgamma(K alpha) - K lgamma(alpha)]
 *             + sum_d [sum_k lgamma(n_dk + alpha) - lgamma(n_d + K alpha)]
 * (n_d = sum_k n_dk). n_dk may be NULL (word part only: documents sharded
 * over workers add their doc_ll separately, LightLDA style); n_k may be NULL
 * (then the column sums of n_wk). Errors: dimension mismatch, alpha or beta
 * not positive, negative or non-finite counts, zero tokens. */
int cr_lda_loglik(const cr_mat *n_dk, const cr_mat *n_wk, const float *n_k, double alpha, double beta,
                  cr_lda_ll *out, cr_err *e);

typedef struct cr_lda_perp_opts {
    int iters;     /* Gibbs sweeps over each document's first half; 0: 20 */
    int burnin;    /* sweeps before theta is averaged; -1: iters / 2 */
    uint64_t seed; /* document d uses stream (seed, d): results do not depend on order */
} cr_lda_perp_opts;

typedef struct cr_lda_perp_result {
    double perplexity;   /* exp(-loglik / eval_tokens) */
    double loglik;       /* sum over evaluated tokens of log p(w) */
    int64_t eval_tokens; /* tokens in the second halves */
    int64_t docs;
} cr_lda_perp_result;

/* Held-out perplexity by document completion. The topics are fixed:
 * phi_wk = (n_wk + beta) / (n_k + V beta). For each document with n tokens
 * (word ids tokens[offsets[d] .. offsets[d+1]), in order):
 *   1. the first h = floor(n / 2) tokens estimate theta: their topics start
 *      uniformly at random (stream (seed, d)) and are resampled for `iters`
 *      sweeps from p(z_i = k) ~ (n_dk without i + alpha) phi_{w_i k};
 *      after each sweep past `burnin`, theta_k = (n_dk + alpha) / (h + K alpha)
 *      is added to a running mean (with h = 0, theta is uniform);
 *   2. the last n - h tokens are scored: log sum_k theta_k phi_{w k}.
 * Perplexity = exp(-(sum of those logs) / (number of those tokens)).
 * offsets has ndocs + 1 non-decreasing entries starting at 0. Errors:
 * bad offsets, word id out of range (naming document and token, 1-based),
 * bad hyperparameters, no tokens to evaluate. */
int cr_lda_perplexity(const cr_mat *n_wk, const float *n_k, double alpha, double beta, const int64_t *tokens,
                      const int64_t *offsets, int64_t ndocs, const cr_lda_perp_opts *opts,
                      cr_lda_perp_result *out, cr_err *e);

#endif
