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
    CR_OPTIM_FTRL,      /* FTRL-proximal per coordinate (McMahan et al. 2013), alpha = lr:
                         * state z, n per value; sigma = (sqrt(n + g^2) - sqrt(n)) / alpha,
                         * z += g - sigma w, n += g^2, w = 0 if |z| <= l1 else
                         * -(z - sign(z) l1) / ((beta + sqrt(n)) / alpha + l2) */
    CR_OPTIM_DBPG,      /* delayed block proximal gradient (thesis ch. 6), below */
} cr_optim_kind;

/* DBPG. A row is (w, r) (dim 2; with dim 1 there is no r): r > 0 is the
 * coordinate's trust radius (0 in a new row: 1), r < 0 marks it skipped. A
 * push is (g, u): a worker's partial gradient of the loss in w and its
 * partial curvature (kernels/cr_logreg.h: within the trust radius). The rule
 * sums the pushes of one pass and steps when the row's registered pushers
 * have all pushed (state: g sum, u sum, pushes, pushers, steps taken):
 *   G = g sum + l2 w, U = u sum + l2,
 *   KKT filter (delta >= 0): w = 0 and |G| <= l1 - delta: r := -1 (the
 *     coordinate stays 0; later pushes to it are dropped);
 *   else eta = lr, or with AdaDelay (ada_c > 0) lr / (1 + ada_c sqrt(t + tau))
 *     with t the row's steps so far; w' = soft_threshold(w - eta G / U,
 *     eta l1 / U), the change clipped to [-r, r], and r := max(2 |w' - w|,
 *     r / 2) (the trust region of Genkin et al.'s BBR, 2007).
 * A push with u < 0 registers one pusher (w unchanged): every worker that
 * will push a key registers it once, so that the sum is the full gradient
 * over all workers' examples. A row nobody registered steps at every push. */
typedef struct cr_optim {
    cr_optim_kind kind;
    float lr, eps, init;
    float l1, l2, beta;   /* ftrl, dbpg */
    float delta;          /* dbpg: KKT filter margin; < 0: off */
    float ada_c, tau;     /* dbpg: AdaDelay's c (0: off) and delay */
} cr_optim;

/* Parse a rule name ("sgd", "adagrad", "add", "assign", "ftrl", "dbpg") into o->kind, keeping
 * the other fields. Returns 0, or -1 with "unknown optimizer 'x'" in e. */
int cr_optim_parse(cr_optim *o, const char *name, cr_err *e);

/* Canonical name of o->kind ("sgd", ...). */
const char *cr_optim_name(const cr_optim *o);

/* Floats of state per row for a table of dimension dim (adagrad: dim; ftrl:
 * 2 dim; dbpg: 5; others 0). */
int32_t cr_optim_state_dim(const cr_optim *o, int32_t dim);

/* Initial state of one row (state_dim floats). */
void cr_optim_init_state(const cr_optim *o, float *state, int32_t dim);

/* A row's state set from outside (a checkpoint through job:load, or the
 * job's set with state) over its current state cur: cur := in, except what
 * belongs to the running job's workers: DBPG keeps the row's registered
 * pushers (registered by this job's workers, whose count may differ from
 * the saved job's) and starts a new pass (no partial sums of a pass cut by
 * the save); its step count stays the file's. */
void cr_optim_load_state(const cr_optim *o, float *cur, const float *in, int32_t dim);

/* Check the rule's parameters for a table of dimension dim (ftrl: lr > 0,
 * beta >= 0, l1 >= 0, l2 >= 0; dbpg: dim 1 or 2, lr > 0, l1 >= 0, l2 >= 0,
 * ada_c >= 0, tau >= 0). Returns 0 or -1 with a message. */
int cr_optim_check(const cr_optim *o, int32_t dim, cr_err *e);

/* Apply update g (dim floats) to row w (dim floats) with its state. */
void cr_optim_apply(const cr_optim *o, float *w, float *state, const float *g, int32_t dim);

#endif
