#ifndef CR_PARTITION_H
#define CR_PARTITION_H
/* Partitioners of a bipartite graph over k machines, and the one metric code
 * that judges them all (spec/partitioning.md). Machine i runs worker i (holds
 * U_i) and server i (holds V_i). */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"
#include "data/cr_assign.h"
#include "partition/cr_bigraph.h"

/* Options for every method; cr_part_opts_default fills the spec's defaults.
 * A method ignores the fields it does not use. */
typedef struct cr_part_opts {
    uint64_t seed;
    /* parsa */
    uint32_t blocks;        /* b (default 1) */
    uint32_t init_blocks;   /* a, individual initialisation (default 0) */
    double global_sample;   /* fraction of U for global initialisation (default 0) */
    int select_neighbours;  /* 0: smallest |U_i| (default), 1: smallest |S_i| */
    int v_sweeps;           /* extra Algorithm 2 sweeps, -1 = until converged (default 0) */
    /* tsh / dppa */
    uint32_t alpha;         /* subset size, 1 or 2 */
    double beta;            /* weight of |U_i ∪ S|; <0 means "n" (default) */
    int sample;             /* 1: sample T of U' (default 0) */
    uint32_t pair_cap;      /* alpha 2: candidates per pair search, 0 = exact (default 64) */
    /* mbp */
    double epsilon;         /* balance, default 0.03 */
    uint64_t mem_bound;     /* theta on |N(U_i)|, 0 = none */
    /* dppa */
    uint32_t hash_bins;     /* m', 0 = no hashing */
} cr_part_opts;

void cr_part_opts_default(cr_part_opts *o);

/* Signature shared by every method: fills out (allocated with
 * cr_assign_new for g->nu, g->nv, k). Returns 0, or -1 with e filled. */
typedef int (*cr_part_fn)(const cr_bigraph *g, uint32_t k, const cr_part_opts *o,
                          cr_assign *out, cr_err *e);

/* Look up a method by name ("random", "parsa", "tsh1", "tsh2", "mbp", "dppa",
 * "metis"); NULL if unknown. *available is 0 when the method exists but its
 * library is missing at run time (metis). */
cr_part_fn cr_part_method(const char *name, int *available);

/* The i-th method name in the table (i = 0, 1, ...), NULL past the end. */
const char *cr_part_method_name(size_t i);

/* 1 if libmetis.so.5 can be loaded at run time (dlopen, tried once). */
int cr_metis_available(void);

/* The methods (one file each: cr_random.c, cr_parsa.c, cr_tsh.c, cr_mbp.c,
 * cr_dppa.c, cr_metis.c). */
int cr_part_random(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e);
int cr_part_parsa(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e);
int cr_part_tsh1(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e);
int cr_part_tsh2(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e);
int cr_part_mbp(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e);
int cr_part_dppa(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e);
int cr_part_metis(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e);

/* Per-machine and total costs of a placement (spec "The model"). */
typedef struct cr_part_metrics {
    uint32_t k;
    uint64_t *u_count;  /* |U_i|, k entries */
    uint64_t *m;        /* M_i = |N(U_i)| */
    uint64_t *t;        /* T_i */
    uint64_t m_max, t_max, t_sum, load;
    double product;     /* max_i |U_i| * T_max */
} cr_part_metrics;

int cr_part_metrics_compute(const cr_bigraph *g, const cr_assign *p,
                            cr_part_metrics *out, cr_err *e);
void cr_part_metrics_free(cr_part_metrics *m);

#endif
