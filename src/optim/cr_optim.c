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
    return (unsigned)o->kind < 4 ? names[o->kind] : "?";
}

int32_t cr_optim_state_dim(const cr_optim *o, int32_t dim) {
    return o->kind == CR_OPTIM_ADAGRAD ? dim : 0;
}

void cr_optim_init_state(const cr_optim *o, float *state, int32_t dim) {
    if (o->kind == CR_OPTIM_ADAGRAD)
        for (int32_t j = 0; j < dim; j++) state[j] = o->init;
}

void cr_optim_apply(const cr_optim *o, float *w, float *state, const float *g, int32_t dim) {
    switch (o->kind) {
    case CR_OPTIM_SGD:
        for (int32_t j = 0; j < dim; j++) w[j] -= o->lr * g[j];
        break;
    case CR_OPTIM_ADAGRAD:
        for (int32_t j = 0; j < dim; j++) {
            state[j] += g[j] * g[j];
            w[j] -= o->lr * g[j] / (sqrtf(state[j]) + o->eps);
        }
        break;
    case CR_OPTIM_ADD:
        for (int32_t j = 0; j < dim; j++) w[j] += g[j];
        break;
    case CR_OPTIM_ASSIGN:
        memcpy(w, g, (size_t)dim * sizeof *w);
        break;
    }
}
