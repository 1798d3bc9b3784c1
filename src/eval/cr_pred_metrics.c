/* Point metrics: RMSE, logloss, accuracy, AUC (see cr_pred_metrics.h). */
#include "eval/cr_pred_metrics.h"

#include <math.h>
#include <stdlib.h>

#include "base/cr_alloc.h"

static int check_finite(const char *what, const float *a, int64_t n, cr_err *e) {
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(a[i])) return cr_errf(e, "%s[%lld] is not a finite number", what, (long long)i + 1);
    return 0;
}

static int check_inputs(const char *a_name, const float *a, const char *b_name, const float *b,
                        int64_t n, cr_err *e) {
    if (n <= 0) return cr_errf(e, "no values to evaluate (n = %lld)", (long long)n);
    if (check_finite(a_name, a, n, e) || check_finite(b_name, b, n, e)) return -1;
    return 0;
}

int cr_metric_rmse(const float *pred, const float *truth, int64_t n, double *out, cr_err *e) {
    if (check_inputs("prediction", pred, "truth", truth, n, e)) return -1;
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)pred[i] - truth[i];
        s += d * d;
    }
    *out = sqrt(s / (double)n);
    return 0;
}

int cr_metric_logloss(const float *p, const float *y, int64_t n, double *out, cr_err *e) {
    if (check_inputs("probability", p, "label", y, n, e)) return -1;
    const double lo = 1e-15, hi = 1 - 1e-15;
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] > 1)
            return cr_errf(e, "probability[%lld] = %g is outside [0, 1]", (long long)i + 1, p[i]);
        double q = p[i] < lo ? lo : p[i] > hi ? hi : p[i];
        s -= y[i] > 0 ? log(q) : log1p(-q);
    }
    *out = s / (double)n;
    return 0;
}

int cr_metric_accuracy(const float *score, const float *y, int64_t n, double threshold,
                       double *out, cr_err *e) {
    if (check_inputs("score", score, "label", y, n, e)) return -1;
    int64_t right = 0;
    for (int64_t i = 0; i < n; i++) right += ((double)score[i] >= threshold) == (y[i] > 0);
    *out = (double)right / (double)n;
    return 0;
}

typedef struct { float s; int pos; } scored;

static int by_score(const void *a, const void *b) {
    float x = ((const scored *)a)->s, z = ((const scored *)b)->s;
    return (x > z) - (x < z);
}

int cr_metric_auc(const float *score, const float *y, int64_t n, double *out, cr_err *e) {
    if (check_inputs("score", score, "label", y, n, e)) return -1;
    int64_t pos = 0;
    for (int64_t i = 0; i < n; i++) pos += y[i] > 0;
    if (pos == 0 || pos == n)
        return cr_errf(e, "AUC is undefined: %s", pos == 0 ? "no positive labels" : "no negative labels");
    scored *a = cr_xmalloc((size_t)n * sizeof *a);
    for (int64_t i = 0; i < n; i++) a[i] = (scored){score[i], y[i] > 0};
    qsort(a, (size_t)n, sizeof *a, by_score);
    double rank_sum = 0; /* sum of the (1-based, tie-averaged) ranks of the positives */
    for (int64_t i = 0; i < n;) {
        int64_t j = i, tied_pos = 0;
        while (j < n && a[j].s == a[i].s) tied_pos += a[j++].pos;
        rank_sum += (double)tied_pos * (double)(i + 1 + j) / 2.0; /* mean of ranks i+1..j */
        i = j;
    }
    free(a);
    double P = (double)pos, N = (double)(n - pos);
    *out = (rank_sum - P * (P + 1) / 2) / (P * N);
    return 0;
}
