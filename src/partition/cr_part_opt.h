#ifndef CR_PART_OPT_H
#define CR_PART_OPT_H
/* The partitioners' options as cr_opt rows, declared once for
 * `crescent partition` (--init-blocks) and cr.partition.run (init_blocks).
 *
 * cr_part_optv mirrors cr_part_opts with the field types cr_opt writes
 * (int64_t, double, int). A reader embeds one in its own options struct and
 * lists CR_PART_OPT_ROWS(offsetof(its struct, the cr_part_optv member)) in
 * its table; cr_part_optv_init fills it from cr_part_opts_default, so rows
 * without a default keep the library's. cr_part_optv_get converts back. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_opt.h"
#include "partition/cr_partition.h"

typedef struct cr_part_optv {
    int64_t seed, blocks, init_blocks, v_sweeps, alpha, pair_cap, mem_bound, hash_bins;
    double global_sample, beta, epsilon;
    int select, select_neighbours, sample; /* select: index into cr_part_select_names */
} cr_part_optv;

/* "examples", "neighbours", "neighbors" (index > 0: smallest |S_i|). */
extern const char *const cr_part_select_names[];

#define CR_PART_OPT_F(base, f) ((base) + offsetof(cr_part_optv, f))
#define CR_PART_OPT_I31 CR_OPT_RANGE, 0, 2147483647
#define CR_PART_OPT_ROWS(base)                                                                                       \
    {"seed", CR_OPT_INT, CR_PART_OPT_F(base, seed), CR_OPT_RANGE, 0, 9007199254740992.0, NULL, "S",                 \
     "first seed", NULL, NULL},                                                                                      \
    {"blocks", CR_OPT_INT, CR_PART_OPT_F(base, blocks), CR_OPT_RANGE, 1, 1 << 20, NULL, "B",                         \
     "parsa: blocks b the examples are split into, default 1", NULL, NULL},                                          \
    {"init_blocks", CR_OPT_INT, CR_PART_OPT_F(base, init_blocks), CR_OPT_RANGE, 0, 1 << 20, NULL, "A",               \
     "parsa: blocks with individual initialisation, default 0", NULL, NULL},                                         \
    {"global_sample", CR_OPT_DOUBLE, CR_PART_OPT_F(base, global_sample), CR_OPT_RANGE, 0, 1, NULL, "F",             \
     "parsa: share of examples for global initialisation, default 0", NULL, NULL},                                   \
    {"select", CR_OPT_ENUM, CR_PART_OPT_F(base, select), 0, 0, 0, NULL, NULL,                       \
     "parsa: the part to fill next: smallest |U_i| or smallest |S_i|, default examples", cr_part_select_names,      \
     NULL},                                                                                                           \
    {"select_neighbours", CR_OPT_FLAG, CR_PART_OPT_F(base, select_neighbours), CR_OPT_HIDDEN, 0, 0, NULL, NULL,      \
     "parsa: as select = neighbours", NULL, NULL},                                                                    \
    {"v_sweeps", CR_OPT_INT, CR_PART_OPT_F(base, v_sweeps), CR_OPT_RANGE, -1, 1000, NULL, "N",                       \
     "parsa: extra sweeps over the keys, -1 = until converged, default 0", NULL, NULL},                             \
    {"alpha", CR_OPT_INT, CR_PART_OPT_F(base, alpha), CR_OPT_RANGE, 1, 2, NULL, "A",                                 \
     "tsh/dppa: subset size", NULL, NULL},                                                                            \
    {"beta", CR_OPT_DOUBLE, CR_PART_OPT_F(base, beta), 0, 0, 0, NULL, "B",                                           \
     "tsh/dppa: weight of |U_i + S|; < 0 (the default): n", NULL, NULL},                                              \
    {"sample", CR_OPT_FLAG, CR_PART_OPT_F(base, sample), 0, 0, 0, NULL, NULL, "tsh/dppa: sample T of U'", NULL,      \
     NULL},                                                                                                           \
    {"epsilon", CR_OPT_DOUBLE, CR_PART_OPT_F(base, epsilon), CR_OPT_RANGE, 0, 1e300, NULL, "E",                      \
     "mbp: balance, default 0.03", NULL, NULL},                                                                      \
    {"mem_bound", CR_OPT_INT, CR_PART_OPT_F(base, mem_bound), CR_PART_OPT_I31, NULL, "M",                            \
     "mbp: bound on |N(U_i)|, 0 = none", NULL, NULL},                                                                 \
    {"hash_bins", CR_OPT_INT, CR_PART_OPT_F(base, hash_bins), CR_PART_OPT_I31, NULL, "M",                            \
     "dppa: hash the keys into M bins first, 0 = no hashing", NULL, NULL},                                            \
    {"pair_cap", CR_OPT_INT, CR_PART_OPT_F(base, pair_cap), CR_PART_OPT_I31, NULL, "N",                              \
     "tsh2: partners tried per step, 0 = all, default 64", NULL, NULL}

/* v = the library's defaults (cr_part_opts_default). */
void cr_part_optv_init(cr_part_optv *v);

/* The options v says. select_neighbours given as 1 (or select naming the
 * neighbours) selects by |S_i|. */
void cr_part_optv_get(const cr_part_optv *v, cr_part_opts *o);

#endif
