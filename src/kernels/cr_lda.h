#ifndef CR_LDA_H
#define CR_LDA_H
/* LDA collapsed Gibbs sweeps over one chunk of a worker's documents against
 * a stale snapshot of the word-topic counts (LightLDA, Yuan et al. 2015).
 *
 * Per token i of document d, word w, current topic s, the target is
 *   pi(k) = (n_dk + alpha)(n_wk + beta) / (n_k + V beta)     (token i excluded)
 * with current counts n = snapshot + this call's own changes (a negative
 * current count, possible when other workers' decrements arrive late under
 * asynchronous consistency, counts as 0 in pi; nothing is clamped in the
 * counts themselves). n_dk of one document at a time is derived from z in a
 * dense K scratch (filled and cleared in O(L_d)): no D x K matrix.
 *
 * Samplers:
 *  - CR_LDA_PLAIN: the exact O(K) conditional (the reference).
 *  - CR_LDA_MH: O(1) amortized per token. mh_steps cycles of
 *      word proposal q_w(k) ~ (n_wk + beta) / (n_k + V beta) from the SNAPSHOT,
 *        drawn from an alias table over the word's nonzero snapshot entries
 *        (mass S_w) or a dense alias table of beta / (n_k + V beta) shared by
 *        all words (mass Q), the sparse part with probability S_w / (S_w + Q);
 *        built once per word (O(nonzeros) + one scan of the row) and once
 *        (O(K)) per call. The snapshot counts token i itself at the topic
 *        s0 it had when the call started; the proposal leaves it out
 *        (counts e = snapshot - token i; from state x the proposal is
 *        ~ (e_wk + [k = x] + beta) / (e_k + [k = x] + V beta)), which makes
 *        the step exact: a proposal that depends on the token's own value
 *        biases the sweeps (test_lda_mh.c shows it). From s0 this is the
 *        table itself; from another state it is the table thinned at s0
 *        plus a share for staying. (A snapshot entry < 1 at s0 means the
 *        token is not in it: the table is used as is.)
 *      doc proposal q_d(k) ~ n_dk + alpha (token i included): with probability
 *        K alpha / (L_d + K alpha) a uniform topic, else the topic of a
 *        uniformly random token of d;
 *    each accepted with the exact Metropolis-Hastings ratio
 *    min(1, pi(t) q(s) / (pi(s) q(t))), so every step leaves pi invariant.
 *    The sweeps are exact when the snapshot holds the chunk's current
 *    assignment and nothing else changed since (the remaining staleness:
 *    tokens of the chunk sampled earlier in the call are in the snapshot
 *    at their old topics).
 *    Proposals are drawn a few tokens ahead (they do not depend on the
 *    state) so that the memory they touch is prefetched. */

#include <stdint.h>

#include "base/cr_err.h"
#include "kernels/cr_lda_corpus.h"

enum { CR_LDA_MH = 0, CR_LDA_PLAIN = 1 };

typedef struct cr_lda_sample_opts {
    int sampler;   /* CR_LDA_MH or CR_LDA_PLAIN */
    double alpha;  /* > 0 */
    double beta;   /* > 0 */
    int mh_steps;  /* >= 1: word + doc proposal cycles per token (MH) */
    uint64_t seed; /* the call's draws depend on (seed, chunk) only */
    int test_flags; /* 0, or CR_LDA_TEST_* below: deliberately wrong samplers for tests */
    int64_t slice_rows; /* MH: rows per model slice; 0: about 4 MiB of counts and tables */
} cr_lda_sample_opts;

typedef struct cr_lda_sample_stats {
    int64_t tokens;  /* tokens sampled */
    int64_t changed; /* of those, how many changed topic */
} cr_lda_sample_stats;

/* One sweep over chunk ch (0-based) of c. nwk (nkeys x K, rows of the
 * chunk's keys) and nk (K) are the pulled snapshot, read only. dwk
 * (nkeys x K) and dk (K) are overwritten with the count changes of the sweep
 * (every move: -1 on the old topic, +1 on the new). z is updated. Errors:
 * "corpus has no topics (call init first)", "no chunk N (M chunks)",
 * "alpha must be > 0", "beta must be > 0", "mh_steps must be >= 1".
 * MH visits the rows in model slices (slice_rows) and keeps a workspace in
 * the corpus for one slice (its rows' (current, snapshot) pairs, compact:
 * at most min(K, nonzeros + 2 x tokens) per row, and the alias slots of
 * their nonzeros, about 4 MiB in use by default, freed with the corpus);
 * O(K + nkeys + the chunk's tokens + a slice's rows x K / 64 x 12 bytes of
 * bitmaps and rank prefixes) scratch per call. */
int cr_lda_sample(cr_lda_corpus *c, int64_t ch, const int32_t *nwk, const int32_t *nk, int32_t *dwk, int32_t *dk,
                  const cr_lda_sample_opts *o, cr_lda_sample_stats *st, cr_err *e);

/* sum over this part's documents of
 *   sum_k lgamma(n_dk + alpha) - lgamma(n_d + K alpha)  + lgamma(K alpha) - K lgamma(alpha)
 * in O(tokens) (lgamma(0 + alpha) terms cancel). */
double cr_lda_doc_loglik(const cr_lda_corpus *c, double alpha);

/* sum over the n entries of counts of lgamma(n + beta) - lgamma(beta) (zero
 * entries add 0). */
double cr_lda_word_loglik(const int32_t *counts, int64_t n, double beta);

/* Test hook: the MH chain of one token with the rest of the state fixed.
 * Token `token` (global index) of chunk ch; snapshot nwk/nk as in
 * cr_lda_sample, current counts cur_wk (nkeys x K) / cur_k (K) that include
 * the token at its topic z[token]. Runs `chains` independent chains, each
 * starting at topic (chain % K) and taking `steps` MH cycles, and stores
 * each chain's final topic in out[chain]. exact (K, may be NULL) gets the
 * normalized exact conditional. flags & CR_LDA_TEST_NO_QRATIO drops the
 * word proposal's q ratio from the acceptance (a wrong sampler, to show the
 * test can fail). z is left as it was. Errors as cr_lda_sample. */
#define CR_LDA_TEST_NO_QRATIO 1
/* The word proposal from the snapshot as is, counting the token itself at
 * the topic it had when the call started (LightLDA's stale table without
 * the correction): the chain then favours that topic. */
#define CR_LDA_TEST_NO_OWN 2
int cr_lda_mh_chain(cr_lda_corpus *c, int64_t ch, const int32_t *nwk, const int32_t *nk, const int32_t *cur_wk,
                    const int32_t *cur_k, int64_t token, const cr_lda_sample_opts *o, int flags, int64_t chains,
                    int steps, int32_t *out, double *exact, cr_err *e);

#endif
