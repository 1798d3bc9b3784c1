#ifndef CR_OPTIM_H
#define CR_OPTIM_H
/* Server-side update rules, applied where a key lives when a push arrives.
 * Pure C, no allocation: a rule is a small value struct; optimizer state is a
 * float array of cr_optim_state_dim() values per row, owned by the shard.
 *
 * Every rule is one row of cr_optim_rules (cr_optim.c): its name, its
 * parameters (cr_opt rows: names, defaults, ranges; the Lua side reads them
 * from there), its state width, and its apply functions. Every place a row
 * changes (a plain shard, a relocated row, a replica) goes through
 * cr_optim_apply or, on a replica, cr_optim_apply_acc; adding a rule is its
 * kind below, its row, and its test. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_opt.h"

/* The rows of cr_optim_rules, in order. */
typedef enum {
    CR_OPTIM_SGD = 0,   /* w -= lr * g */
    CR_OPTIM_ADAGRAD,   /* h += g*g; w -= lr * g / (sqrt(h) + eps); h starts at `init` */
    CR_OPTIM_ADD,       /* w += g (on an i32 table: on int32 bit patterns, wrapping) */
    CR_OPTIM_ASSIGN,    /* w = g */
    CR_OPTIM_FTRL,      /* FTRL-proximal per coordinate (McMahan et al. 2013), alpha = lr:
                         * state z, n per value; sigma = (sqrt(n + g^2) - sqrt(n)) / alpha,
                         * z += g - sigma w, n += g^2, w = 0 if |z| <= l1 else
                         * -(z - sign(z) l1) / ((beta + sqrt(n)) / alpha + l2) */
    CR_OPTIM_DBPG,      /* delayed block proximal gradient (thesis ch. 6), below */
    CR_OPTIM_NKINDS
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
    int32_t i32;          /* 1: the table holds int32 counts (set by the shard, ps/cr_table.h) */
} cr_optim;

/* One update of row w (dim values) with its state by push g. */
typedef void cr_optim_apply_fn(const cr_optim *o, float *w, float *state, const float *g, int32_t dim);

/* Rule flags. */
#define CR_OPTIM_OVERWRITES 1u /* the row becomes the push: pushes do not add up (no
                                * replication, no sigmod filter) */

/* A rule. Parameters are CR_OPT_FLOAT rows whose fields are cr_optim's
 * (offsetof(cr_optim, lr), ...); the row whose field is lr is the rule's
 * learning rate (what W:set_lr changes; ftrl calls it alpha). Their ranges
 * are checked by cr_optim_check, their defaults set by cr_opt_defaults. */
typedef struct cr_optim_rule {
    const char *name;
    const char *about;               /* one line: what a push does */
    const cr_opt *params;            /* ends with a row whose name is NULL */
    int32_t state_per_value;         /* state floats: state_per_value * dim + state_per_row */
    int32_t state_per_row;
    unsigned flags;                  /* CR_OPTIM_* above */
    cr_optim_apply_fn *apply;        /* a float table's */
    cr_optim_apply_fn *apply_i32;    /* an i32 table's; NULL: the rule takes float tables only */
    /* NULL, or the rule has no state and apply leaves w[j] + linear(o) *
     * g[j] bitwise: a replica adds that product to its change log instead
     * of new - old (which rounds). */
    float (*linear)(const cr_optim *o);
    void (*init)(const cr_optim *o, float *state, int32_t dim);                   /* NULL: zeros */
    void (*load)(const cr_optim *o, float *cur, const float *in, int32_t dim);   /* NULL: copy */
    int (*check)(const cr_optim *o, int32_t dim, cr_err *e); /* beyond the ranges; NULL: none */
} cr_optim_rule;

extern const cr_optim_rule cr_optim_rules[CR_OPTIM_NKINDS];

/* The rule named name, or NULL. */
const cr_optim_rule *cr_optim_find(const char *name);

/* o's rule (o->kind checked: NULL when out of range). */
const cr_optim_rule *cr_optim_rule_of(const cr_optim *o);

/* "sgd, adagrad, ... or dbpg": the rules' names (i32_only: those taking i32
 * tables) into buf. Returns buf. */
const char *cr_optim_list(char *buf, size_t cap, int i32_only);

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

/* Check o for a table of dimension dim: a known kind (an i32 one taking
 * i32 tables), every parameter a number within its row's range (finite
 * when ranged), and the rule's own check (dbpg: dim 1 or 2). Returns 0 or
 * -1 with "optimizer NAME: PARAM must be ..." in e. */
int cr_optim_check(const cr_optim *o, int32_t dim, cr_err *e);

/* Apply update g (dim floats) to row w (dim floats) with its state: the one
 * entry point of every shard's push (o->kind checked by cr_optim_check). */
void cr_optim_apply(const cr_optim *o, float *w, float *state, const float *g, int32_t dim);

/* The same update on a replica's row (row: dim values then the state), and
 * its change added to acc (as many floats): linear(o) * g for a linear
 * rule, g as int32 on an i32 table (whose rule adds: the other rule taking
 * i32 tables overwrites, which replicas refuse), else new - old over values
 * and state (old: scratch of dim + state_dim floats). The row ends bitwise
 * as cr_optim_apply leaves it. */
void cr_optim_apply_acc(const cr_optim *o, float *row, const float *g, int32_t dim, float *acc, float *old);

/* dst = a + b on n int32 counts stored in float slots (uint32 arithmetic:
 * exact, wrapping). dst is a, or apart from it; b is apart from both. */
void cr_optim_add_i32(float *dst, const float *a, const float *b, int32_t n);

#endif
