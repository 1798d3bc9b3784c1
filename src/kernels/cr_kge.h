#ifndef CR_KGE_H
#define CR_KGE_H
/* Knowledge-graph embedding math (NuPS 5.1): logistic loss and its
 * gradient over a batch of labelled triples, and scores of queries against
 * every entity. The models, their names, the row layout and the score of one
 * triple are those of src/kernels/cr_kge_score.h (cr_kge_model,
 * cr_kge_model_parse, cr_kge_score), which the evaluator uses too, so
 * training and evaluation cannot disagree on a score.
 *
 * Loss of one triple with score f and label y (1 positive, 0 negative):
 *   log(1 + exp(-f)) if y = 1, log(1 + exp(f)) if y = 0
 * (= log(1 + exp(-t f)) with t = +1/-1; written as softplus(f) - y f, which
 * also takes soft labels y in [0, 1]), plus the L2 term
 *   lambda (|e_s|^2 + |w_r|^2 + |e_o|^2)
 * (|W_r|_F^2 for RESCAL) once per triple: a row that appears k times in a
 * batch is regularized k times, as per-update regularization does.
 *
 * The kernels work on *local copies*: E holds the rows the batch touches
 * (pulled from the entity table), R the relation rows; a triple names rows
 * of those copies. They know nothing of Lua or tables, allocate at most
 * O(d) scratch per call plus the query block of cr_kge_score_all, and run in
 * the calling thread (OpenBLAS threading is whatever the process set; tests and
 * benches set OPENBLAS_NUM_THREADS=1). */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_mat.h"
#include "kernels/cr_kge_score.h"

/* n labelled triples; arrays owned by whoever built the batch. */
typedef struct cr_kge_batch {
    int64_t n;
    const int64_t *s, *r, *o; /* rows of E, R, E (local copies), 0-based */
    const float *y;           /* label per triple: 1 positive, 0 negative */
} cr_kge_batch;

/* Sums over the triples seen: logistic loss, L2 term, triples. */
typedef struct cr_kge_stats {
    double loss, reg;
    int64_t n;
} cr_kge_stats;

/* 0 if the shapes fit the model (d >= 1; even for complex; R->cols = d, or
 * d*d for rescal), every index is a row of its matrix and every label is in
 * [0, 1]; else -1 with a message naming the first bad triple (1-based) or
 * the shape. O(n). The other functions assume it passed. */
int cr_kge_check(cr_kge_model m, const cr_kge_batch *b, const cr_mat *E, const cr_mat *R, cr_err *e);

/* Loss of the batch at fixed E, R, added to *st, and its gradient added into
 * gE, gR (same shapes as E, R; not cleared here, so repeated rows
 * accumulate and several calls sum). gE and gR may both be NULL: loss only.
 * The gradient is of the sum over the batch (no 1/n). O(n d), O(n d^2) for
 * rescal. */
void cr_kge_loss_grad(cr_kge_model m, const cr_kge_batch *b, const cr_mat *E, const cr_mat *R, float lambda,
                      cr_mat *gE, cr_mat *gR, cr_kge_stats *st);

/* The same over a split entity matrix [E; E2]: entity row i < E->rows is
 * row i of E, row E->rows + j is row j of E2 (e.g. rows of sampled
 * negatives, pulled apart from the positives' rows), and likewise for the
 * gradients gE, gE2 (shapes of E, E2). E2 and gE2 may be NULL (then this is
 * cr_kge_loss_grad). cr_kge_check_split checks a batch against [E; E2]
 * (E2 may be NULL; its columns must be E's). */
void cr_kge_loss_grad_split(cr_kge_model m, const cr_kge_batch *b, const cr_mat *E, const cr_mat *E2,
                            const cr_mat *R, float lambda, cr_mat *gE, cr_mat *gE2, cr_mat *gR, cr_kge_stats *st);
int cr_kge_check_split(cr_kge_model m, const cr_kge_batch *b, const cr_mat *E, const cr_mat *E2, const cr_mat *R,
                       cr_err *e);

/* Scores of nq queries against every row x of E: query i is the entity row
 * anchor[i] of E and the relation row rel[i] of R; out (nq x E->rows,
 * row-major, caller-owned) gets score(anchor, rel, x) for TAIL and
 * score(x, rel, anchor) for HEAD, equal (up to float rounding) to
 * cr_kge_score of each triple. Bilinear models form one query vector per
 * query and multiply the block by E with cblas_sgemm: O(nq d (n + d)) for
 * rescal, O(nq n d) otherwise; TransE is a tiled C loop, O(nq n d). Indices
 * must be in range (cr_kge_check_queries). */
void cr_kge_score_all(cr_kge_model m, cr_kge_dir dir, const cr_mat *E, const cr_mat *R, const int64_t *anchor,
                      const int64_t *rel, int64_t nq, float *out);

/* 0 if every anchor[i] < E->rows and rel[i] < R->rows (both >= 0) and the
 * shapes fit m; else -1 with a message naming the first bad query. */
int cr_kge_check_queries(cr_kge_model m, const cr_mat *E, const cr_mat *R, const int64_t *anchor,
                         const int64_t *rel, int64_t nq, cr_err *e);

#endif
