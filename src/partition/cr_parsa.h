#ifndef CR_PARSA_H
#define CR_PARSA_H
/* Parsa's two halves (paper 002; spec "Parsa"), exported for tests and for
 * the parallel variant. cr_part_parsa (cr_partition.h) runs both. */

#include <stdint.h>

#include "base/cr_err.h"
#include "partition/cr_bigraph.h"
#include "partition/cr_partition.h"

/* Default head-pointer range: costs 0..CR_PARSA_THETA have their own bucket,
 * larger costs share one overflow bucket that is scanned linearly. */
#define CR_PARSA_THETA 1000

/* U side, Algorithm 3 with random blocks (o->blocks), individual
 * (o->init_blocks) and global (o->global_sample) initialisation and the
 * selection rule o->select_neighbours. theta is the bucket range (pass
 * CR_PARSA_THETA; tests pass small values to exercise the overflow bucket).
 *
 * Tie rule for the example picked for partition i: the lowest cost; among
 * equal costs the bucket order, which is "most recently lowered first, then
 * never-lowered examples by increasing id" (O(1) bucket moves push to the
 * front). Writes g->nu entries of u_part. Returns 0 or -1 with e filled. */
int cr_parsa_assign_u(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, uint32_t theta, uint32_t *u_part,
                      cr_err *e);

/* V side, Algorithm 2: one streaming sweep over the parameters in seeded
 * random order, then up to `sweeps` improving sweeps (-1: until no move
 * helps, at most 100). Untouched parameters go round-robin. Writes g->nv
 * entries of v_part. Returns 0 or -1 with e filled. */
int cr_parsa_assign_v(const cr_bigraph *g, uint32_t k, const uint32_t *u_part, uint64_t seed, int sweeps,
                      uint32_t *v_part, cr_err *e);

#endif
