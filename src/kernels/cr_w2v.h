#ifndef CR_W2V_H
#define CR_W2V_H
/* word2vec kernels (NuPS 5.1; Mikolov et al.'s word2vec C tool): skip-gram
 * and CBOW with negative sampling over a batch of tokens, frequent-word
 * subsampling, and the tool's initialization.
 *
 * Like the MF kernels they work on *local copies* of the two tables: syn0
 * (input vectors) and syn1 (output vectors, the tool's syn1neg) hold the rows
 * pulled for a batch; b->in[i] / b->out[i] are the rows of token i in them,
 * and negatives are rows of syn1. The same word must map to one row of each
 * copy (a negative equal to the positive's row is skipped by comparing rows,
 * as the tool compares word ids); syn0 and syn1 must not overlap. They know
 * nothing of Lua or tables.
 *
 * Walk (both models, as the tool): for each token i (the center) of each
 * sentence, b = rand % window (cr_rng_below(rng, window)) shrinks the window
 * to window - b on both sides; windows stop at sentence ends.
 *   skip-gram: for each context c in the window, the pair (input row in[c],
 *     output row out[i]) gets one positive and k negative updates; the
 *     context's input vector takes the accumulated error after them.
 *   CBOW: the input is the mean h of the context's input vectors (the tool's
 *     cbow mean); one positive and k negatives against h; every context
 *     input vector then gets the whole accumulated error (the tool's update:
 *     cw times the gradient of the mean's loss; cr_w2v_cbow_loss_grad gives
 *     the true gradient).
 * One target update with label l (1 positive, 0 negative), f = <h, v>:
 *   g = (l - sigma(f)) alpha, e += g v, v += g h,
 * with sigma from the tool's table (1000 entries over [-6, 6], indexed as the
 * tool does: entry (int)((f + 6) * 83), 83 being 1000 / 6 / 2 in integers) or exact (1/(1+exp(-f))); either way f > 6 gives sigma = 1 and
 * f < -6 gives 0, as the tool clips. The loss of a target, at the
 * parameters before its update, is -log sigma(f) (positive) or
 * -log sigma(-f) (negative), computed exactly. Updates land in place, one
 * after the other (later pairs see earlier updates). */

#include <stdint.h>

#include "base/cr_mat.h"
#include "base/cr_rng.h"

#define CR_W2V_MAX_NEG 256    /* negatives per update */
#define CR_W2V_MAX_DIM 16384  /* cols of syn0/syn1: the kernels keep rows of scratch on the stack */
#define CR_W2V_MAX_EXP 6
#define CR_W2V_EXP_TABLE 1000

/* A batch of n tokens; arrays owned by the caller. */
typedef struct cr_w2v_batch {
    int64_t n;
    const int32_t *in;   /* syn0 row of each token */
    const int32_t *out;  /* syn1 row of each token */
    const int64_t *sent; /* nsent + 1 ascending offsets (sent[0] = 0, sent[nsent] = n): windows stay inside a
                          * sentence; NULL = the whole batch is one sentence */
    int64_t nsent;
} cr_w2v_batch;

typedef int32_t (*cr_w2v_draw_fn)(void *ctx);

/* Where the k negatives of each update come from (the first that is set):
 *   draw         each negative is draw(ctx) (a syn1 row);
 *   per_position rows[i * k + j], j < k, for center token i (every pair of a
 *                center shares them; n >= b->n * k);
 *   pool         rows read cyclically from pos, k per update (a pool drawn
 *                i.i.d. and not wrapped gives the tool's fresh draws); pos is
 *                advanced, so the next call continues the pool;
 *   pool + pick  each negative is rows[j] for j uniform in [0, n), drawn
 *                from the walk's rng (a pool of i.i.d. draws from pi reused
 *                at random: every negative is marginally pi; pos unused). */
typedef struct cr_w2v_negs {
    int k; /* 0 <= k <= CR_W2V_MAX_NEG */
    const int32_t *rows;
    int64_t n;
    int per_position;
    int64_t pos;
    cr_w2v_draw_fn draw;
    void *ctx;
    int pick;
} cr_w2v_negs;

typedef struct cr_w2v_params {
    int window;  /* >= 1 */
    float alpha; /* learning rate of this call (decay is the caller's) */
    int exact;   /* 1: exact sigmoid; 0: the tool's table */
    int loss;    /* 1: add the loss to the stats (an exp and a log per target) */
} cr_w2v_params;

typedef struct cr_w2v_stats {
    double loss;   /* sum of target losses (with params.loss) */
    int64_t pairs; /* skip-gram: (context, center) pairs; CBOW: centers with a non-empty window */
} cr_w2v_stats;

/* Train over the batch, in place on syn0 and syn1 (same cols, at most
 * CR_W2V_MAX_DIM). rng drives
 * the window shrink and is advanced; ng->pos is advanced for a pool. Adds to
 * *st. Rows must be in range (cr_w2v_check). */
void cr_w2v_sgns(const cr_w2v_batch *b, const cr_w2v_params *p, cr_w2v_negs *ng, cr_rng *rng, cr_mat *syn0,
                 cr_mat *syn1, cr_w2v_stats *st);
void cr_w2v_cbow(const cr_w2v_batch *b, const cr_w2v_params *p, cr_w2v_negs *ng, cr_rng *rng, cr_mat *syn0,
                 cr_mat *syn1, cr_w2v_stats *st);

/* The loss of the same targets at fixed syn0, syn1 (no update; exact
 * sigmoid, no clip) and its gradient, added into g0, g1 (shapes of syn0,
 * syn1; not cleared). With the same rng state and ng as a training call,
 * the pairs and negatives are the same. Returns the loss. For the
 * finite-difference gradient checks. */
double cr_w2v_sgns_loss_grad(const cr_w2v_batch *b, const cr_w2v_params *p, cr_w2v_negs *ng, cr_rng *rng,
                             const cr_mat *syn0, const cr_mat *syn1, cr_mat *g0, cr_mat *g1);
double cr_w2v_cbow_loss_grad(const cr_w2v_batch *b, const cr_w2v_params *p, cr_w2v_negs *ng, cr_rng *rng,
                             const cr_mat *syn0, const cr_mat *syn1, cr_mat *g0, cr_mat *g1);

/* 0 if every in row < rows0, out row and negative row (rows, not draw) <
 * rows1, all >= 0, sentences well formed, k in range and per_position has
 * enough rows; else -1 with a reason in *why (a static string). */
int cr_w2v_check(const cr_w2v_batch *b, const cr_w2v_negs *ng, int64_t rows0, int64_t rows1, const char **why);

/* The tool's probability of keeping a word seen count times among total
 * words with threshold t: (sqrt(f / (t total)) + 1) (t total) / f with
 * f = count, capped at 1; 1 when t <= 0 or count == 0. */
double cr_w2v_keep_prob(uint64_t count, uint64_t total, double t);

/* Frequent-word subsampling of words[0..n) (ids into counts): keeps word w
 * with probability cr_w2v_keep_prob(counts[w], total, t), one uniform draw of
 * rng per token, in order. Writes the kept ids to kept (may be words) and
 * returns how many. */
int64_t cr_w2v_subsample(const int32_t *words, int64_t n, const uint64_t *counts, uint64_t total, double t,
                         cr_rng *rng, int32_t *kept);

/* The tool's initialization: syn0 uniform in [-0.5/d, 0.5/d) (d = cols),
 * syn1 zero (either may be NULL). */
void cr_w2v_init(cr_mat *syn0, cr_mat *syn1, cr_rng *rng);

/* sigma(f) as the kernels use it: the table (exact = 0) or exact, clipped
 * to 0 / 1 beyond +-CR_W2V_MAX_EXP. */
float cr_w2v_sigmoid(float f, int exact);

#endif
