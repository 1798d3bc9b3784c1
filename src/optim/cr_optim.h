#ifndef CR_OPTIM_H
#define CR_OPTIM_H
/* Server-side update rules, applied where a key lives when a push arrives.
 * Pure C, no allocation: a rule is a small value struct; optimizer state is a
 * float array of cr_optim_state_dim() values per row, owned by the shard. */

#include <stdint.h>

#include "base/cr_err.h"

typedef enum {
    CR_OPTIM_SGD = 0,   /* w -= lr * g */
    CR_OPTIM_ADAGRAD,   /* h += g*g; w -= lr * g / (sqrt(h) + eps); h starts at `init` */
    CR_OPTIM_ADD,       /* w += g */
    CR_OPTIM_ASSIGN,    /* w = g */
    CR_OPTIM_ADD_I32,   /* w += g on int32 bit patterns (wrapping): the rule "add" of an
                         * i32 table inside its shard (ps/cr_table.h); never parsed */
} cr_optim_kind;

typedef struct cr_optim {
    cr_optim_kind kind;
    float lr, eps, init;
} cr_optim;

/* Parse a rule name ("sgd", "adagrad", "add", "assign") into o->kind, keeping
 * the other fields. Returns 0, or -1 with "unknown optimizer 'x'" in e. */
int cr_optim_parse(cr_optim *o, const char *name, cr_err *e);

/* Canonical name of o->kind ("sgd", ...). */
const char *cr_optim_name(const cr_optim *o);

/* Floats of state per row for a table of dimension dim (adagrad: dim; others 0). */
int32_t cr_optim_state_dim(const cr_optim *o, int32_t dim);

/* Initial state of one row (state_dim floats). */
void cr_optim_init_state(const cr_optim *o, float *state, int32_t dim);

/* Apply update g (dim floats) to row w (dim floats) with its state. */
void cr_optim_apply(const cr_optim *o, float *w, float *state, const float *g, int32_t dim);

#endif
