#include "optim/cr_optim.h"

#include <math.h>
#include <string.h>

/* by kind; CR_OPTIM_ADD_I32 (never parsed) is "add" */
static const char *names[] = {"sgd", "adagrad", "add", "assign", "add", "ftrl", "dbpg"};
#define NKINDS (int)(sizeof names / sizeof *names)

int cr_optim_parse(cr_optim *o, const char *name, cr_err *e) {
    for (int i = 0; i < NKINDS; i++)
        if (i != CR_OPTIM_ADD_I32 && !strcmp(name, names[i])) {
            o->kind = (cr_optim_kind)i;
            return 0;
        }
    return cr_errf(e, "unknown optimizer '%s' (expected sgd, adagrad, add, assign, ftrl or dbpg)", name);
}

const char *cr_optim_name(const cr_optim *o) { return (unsigned)o->kind < NKINDS ? names[o->kind] : "?"; }

enum { DBPG_STATE = 5 }; /* g sum, u sum, pushes, pushers, steps */

int32_t cr_optim_state_dim(const cr_optim *o, int32_t dim) {
    switch (o->kind) {
    case CR_OPTIM_ADAGRAD: return dim;
    case CR_OPTIM_FTRL: return 2 * dim;
    case CR_OPTIM_DBPG: return DBPG_STATE;
    default: return 0;
    }
}

void cr_optim_init_state(const cr_optim *o, float *state, int32_t dim) {
    if (o->kind == CR_OPTIM_ADAGRAD)
        for (int32_t j = 0; j < dim; j++) state[j] = o->init;
    else if (o->kind == CR_OPTIM_FTRL || o->kind == CR_OPTIM_DBPG)
        memset(state, 0, (size_t)cr_optim_state_dim(o, dim) * sizeof *state);
}

void cr_optim_load_state(const cr_optim *o, float *cur, const float *in, int32_t dim) {
    int32_t sd = cr_optim_state_dim(o, dim);
    float pushers = o->kind == CR_OPTIM_DBPG ? cur[3] : 0;
    memcpy(cur, in, (size_t)sd * sizeof *cur);
    if (o->kind == CR_OPTIM_DBPG) {
        cur[0] = cur[1] = cur[2] = 0;
        cur[3] = pushers;
    }
}

int cr_optim_check(const cr_optim *o, int32_t dim, cr_err *e) {
    const char *n = cr_optim_name(o);
    if (o->kind != CR_OPTIM_FTRL && o->kind != CR_OPTIM_DBPG) return 0;
    if (!(o->lr > 0) || !isfinite(o->lr)) return cr_errf(e, "optimizer %s: %s must be > 0", n, o->kind == CR_OPTIM_FTRL ? "alpha" : "lr");
    if (!(o->l1 >= 0) || !isfinite(o->l1)) return cr_errf(e, "optimizer %s: l1 must be >= 0, got %g", n, o->l1);
    if (!(o->l2 >= 0) || !isfinite(o->l2)) return cr_errf(e, "optimizer %s: l2 must be >= 0, got %g", n, o->l2);
    if (o->kind == CR_OPTIM_FTRL)
        return o->beta >= 0 && isfinite(o->beta) ? 0 : cr_errf(e, "optimizer ftrl: beta must be >= 0");
    if (dim != 1 && dim != 2) return cr_errf(e, "optimizer dbpg: dim must be 2 (weight, trust radius) or 1, got %d", dim);
    if (!(o->ada_c >= 0) || !isfinite(o->ada_c)) return cr_errf(e, "optimizer dbpg: ada_c must be >= 0");
    if (!(o->tau >= 0) || !isfinite(o->tau)) return cr_errf(e, "optimizer dbpg: tau must be >= 0");
    if (isnan(o->delta)) return cr_errf(e, "optimizer dbpg: delta must be a number");
    return 0;
}

/* ---------- ftrl, dbpg ---------- */

static void ftrl(const cr_optim *o, float *w, float *st, const float *g, int32_t dim) {
    float *z = st, *nn = st + dim;
    const double a = o->lr, l1 = o->l1;
    for (int32_t j = 0; j < dim; j++) {
        double gj = g[j], n0 = nn[j], n1 = n0 + gj * gj;
        double sigma = (sqrt(n1) - sqrt(n0)) / a;
        double zj = z[j] + gj - sigma * w[j];
        z[j] = (float)zj, nn[j] = (float)n1;
        w[j] = fabs(zj) <= l1 ? 0.0f : (float)(-(zj - (zj > 0 ? l1 : -l1)) / ((o->beta + sqrt(n1)) / a + o->l2));
    }
}

/* The row's trust radius: its second value, 1 until the first step. */
static inline double trust(const float *w, int32_t dim) { return dim >= 2 && w[1] > 0 ? w[1] : dim >= 2 ? 1.0 : INFINITY; }

static void dbpg(const cr_optim *o, float *w, float *st, const float *g, int32_t dim) {
    if (dim >= 2 && g[1] < 0) { /* a pusher registers */
        st[3] += 1;
        return;
    }
    if (dim >= 2 && w[1] < 0) return; /* skipped by the KKT filter: dropped */
    st[0] += g[0];
    st[1] += dim >= 2 ? g[1] : 0;
    st[2] += 1;
    if (st[2] < st[3]) return; /* the pass is not complete */
    double w0 = w[0], G = st[0] + o->l2 * w0, U = st[1] + o->l2, r = trust(w, dim);
    st[0] = st[1] = st[2] = 0;
    if (!(U > 1e-12)) U = 1e-12;
    if (o->delta >= 0 && w0 == 0 && fabs(G) <= o->l1 - o->delta) {
        if (dim >= 2) w[1] = -1;
        return;
    }
    double eta = o->lr;
    if (o->ada_c > 0) eta = o->lr / (1 + o->ada_c * sqrt((double)st[4] + o->tau));
    st[4] += 1;
    double z = w0 - eta * G / U, thr = eta * o->l1 / U;
    double nw = z > thr ? z - thr : z < -thr ? z + thr : 0.0, dw = nw - w0;
    if (dw > r) dw = r;
    if (dw < -r) dw = -r;
    w[0] = (float)(w0 + dw);
    if (dim >= 2) w[1] = (float)fmax(2 * fabs(dw), r / 2);
}

/* lr/eps are copied into locals (w may alias *o as far as the compiler
 * knows, and reloading them each element stops vectorisation), and the
 * element loops run in blocks of 8 with a fixed trip count, which the
 * compiler vectorises at -O2 (its cheap cost model leaves loops of unknown
 * length scalar): about 2.5x on the push path. */
#define BLOCK 8

/* w += g as int32 counts stored in float slots: uint32 arithmetic (exact,
 * wraps instead of signed overflow's undefined behaviour), through a
 * may_alias type (reading float storage as integers is then defined; memcpy
 * into block-sized arrays left GCC storing every block to the stack: 1.45x
 * f32 add's time a row). */
typedef uint32_t __attribute__((may_alias)) u32_alias;

static void add_i32(float *restrict w, const float *restrict g, int32_t dim) {
    u32_alias *restrict wi = (u32_alias *)(void *)w;
    const u32_alias *restrict gi = (const u32_alias *)(const void *)g;
    int32_t j = 0, full = dim - dim % BLOCK;
    for (; j < full; j += BLOCK)
        for (int k = 0; k < BLOCK; k++) wi[j + k] += gi[j + k];
    for (; j < dim; j++) wi[j] += gi[j];
}

void cr_optim_apply(const cr_optim *o, float *restrict w, float *restrict state, const float *restrict g,
                    int32_t dim) {
    if (o->kind >= CR_OPTIM_FTRL) { /* out of the switch: see its default */
        if (o->kind == CR_OPTIM_FTRL) ftrl(o, w, state, g, dim);
        else dbpg(o, w, state, g, dim);
        return;
    }
    const float lr = o->lr, eps = o->eps;
    int32_t j = 0, full = dim - dim % BLOCK;
    switch (o->kind) {
    case CR_OPTIM_SGD:
        for (; j < full; j += BLOCK)
            for (int k = 0; k < BLOCK; k++) w[j + k] -= lr * g[j + k];
        for (; j < dim; j++) w[j] -= lr * g[j];
        break;
    case CR_OPTIM_ADAGRAD:
        for (; j < full; j += BLOCK)
            for (int k = 0; k < BLOCK; k++) {
                state[j + k] += g[j + k] * g[j + k];
                w[j + k] -= lr * g[j + k] / (sqrtf(state[j + k]) + eps);
            }
        for (; j < dim; j++) {
            state[j] += g[j] * g[j];
            w[j] -= lr * g[j] / (sqrtf(state[j]) + eps);
        }
        break;
    case CR_OPTIM_ADD:
        for (; j < full; j += BLOCK)
            for (int k = 0; k < BLOCK; k++) w[j + k] += g[j + k];
        for (; j < dim; j++) w[j] += g[j];
        break;
    case CR_OPTIM_ASSIGN:
        memcpy(w, g, (size_t)dim * sizeof *w);
        break;
    default: /* CR_OPTIM_ADD_I32 (kinds are checked when parsed): a default, not a
              * fifth case, keeps the float rules' compare chain as it was (with
              * a fifth case GCC jumps through a table) */
        add_i32(w, g, dim);
        break;
    }
}
