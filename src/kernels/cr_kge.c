/* Knowledge-graph embedding kernels: see cr_kge.h. Layout of this file:
 * checks; per-model gradients of the score; the batch
 * loss; scoring against all entities.
 *
 * Built at -O3 like cr_mf.c: the d-wide row loops are the whole cost. */
#pragma GCC optimize("O3")
#include "kernels/cr_kge.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

/* ---- checks */

static int check_shape(cr_kge_model m, const cr_mat *E, const cr_mat *R, cr_err *e) {
    int64_t d = E->cols;
    if (d < 1) return cr_errf(e, "entity rows have dimension %lld (need >= 1)", (long long)d);
    if (m == CR_KGE_COMPLEX && d % 2)
        return cr_errf(e, "complex: entity dimension %lld is odd (rows are [re | im] halves)", (long long)d);
    int64_t want = m == CR_KGE_RESCAL ? d * d : d;
    if (R->cols != want)
        return cr_errf(e, "relation rows have %lld columns, expected %lld (%s)", (long long)R->cols, (long long)want,
                       m == CR_KGE_RESCAL ? "d*d for rescal" : "the entity dimension");
    return 0;
}

static int bad_row(int64_t i, int64_t n) { return i < 0 || i >= n; }

int cr_kge_check_split(cr_kge_model m, const cr_kge_batch *b, const cr_mat *E, const cr_mat *E2, const cr_mat *R,
                       cr_err *e) {
    if (check_shape(m, E, R, e)) return -1;
    if (E2 && E2->cols != E->cols)
        return cr_errf(e, "sampled entity rows have %lld columns, the entity rows %lld", (long long)E2->cols,
                       (long long)E->cols);
    int64_t ne = E->rows + (E2 ? E2->rows : 0);
    for (int64_t i = 0; i < b->n; i++) {
        if (bad_row(b->s[i], ne) || bad_row(b->o[i], ne))
            return cr_errf(e, "triple %lld: entity row %lld out of range [0, %lld)", (long long)i + 1,
                           (long long)(bad_row(b->s[i], ne) ? b->s[i] : b->o[i]), (long long)ne);
        if (bad_row(b->r[i], R->rows))
            return cr_errf(e, "triple %lld: relation row %lld out of range [0, %lld)", (long long)i + 1,
                           (long long)b->r[i], (long long)R->rows);
        if (!(b->y[i] >= 0.0f && b->y[i] <= 1.0f))
            return cr_errf(e, "triple %lld: label %g is not in [0, 1] (1 positive, 0 negative)", (long long)i + 1,
                           (double)b->y[i]);
    }
    return 0;
}

int cr_kge_check(cr_kge_model m, const cr_kge_batch *b, const cr_mat *E, const cr_mat *R, cr_err *e) {
    return cr_kge_check_split(m, b, E, NULL, R, e);
}

int cr_kge_check_queries(cr_kge_model m, const cr_mat *E, const cr_mat *R, const int64_t *anchor,
                         const int64_t *rel, int64_t nq, cr_err *e) {
    if (check_shape(m, E, R, e)) return -1;
    for (int64_t i = 0; i < nq; i++) {
        if (bad_row(anchor[i], E->rows))
            return cr_errf(e, "query %lld: entity row %lld out of range [0, %lld)", (long long)i + 1,
                           (long long)anchor[i], (long long)E->rows);
        if (bad_row(rel[i], R->rows))
            return cr_errf(e, "query %lld: relation row %lld out of range [0, %lld)", (long long)i + 1,
                           (long long)rel[i], (long long)R->rows);
    }
    return 0;
}

/* ---- gradients of the score, times c, added into gs, gr, go. The rows
 * s, r, o are read from the parameters, never from the gradients, so gs and
 * go may be the same row (a triple (x, r, x)). */

static void grad_distmult(const float *s, const float *r, const float *o, int64_t d, float c, float *gs, float *gr,
                          float *go) {
    for (int64_t k = 0; k < d; k++) {
        gs[k] += c * r[k] * o[k];
        gr[k] += c * s[k] * o[k];
        go[k] += c * s[k] * r[k];
    }
}

static void grad_complex(const float *s, const float *r, const float *o, int64_t d, float c, float *gs, float *gr,
                         float *go) {
    int64_t h = d / 2;
    for (int64_t k = 0; k < h; k++) {
        float sr = s[k], si = s[h + k], rr = r[k], ri = r[h + k], orr = o[k], oi = o[h + k];
        gs[k] += c * (rr * orr + ri * oi);
        gs[h + k] += c * (rr * oi - ri * orr);
        gr[k] += c * (sr * orr + si * oi);
        gr[h + k] += c * (sr * oi - si * orr);
        go[k] += c * (sr * rr - si * ri);
        go[h + k] += c * (si * rr + sr * ri);
    }
}

/* d score / d x_k with x = s + r - o is -sign(x_k) (L1; 0 at a kink) or
 * -x_k / |x| (L2; 0 at x = 0); s and r get it, o its negation. */
static void grad_transe(int l1, const float *s, const float *r, const float *o, int64_t d, float c, float *gs,
                        float *gr, float *go) {
    float scale = c;
    if (!l1) {
        float nn = 0;
        for (int64_t k = 0; k < d; k++) {
            float x = s[k] + r[k] - o[k];
            nn += x * x;
        }
        scale = nn > 0 ? c / sqrtf(nn) : 0.0f;
    }
    for (int64_t k = 0; k < d; k++) {
        float x = s[k] + r[k] - o[k];
        float g = l1 ? (float)((x > 0) - (x < 0)) * -scale : -scale * x;
        gs[k] += g;
        gr[k] += g;
        go[k] -= g;
    }
}

static void grad_score(cr_kge_model m, const float *s, const float *r, const float *o, int64_t d, float c,
                       float *gs, float *gr, float *go) {
    switch (m) {
    case CR_KGE_COMPLEX: grad_complex(s, r, o, d, c, gs, gr, go); return;
    case CR_KGE_DISTMULT: grad_distmult(s, r, o, d, c, gs, gr, go); return;
    case CR_KGE_TRANSE_L1: grad_transe(1, s, r, o, d, c, gs, gr, go); return;
    case CR_KGE_TRANSE_L2: grad_transe(0, s, r, o, d, c, gs, gr, go); return;
    case CR_KGE_RESCAL: return; /* rescal_run */
    }
}

/* ---- the batch loss */

/* Loss softplus(f) - y f and its derivative sigmoid(f) - y, without
 * overflow for any finite f. */
static double logistic(float f, float y, float *dldf) {
    double x = f, ex = exp(-fabs(x));
    double sp = (x > 0 ? x : 0.0) + log1p(ex);
    double sig = x >= 0 ? 1.0 / (1.0 + ex) : ex / (1.0 + ex);
    *dldf = (float)(sig - y);
    return sp - (double)y * x;
}

static float sqnorm(const float *x, int64_t n) {
    float acc = 0;
    for (int64_t k = 0; k < n; k++) acc += x[k] * x[k];
    return acc;
}

static void add_scaled(float *g, const float *x, int64_t n, float a) {
    for (int64_t k = 0; k < n; k++) g[k] += a * x[k];
}

/* Row i of the split entity matrix [A; B] (B may be NULL). */
static float *split_row(const cr_mat *A, const cr_mat *B, int64_t i) {
    return i < A->rows ? cr_mat_row(A, i) : cr_mat_row(B, i - A->rows);
}

/* The batch and its matrices, for the RESCAL runs below. */
typedef struct kge_ctx {
    const cr_kge_batch *b;
    const cr_mat *E, *E2, *R;
    cr_mat *gE, *gE2, *gR;
    float lambda;
    double loss, reg;
} kge_ctx;

/* RESCAL over a run of triples [i, j) that share the relation and one side
 * (the batcher's layout: a positive and its neg subject corruptions share
 * (r, o); its neg object corruptions share (s, r)). With the shared side
 * fixed, the score is linear in the other: obj = 0 (o fixed): f_t = s_t . u
 * with u = W o; obj = 1 (s fixed): f_t = v . o_t with v = W^T s. So one
 * matrix-vector product scores the whole run, and the gradients of the shared
 * row and of W are one product each of the sum a = sum_t c_t x_t (x_t the
 * varying rows, c_t = dloss/df_t): d/d(shared) = W^T a or W a, d/dW = a o^T
 * or s a^T. Three d x d products per run instead of three per triple. The
 * L2 term of W is computed once per run (times its length). u, a: d floats. */
static void rescal_run(kge_ctx *k, int64_t i, int64_t j, int obj, float *u, float *a) {
    const cr_kge_batch *b = k->b;
    const int n = (int)k->E->cols, grad = k->gE && k->gR;
    const int64_t fixed = obj ? b->s[i] : b->o[i];
    const float *W = cr_mat_row(k->R, b->r[i]), *x0 = split_row(k->E, k->E2, fixed);
    cblas_sgemv(CblasRowMajor, obj ? CblasTrans : CblasNoTrans, n, n, 1.0f, W, n, x0, 1, 0.0f, u, 1);
    memset(a, 0, (size_t)n * sizeof *a);
    float l2 = 2.0f * k->lambda;
    for (int64_t t = i; t < j; t++) {
        int64_t vt = obj ? b->o[t] : b->s[t];
        const float *x = split_row(k->E, k->E2, vt);
        float c;
        k->loss += logistic(cblas_sdot(n, x, 1, u, 1), b->y[t], &c);
        if (k->lambda != 0) k->reg += (double)k->lambda * ((double)sqnorm(x, n) + sqnorm(x0, n));
        if (!grad) continue;
        float *gx = split_row(k->gE, k->gE2, vt), *g0 = split_row(k->gE, k->gE2, fixed);
        add_scaled(gx, u, n, c);
        add_scaled(a, x, n, c);
        if (l2 != 0) add_scaled(gx, x, n, l2), add_scaled(g0, x0, n, l2);
    }
    const int64_t len = j - i, dr = (int64_t)n * n;
    if (k->lambda != 0) k->reg += (double)k->lambda * (double)len * sqnorm(W, dr);
    if (!grad) return;
    float *g0 = split_row(k->gE, k->gE2, fixed), *gW = cr_mat_row(k->gR, b->r[i]);
    cblas_sgemv(CblasRowMajor, obj ? CblasNoTrans : CblasTrans, n, n, 1.0f, W, n, a, 1, 1.0f, g0, 1);
    if (obj) cblas_sger(CblasRowMajor, n, n, 1.0f, x0, 1, a, 1, gW, n);
    else cblas_sger(CblasRowMajor, n, n, 1.0f, a, 1, x0, 1, gW, n);
    if (l2 != 0) add_scaled(gW, W, dr, l2 * (float)len);
}

/* RESCAL over the batch: greedy runs of consecutive triples sharing (r, o)
 * or (s, r), the longer of the two at each start (a run may be 1 triple). */
static void rescal_batch(kge_ctx *k) {
    const cr_kge_batch *b = k->b;
    int64_t d = k->E->cols;
    float *u = cr_xmalloc((size_t)(2 * d) * sizeof(float));
    for (int64_t i = 0; i < b->n;) {
        int64_t j = i + 1, h = i + 1;
        while (j < b->n && b->r[j] == b->r[i] && b->o[j] == b->o[i]) j++;
        while (h < b->n && b->r[h] == b->r[i] && b->s[h] == b->s[i]) h++;
        int obj = h > j;
        rescal_run(k, i, obj ? h : j, obj, u, u + d);
        i = obj ? h : j;
    }
    free(u);
}

void cr_kge_loss_grad_split(cr_kge_model m, const cr_kge_batch *b, const cr_mat *E, const cr_mat *E2,
                            const cr_mat *R, float lambda, cr_mat *gE, cr_mat *gE2, cr_mat *gR, cr_kge_stats *st) {
    const int64_t d = E->cols, dr = R->cols;
    const int grad = gE && gR;
    kge_ctx k = {b, E, E2, R, gE, gE2, gR, lambda, 0, 0};
    if (m == CR_KGE_RESCAL) rescal_batch(&k);
    for (int64_t i = 0; i < b->n && m != CR_KGE_RESCAL; i++) {
        const float *s = split_row(E, E2, b->s[i]), *r = cr_mat_row(R, b->r[i]), *o = split_row(E, E2, b->o[i]);
        float *gs = grad ? split_row(gE, gE2, b->s[i]) : NULL, *go = grad ? split_row(gE, gE2, b->o[i]) : NULL;
        float *gr = grad ? cr_mat_row(gR, b->r[i]) : NULL;
        float c;
        k.loss += logistic(cr_kge_score(m, s, r, o, d), b->y[i], &c);
        if (grad) grad_score(m, s, r, o, d, c, gs, gr, go);
        if (lambda == 0) continue;
        k.reg += (double)lambda * ((double)sqnorm(s, d) + sqnorm(r, dr) + sqnorm(o, d));
        if (grad) {
            add_scaled(gs, s, d, 2.0f * lambda);
            add_scaled(gr, r, dr, 2.0f * lambda);
            add_scaled(go, o, d, 2.0f * lambda);
        }
    }
    st->loss += k.loss;
    st->reg += k.reg;
    st->n += b->n;
}

void cr_kge_loss_grad(cr_kge_model m, const cr_kge_batch *b, const cr_mat *E, const cr_mat *R, float lambda,
                      cr_mat *gE, cr_mat *gR, cr_kge_stats *st) {
    cr_kge_loss_grad_split(m, b, E, NULL, R, lambda, gE, NULL, gR, st);
}

/* ---- scoring against all entities */

/* TransE against all: tiles of entity rows that stay in cache while every
 * query passes over them (cr_kge_score itself, so the scores are the same). */
static void transe_all(cr_kge_model m, cr_kge_dir dir, const cr_mat *E, const cr_mat *R, const int64_t *anchor,
                       const int64_t *rel, int64_t nq, float *out) {
    enum { TILE = 128 };
    int64_t n = E->rows, d = E->cols;
    for (int64_t j0 = 0; j0 < n; j0 += TILE) {
        int64_t j1 = j0 + TILE < n ? j0 + TILE : n;
        for (int64_t i = 0; i < nq; i++) {
            const float *a = cr_mat_row(E, anchor[i]), *r = cr_mat_row(R, rel[i]);
            for (int64_t j = j0; j < j1; j++) {
                const float *x = cr_mat_row(E, j);
                out[i * n + j] = dir == CR_KGE_TAIL ? cr_kge_score(m, a, r, x, d) : cr_kge_score(m, x, r, a, d);
            }
        }
    }
}

void cr_kge_score_all(cr_kge_model m, cr_kge_dir dir, const cr_mat *E, const cr_mat *R, const int64_t *anchor,
                      const int64_t *rel, int64_t nq, float *out) {
    if (nq <= 0) return;
    if (m == CR_KGE_TRANSE_L1 || m == CR_KGE_TRANSE_L2) {
        transe_all(m, dir, E, R, anchor, rel, nq, out);
        return;
    }
    int64_t n = E->rows, d = E->cols;
    float *Q = cr_xmalloc((size_t)(nq * d) * sizeof(float));
    for (int64_t i = 0; i < nq; i++)
        cr_kge_score_query(m, dir, cr_mat_row(E, anchor[i]), cr_mat_row(R, rel[i]), d, Q + i * d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)n, (int)d, 1.0f, Q, (int)d, E->data, (int)d,
                0.0f, out, (int)n);
    free(Q);
}
