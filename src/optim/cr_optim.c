#include "optim/cr_optim.h"

#include <math.h>
#include <string.h>

static const char *names[] = {"sgd", "adagrad", "add", "assign"};

int cr_optim_parse(cr_optim *o, const char *name, cr_err *e) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i])) {
            o->kind = (cr_optim_kind)i;
            return 0;
        }
    return cr_errf(e, "unknown optimizer '%s' (expected sgd, adagrad, add or assign)", name);
}

const char *cr_optim_name(const cr_optim *o) {
    if (o->kind == CR_OPTIM_ADD_I32) return "add";
    return (unsigned)o->kind < 4 ? names[o->kind] : "?";
}

int32_t cr_optim_state_dim(const cr_optim *o, int32_t dim) {
    return o->kind == CR_OPTIM_ADAGRAD ? dim : 0;
}

void cr_optim_init_state(const cr_optim *o, float *state, int32_t dim) {
    if (o->kind == CR_OPTIM_ADAGRAD)
        for (int32_t j = 0; j < dim; j++) state[j] = o->init;
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
