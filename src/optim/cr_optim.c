#include "optim/cr_optim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* lr/eps are copied into locals (w may alias *o as far as the compiler
 * knows, and reloading them each element stops vectorisation), and the
 * element loops run in blocks of 8 with a fixed trip count, which the
 * compiler vectorises at -O2 (its cheap cost model leaves loops of unknown
 * length scalar): about 2.5x on the push path. */
#define BLOCK 8

/* ---------- sgd, adagrad, add, assign ---------- */

static void sgd(const cr_optim *o, float *restrict w, float *restrict st, const float *restrict g, int32_t dim) {
    (void)st;
    const float lr = o->lr;
    int32_t j = 0, full = dim - dim % BLOCK;
    for (; j < full; j += BLOCK)
        for (int k = 0; k < BLOCK; k++) w[j + k] -= lr * g[j + k];
    for (; j < dim; j++) w[j] -= lr * g[j];
}

/* w - lr g is w + (-lr) g bitwise (negation is exact) */
static float sgd_linear(const cr_optim *o) { return -o->lr; }

static void adagrad(const cr_optim *o, float *restrict w, float *restrict st, const float *restrict g,
                    int32_t dim) {
    const float lr = o->lr, eps = o->eps;
    int32_t j = 0, full = dim - dim % BLOCK;
    for (; j < full; j += BLOCK)
        for (int k = 0; k < BLOCK; k++) {
            st[j + k] += g[j + k] * g[j + k];
            w[j + k] -= lr * g[j + k] / (sqrtf(st[j + k]) + eps);
        }
    for (; j < dim; j++) {
        st[j] += g[j] * g[j];
        w[j] -= lr * g[j] / (sqrtf(st[j]) + eps);
    }
}

static void adagrad_init(const cr_optim *o, float *st, int32_t dim) {
    for (int32_t j = 0; j < dim; j++) st[j] = o->init;
}

static void add(const cr_optim *o, float *restrict w, float *restrict st, const float *restrict g, int32_t dim) {
    (void)o, (void)st;
    int32_t j = 0, full = dim - dim % BLOCK;
    for (; j < full; j += BLOCK)
        for (int k = 0; k < BLOCK; k++) w[j + k] += g[j + k];
    for (; j < dim; j++) w[j] += g[j];
}

static float one(const cr_optim *o) {
    (void)o;
    return 1.0f;
}

/* w += g as int32 counts stored in float slots: uint32 arithmetic (exact,
 * wraps instead of signed overflow's undefined behaviour), through a
 * may_alias type (reading float storage as integers is then defined; memcpy
 * into block-sized arrays left GCC storing every block to the stack: 1.45x
 * f32 add's time a row). */
typedef uint32_t __attribute__((may_alias)) u32_alias;

/* w += g on int32 counts: two restrict operands, so the blocks vectorise
 * (a third operand that may be w left GCC's block loop scalar: 2x the time
 * of f32 add a row). */
static void add_i32(const cr_optim *o, float *restrict w, float *restrict st, const float *restrict g, int32_t dim) {
    (void)o, (void)st;
    u32_alias *restrict wi = (u32_alias *)(void *)w;
    const u32_alias *restrict gi = (const u32_alias *)(const void *)g;
    int32_t j = 0, full = dim - dim % BLOCK;
    for (; j < full; j += BLOCK)
        for (int k = 0; k < BLOCK; k++) wi[j + k] += gi[j + k];
    for (; j < dim; j++) wi[j] += gi[j];
}

void cr_optim_add_i32(float *dst, const float *a, const float *b, int32_t n) {
    if (dst != a) memcpy(dst, a, (size_t)n * sizeof *dst);
    add_i32(NULL, dst, NULL, b, n);
}

/* also an i32 table's: the bit patterns are copied */
static void assign(const cr_optim *o, float *w, float *st, const float *g, int32_t dim) {
    (void)o, (void)st;
    memcpy(w, g, (size_t)dim * sizeof *w);
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

enum { DBPG_STATE = 5 }; /* g sum, u sum, pushes, pushers, steps */

/* DBPG's pass sums restart and its pushers stay this job's. */
static void dbpg_load(const cr_optim *o, float *cur, const float *in, int32_t dim) {
    (void)o, (void)dim;
    float pushers = cur[3];
    memcpy(cur, in, DBPG_STATE * sizeof *cur);
    cur[0] = cur[1] = cur[2] = 0;
    cur[3] = pushers;
}

static int dbpg_check(const cr_optim *o, int32_t dim, cr_err *e) {
    (void)o;
    if (dim != 1 && dim != 2) return cr_errf(e, "optimizer dbpg: dim must be 2 (weight, trust radius) or 1, got %d", dim);
    return 0;
}

/* ---------- the table ---------- */

#define F(field) offsetof(cr_optim, field)
#define POS CR_OPT_RANGE | CR_OPT_ABOVE, 0, INFINITY     /* > 0 */
#define NONNEG CR_OPT_RANGE, 0, INFINITY                 /* >= 0 */
#define ANY 0, 0, 0
#define END {NULL, CR_OPT_FLOAT, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}

static const cr_opt sgd_params[] = {
    {"lr", CR_OPT_FLOAT, F(lr), ANY, "0.01", "LR", "learning rate", NULL, NULL},
    END,
};

static const cr_opt adagrad_params[] = {
    {"lr", CR_OPT_FLOAT, F(lr), ANY, "0.01", "LR", "learning rate", NULL, NULL},
    {"eps", CR_OPT_FLOAT, F(eps), ANY, "1e-8", "EPS", "added to sqrt(h) below the step", NULL, NULL},
    {"init", CR_OPT_FLOAT, F(init), ANY, "0", "H0", "initial squared-gradient sum h", NULL, NULL},
    END,
};

static const cr_opt no_params[] = {END};

static const cr_opt ftrl_params[] = {
    {"alpha", CR_OPT_FLOAT, F(lr), POS, "0.1", "A", "learning rate alpha", NULL, NULL},
    {"beta", CR_OPT_FLOAT, F(beta), NONNEG, "1", "B", "beta of the per-coordinate rate", NULL, NULL},
    {"l1", CR_OPT_FLOAT, F(l1), NONNEG, "0", "L1", "l1 penalty", NULL, NULL},
    {"l2", CR_OPT_FLOAT, F(l2), NONNEG, "0", "L2", "l2 penalty", NULL, NULL},
    END,
};

static const cr_opt dbpg_params[] = {
    {"lr", CR_OPT_FLOAT, F(lr), POS, "1", "LR", "step size gamma", NULL, NULL},
    {"l1", CR_OPT_FLOAT, F(l1), NONNEG, "0", "L1", "l1 penalty", NULL, NULL},
    {"l2", CR_OPT_FLOAT, F(l2), NONNEG, "0", "L2", "l2 penalty", NULL, NULL},
    {"delta", CR_OPT_FLOAT, F(delta), ANY, "-1", "D", "KKT filter margin (< 0: off)", NULL, NULL},
    {"ada_c", CR_OPT_FLOAT, F(ada_c), NONNEG, "0", "C", "AdaDelay's c: lr / (1 + c sqrt(t + tau)) (0: off)", NULL,
     NULL},
    {"tau", CR_OPT_FLOAT, F(tau), NONNEG, "0", "T", "AdaDelay's delay tau", NULL, NULL},
    END,
};

/* The defaults are the ones job:table has always given each rule: 0.01 for
 * the gradient rules, ftrl's alpha 0.1 and dbpg's step 1 (their papers'
 * settings for logistic regression), so no job changes. */
const cr_optim_rule cr_optim_rules[CR_OPTIM_NKINDS] = {
    [CR_OPTIM_SGD] = {.name = "sgd", .about = "w -= lr g", .params = sgd_params, .apply = sgd,
                      .linear = sgd_linear},
    [CR_OPTIM_ADAGRAD] = {.name = "adagrad", .about = "h += g^2; w -= lr g / (sqrt(h) + eps)",
                          .params = adagrad_params, .state_per_value = 1, .apply = adagrad, .init = adagrad_init},
    [CR_OPTIM_ADD] = {.name = "add", .about = "w += g (an i32 table: int32, wrapping)", .params = no_params,
                      .apply = add, .apply_i32 = add_i32, .linear = one},
    [CR_OPTIM_ASSIGN] = {.name = "assign", .about = "w = g", .params = no_params, .flags = CR_OPTIM_OVERWRITES,
                         .apply = assign, .apply_i32 = assign},
    [CR_OPTIM_FTRL] = {.name = "ftrl", .about = "FTRL-proximal per coordinate (McMahan et al. 2013)",
                       .params = ftrl_params, .state_per_value = 2, .apply = ftrl},
    [CR_OPTIM_DBPG] = {.name = "dbpg", .about = "delayed block proximal gradient (optim/cr_optim.h)",
                       .params = dbpg_params, .state_per_row = DBPG_STATE, .apply = dbpg, .load = dbpg_load,
                       .check = dbpg_check},
};

/* ---------- what every rule shares ---------- */

const cr_optim_rule *cr_optim_find(const char *name) {
    for (int i = 0; i < CR_OPTIM_NKINDS; i++)
        if (!strcmp(name, cr_optim_rules[i].name)) return &cr_optim_rules[i];
    return NULL;
}

const cr_optim_rule *cr_optim_rule_of(const cr_optim *o) {
    return (unsigned)o->kind < CR_OPTIM_NKINDS ? &cr_optim_rules[o->kind] : NULL;
}

const char *cr_optim_list(char *buf, size_t cap, int i32_only) {
    int last = -1;
    for (int i = 0; i < CR_OPTIM_NKINDS; i++)
        if (!i32_only || cr_optim_rules[i].apply_i32) last = i;
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0, k = 0; i < CR_OPTIM_NKINDS && at < cap; i++) {
        if (i32_only && !cr_optim_rules[i].apply_i32) continue;
        const char *sep = k == 0 ? "" : i == last ? " or " : ", ";
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", sep, cr_optim_rules[i].name);
        k++;
    }
    return buf;
}

int cr_optim_parse(cr_optim *o, const char *name, cr_err *e) {
    const cr_optim_rule *r = cr_optim_find(name);
    if (r) {
        o->kind = (cr_optim_kind)(r - cr_optim_rules);
        return 0;
    }
    char list[256];
    return cr_errf(e, "unknown optimizer '%s' (expected %s)", name, cr_optim_list(list, sizeof list, 0));
}

const char *cr_optim_name(const cr_optim *o) {
    const cr_optim_rule *r = cr_optim_rule_of(o);
    return r ? r->name : "?";
}

int32_t cr_optim_state_dim(const cr_optim *o, int32_t dim) {
    const cr_optim_rule *r = &cr_optim_rules[o->kind];
    return r->state_per_value * dim + r->state_per_row;
}

void cr_optim_init_state(const cr_optim *o, float *state, int32_t dim) {
    const cr_optim_rule *r = &cr_optim_rules[o->kind];
    if (r->init) r->init(o, state, dim);
    else memset(state, 0, (size_t)cr_optim_state_dim(o, dim) * sizeof *state);
}

void cr_optim_load_state(const cr_optim *o, float *cur, const float *in, int32_t dim) {
    const cr_optim_rule *r = &cr_optim_rules[o->kind];
    if (r->load) r->load(o, cur, in, dim);
    else memcpy(cur, in, (size_t)cr_optim_state_dim(o, dim) * sizeof *cur);
}

/* The bound of a ranged row as the messages write it: "> 0", ">= 0". */
static int bad_param(const cr_optim_rule *r, const cr_opt *p, float v, cr_err *e) {
    if (!(p->flags & CR_OPT_RANGE)) return cr_errf(e, "optimizer %s: %s must be a number", r->name, p->name);
    if (p->hi < INFINITY)
        return cr_errf(e, "optimizer %s: %s must be in %s%g, %g], got %g", r->name, p->name,
                       p->flags & CR_OPT_ABOVE ? "(" : "[", p->lo, p->hi, v);
    return cr_errf(e, "optimizer %s: %s must be %s %g, got %g", r->name, p->name, p->flags & CR_OPT_ABOVE ? ">" : ">=",
                   p->lo, v);
}

int cr_optim_check(const cr_optim *o, int32_t dim, cr_err *e) {
    const cr_optim_rule *r = cr_optim_rule_of(o);
    if (!r) return cr_errf(e, "unknown optimizer kind %d", (int)o->kind);
    if (o->i32 && !r->apply_i32) {
        char list[256];
        return cr_errf(e, "optimizer %s: an i32 table takes %s", r->name, cr_optim_list(list, sizeof list, 1));
    }
    for (const cr_opt *p = r->params; p->name; p++) {
        float v;
        memcpy(&v, (const char *)o + p->off, sizeof v);
        if (isnan(v) || ((p->flags & CR_OPT_RANGE) && (!isfinite(v) || !cr_opt_ok(p, v)))) return bad_param(r, p, v, e);
    }
    return r->check ? r->check(o, dim, e) : 0;
}

/* ---------- apply ---------- */

void cr_optim_apply(const cr_optim *o, float *restrict w, float *restrict state, const float *restrict g,
                    int32_t dim) {
    const cr_optim_rule *r = &cr_optim_rules[o->kind];
    (o->i32 ? r->apply_i32 : r->apply)(o, w, state, g, dim);
}

void cr_optim_apply_acc(const cr_optim *o, float *row, const float *g, int32_t dim, float *acc, float *old) {
    const cr_optim_rule *r = &cr_optim_rules[o->kind];
    if (o->i32) {
        r->apply_i32(o, row, row + dim, g, dim);
        cr_optim_add_i32(acc, acc, g, dim);
    } else if (r->linear) {
        float f = r->linear(o);
        r->apply(o, row, row + dim, g, dim);
        for (int32_t j = 0; j < dim; j++) acc[j] += f * g[j];
    } else {
        int32_t rowf = dim + cr_optim_state_dim(o, dim);
        memcpy(old, row, (size_t)rowf * sizeof *old);
        r->apply(o, row, row + dim, g, dim);
        for (int32_t j = 0; j < rowf; j++) acc[j] += row[j] - old[j];
    }
}
