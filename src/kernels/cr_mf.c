/* Matrix factorization kernels: see cr_mf.h.
 *
 * Built at -O3 whatever the global level: GCC's -O2 leaves the dim-wide row
 * loops scalar, which costs ~30% of the kernel's speed (measured with the
 * dim-16 set of tests/bench/mf.sh: 36M vs 50M cells/s). */
#pragma GCC optimize("O3")
#include <float.h>

#include "kernels/cr_mf.h"

static inline float dot(const float *a, const float *b, int64_t d) {
    float s = 0;
    for (int64_t k = 0; k < d; k++) s += a[k] * b[k];
    return s;
}

/* Gradient of one cell's loss at (w, h) into gw, gh; returns e = x - w.h. */
static inline float cell_grad(const float *w, const float *h, float x, float lambda, int64_t d,
                              float *gw, float *gh) {
    float e = x - dot(w, h, d);
    for (int64_t k = 0; k < d; k++) {
        gw[k] = -2.0f * e * h[k] + 2.0f * lambda * w[k];
        gh[k] = -2.0f * e * w[k] + 2.0f * lambda * h[k];
    }
    return e;
}

#define MAXD_STACK 1024
/* The SGD loop. With g_w = -2 e h + 2 lambda w (and g_h alike), the update
 * w -= lr g_w is w = a w + b h with a = 1 - 2 lr lambda, b = 2 lr e: the same
 * math as cell_grad in fewer operations. */
void cr_mf_sgd(const cr_mf_batch *b, cr_mat *W, cr_mat *H, float lr, float lambda, cr_mf_stats *st) {
    const int64_t d = W->cols;
    const float a = 1.0f - 2.0f * lr * lambda;
    double sse = 0, reg = 0;
    for (int64_t c = 0; c < b->n; c++) {
        float *w = W->data + (int64_t)b->wi[c] * d;
        float *h = H->data + (int64_t)b->hj[c] * d;
        float p = 0, ww = 0, hh = 0;
        for (int64_t k = 0; k < d; k++) {
            p += w[k] * h[k];
            ww += w[k] * w[k];
            hh += h[k] * h[k];
        }
        float e = b->x[c] - p;
        sse += (double)e * e;
        reg += (double)lambda * (ww + hh);
        const float be = 2.0f * lr * e;
        for (int64_t k = 0; k < d; k++) {
            float wk = w[k];
            w[k] = a * wk + be * h[k];
            h[k] = a * h[k] + be * wk;
        }
    }
    st->sse += sse;
    st->reg += reg;
    st->n += b->n;
}

double cr_mf_loss_grad(const cr_mf_batch *b, const cr_mat *W, const cr_mat *H, float lambda,
                       cr_mat *gW, cr_mat *gH) {
    const int64_t d = W->cols;
    double loss = 0;
    float gw[MAXD_STACK], gh[MAXD_STACK];
    for (int64_t c = 0; c < b->n; c++) {
        const float *w = cr_mat_row(W, b->wi[c]), *h = cr_mat_row(H, b->hj[c]);
        float *aw = cr_mat_row(gW, b->wi[c]), *ah = cr_mat_row(gH, b->hj[c]);
        double e;
        if (d <= MAXD_STACK) {
            e = cell_grad(w, h, b->x[c], lambda, d, gw, gh);
            for (int64_t k = 0; k < d; k++) {
                aw[k] += gw[k];
                ah[k] += gh[k];
            }
        } else {
            e = b->x[c] - dot(w, h, d);
            for (int64_t k = 0; k < d; k++) {
                aw[k] += (float)(-2.0 * e * h[k] + 2.0 * lambda * w[k]);
                ah[k] += (float)(-2.0 * e * w[k] + 2.0 * lambda * h[k]);
            }
        }
        loss += e * e + (double)lambda * ((double)dot(w, w, d) + dot(h, h, d));
    }
    return loss;
}

void cr_mf_eval(const cr_mf_batch *b, const cr_mat *W, const cr_mat *H, cr_mf_stats *st) {
    const int64_t d = W->cols;
    double sse = 0;
    for (int64_t c = 0; c < b->n; c++) {
        double e = b->x[c] - dot(cr_mat_row(W, b->wi[c]), cr_mat_row(H, b->hj[c]), d);
        sse += e * e;
    }
    st->sse += sse;
    st->n += b->n;
}

/* Why the division is in double: for a learning rate below 1/FLT_MAX
 * (about 2.9e-39, a denormal float, where a bold driver that keeps halving
 * ends up) 1/lr overflows to inf in float, and an unchanged value (delta 0)
 * times inf is NaN, which the push then spreads to every row. In double the
 * quotient is the change per unit of lr, about the size of the gradient;
 * it is clamped into float range so that no delta becomes inf either. */
void cr_mf_delta_to_grad(cr_mat *cur, const float *orig, float lr) {
    int64_t n = cur->rows * cur->cols;
    if (!(lr > 0)) { /* 0 (or a negative/NaN rate, which no table accepts): no change */
        for (int64_t k = 0; k < n; k++) cur->data[k] = 0.0f;
        return;
    }
    double inv = 1.0 / (double)lr;
    for (int64_t k = 0; k < n; k++) {
        double g = ((double)orig[k] - (double)cur->data[k]) * inv;
        cur->data[k] = (float)(g > FLT_MAX ? FLT_MAX : g < -FLT_MAX ? -FLT_MAX : g);
    }
}

int cr_mf_check_batch(const cr_mf_batch *b, int64_t wrows, int64_t hrows) {
    for (int64_t c = 0; c < b->n; c++)
        if (b->wi[c] < 0 || b->wi[c] >= wrows || b->hj[c] < 0 || b->hj[c] >= hrows) return -1;
    return 0;
}
