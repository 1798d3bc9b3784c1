#ifndef CR_PRED_METRICS_H
#define CR_PRED_METRICS_H
/* Quality of predictions against labels: RMSE, logloss, accuracy, AUC.
 *
 * All take caller-owned float arrays of length n (nothing is kept) and
 * accumulate in double. Labels: y > 0 is the positive class, anything else
 * negative (so both {0, 1} and {-1, +1} labels work). Each returns 0 and
 * writes *out, or -1 with a message in e (n == 0, non-finite input, or an
 * undefined metric such as AUC without both classes). */

#include <stdint.h>

#include "base/cr_err.h"

/* sqrt(mean((pred - truth)^2)). */
int cr_metric_rmse(const float *pred, const float *truth, int64_t n, double *out, cr_err *e);

/* Mean binary cross-entropy, p = probability of the positive class, clipped
 * to [1e-15, 1 - 1e-15] so that a confident mistake costs 34.5, not inf.
 * p outside [0, 1] is an error. */
int cr_metric_logloss(const float *p, const float *y, int64_t n, double *out, cr_err *e);

/* Fraction of items where (score >= threshold) agrees with (y > 0). Use
 * threshold 0.5 for probabilities, 0 for margins. */
int cr_metric_accuracy(const float *score, const float *y, int64_t n, double threshold,
                       double *out, cr_err *e);

/* Area under the ROC curve as the Mann-Whitney statistic: sort by score,
 * give tied scores their mean rank, AUC = (R_pos - P(P+1)/2) / (P N) where
 * R_pos is the rank sum of the P positives and N the number of negatives.
 * Ties between a positive and a negative therefore count one half. Needs at
 * least one positive and one negative. O(n log n), allocates n indices. */
int cr_metric_auc(const float *score, const float *y, int64_t n, double *out, cr_err *e);

#endif
