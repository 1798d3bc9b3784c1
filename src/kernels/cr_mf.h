#ifndef CR_MF_H
#define CR_MF_H
/* Matrix factorization math (NuPS 5.1): X ~ W H^T over revealed cells.
 *
 * Loss of one cell (i, j, x):  (x - w_i.h_j)^2 + lambda (|w_i|^2 + |h_j|^2)
 * (L2 regularization applied per update). The kernels work on a batch of
 * cells whose rows and columns index *local copies*: W holds the batch's
 * unique rows (pulled from the W table), H its unique columns; wi[c], hj[c]
 * are row indices into those copies. They know nothing of Lua or tables. */

#include <stdint.h>

#include "base/cr_mat.h"

/* A batch of n cells; arrays owned by whoever built the batch. */
typedef struct cr_mf_batch {
    int64_t n;
    const int32_t *wi; /* row of W (local copy) per cell */
    const int32_t *hj; /* row of H (local copy) per cell */
    const float *x;    /* observed value per cell */
} cr_mf_batch;

/* Sums over a batch: squared error, regularization term, cells. */
typedef struct cr_mf_stats {
    double sse, reg;
    int64_t n;
} cr_mf_stats;

/* Plain SGD, one cell after the other, in place on W and H (later cells see
 * earlier updates): g_w = -2 e h + 2 lambda w, g_h = -2 e w + 2 lambda h with
 * e = x - w.h, then w -= lr g_w, h -= lr g_h. Adds the loss of each cell, at
 * the parameters before its update, to *st. Indices must be in range
 * (checked by the caller; cr_mf_check_batch). */
void cr_mf_sgd(const cr_mf_batch *b, cr_mat *W, cr_mat *H, float lr, float lambda, cr_mf_stats *st);

/* Loss of the batch at fixed W, H (no update) and its gradient, added into
 * gW, gH (same shapes as W, H; not cleared here). Returns the loss. The same
 * per-cell math as cr_mf_sgd: used by the finite-difference gradient check. */
double cr_mf_loss_grad(const cr_mf_batch *b, const cr_mat *W, const cr_mat *H, float lambda,
                       cr_mat *gW, cr_mat *gH);

/* Prediction error only: adds sum (x - w.h)^2 and n to *st (reg untouched). */
void cr_mf_eval(const cr_mf_batch *b, const cr_mat *W, const cr_mat *H, cr_mf_stats *st);

/* Turn updated copies into the gradient sums a table's sgd optimizer needs:
 * cur = (orig - cur) / lr, so that the owner's w -= lr g reproduces the local
 * change. orig holds cur's values before the update (same shape). lr <= 0
 * gives zeros; any lr > 0, denormal ones included, gives finite values. */
void cr_mf_delta_to_grad(cr_mat *cur, const float *orig, float lr);

/* 0 if every wi < W rows, hj < H rows, both non-negative; else -1. */
int cr_mf_check_batch(const cr_mf_batch *b, int64_t wrows, int64_t hrows);

#endif
