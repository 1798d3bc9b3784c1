/* Knowledge-graph embedding scores: see cr_kge_score.h.
 *
 * Built at -O3 like cr_kge.c: the d-wide row loops are the whole cost. */
#pragma GCC optimize("O3")
#include "kernels/cr_kge_score.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    cr_kge_model model;
} model_names[] = {{"complex", CR_KGE_COMPLEX},     {"distmult", CR_KGE_DISTMULT},
                   {"transe", CR_KGE_TRANSE_L1},    {"transe_l1", CR_KGE_TRANSE_L1},
                   {"transe_l2", CR_KGE_TRANSE_L2}, {"rescal", CR_KGE_RESCAL}};

int cr_kge_model_parse(const char *name, cr_kge_model *m, cr_err *e) {
    for (size_t i = 0; i < sizeof model_names / sizeof model_names[0]; i++)
        if (strcmp(name, model_names[i].name) == 0) {
            *m = model_names[i].model;
            return 0;
        }
    return cr_errf(e, "unknown model '%s' (complex, distmult, transe_l1, transe_l2, rescal)", name);
}

float cr_kge_score(cr_kge_model model, const float *s, const float *r, const float *o, int64_t d) {
    float acc = 0;
    switch (model) {
    case CR_KGE_DISTMULT:
        for (int64_t k = 0; k < d; k++) acc += s[k] * r[k] * o[k];
        return acc;
    case CR_KGE_COMPLEX: {
        int64_t h = d / 2;
        for (int64_t k = 0; k < h; k++) /* Re(s r conj(o)) */
            acc += s[k] * r[k] * o[k] + s[h + k] * r[k] * o[h + k] + s[k] * r[h + k] * o[h + k] -
                   s[h + k] * r[h + k] * o[k];
        return acc;
    }
    case CR_KGE_RESCAL:
        for (int64_t i = 0; i < d; i++) {
            float row = 0;
            for (int64_t j = 0; j < d; j++) row += r[i * d + j] * o[j];
            acc += s[i] * row;
        }
        return acc;
    case CR_KGE_TRANSE_L1:
        for (int64_t k = 0; k < d; k++) acc += fabsf(s[k] + r[k] - o[k]);
        return -acc;
    case CR_KGE_TRANSE_L2:
        for (int64_t k = 0; k < d; k++) {
            float x = s[k] + r[k] - o[k];
            acc += x * x;
        }
        return -sqrtf(acc);
    }
    return 0;
}

void cr_kge_score_query(cr_kge_model m, cr_kge_dir dir, const float *a, const float *r, int64_t d, float *q) {
    int64_t h = d / 2;
    switch (m) {
    case CR_KGE_DISTMULT:
        for (int64_t k = 0; k < d; k++) q[k] = a[k] * r[k];
        return;
    case CR_KGE_COMPLEX:
        for (int64_t k = 0; k < h; k++) {
            float ar = a[k], ai = a[h + k], rr = r[k], ri = r[h + k];
            if (dir == CR_KGE_TAIL) { /* d/do of Re(s r conj(o)) */
                q[k] = ar * rr - ai * ri;
                q[h + k] = ai * rr + ar * ri;
            } else { /* d/ds */
                q[k] = rr * ar + ri * ai;
                q[h + k] = rr * ai - ri * ar;
            }
        }
        return;
    case CR_KGE_RESCAL: /* tail: W^T s; head: W o */
        cblas_sgemv(CblasRowMajor, dir == CR_KGE_TAIL ? CblasTrans : CblasNoTrans, (int)d, (int)d, 1.0f, r, (int)d,
                    a, 1, 0.0f, q, 1);
        return;
    case CR_KGE_TRANSE_L1:
    case CR_KGE_TRANSE_L2: return;
    }
}
