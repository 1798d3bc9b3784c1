#ifndef CR_TSH_H
#define CR_TSH_H
/* The two steps of TSH (paper 000, section 4; spec "TSH"), exported for the
 * methods that reuse them (tsh1, tsh2, dppa). */

#include <stdint.h>

#include "base/cr_err.h"
#include "partition/cr_bigraph.h"

/* Step 1, Algorithm 1: assign every example to one of k workers, each step
 * giving the smallest worker (ties lowest id) the subset S of at most alpha
 * (1 or 2) unassigned examples minimising f(U_i ∪ S) - beta |U_i ∪ S|, f =
 * |N(.)|, with |U_i| <= ceil(n/k). beta < 0 means n. sample = 1 restricts
 * the search to a random sample T of U' (each kept with probability
 * min(1, n / (k |U'|)) by a coin hashed from (seed, step, example); an empty
 * T gives one unassigned example drawn uniformly). Ties: lowest example id
 * (pairs: by smaller id, then larger). For alpha = 2, pair_cap > 0 bounds
 * the pair search to the pair_cap cheapest candidate examples per step (the
 * result is exact whenever fewer qualify); pair_cap = 0 searches every pair
 * that can win. Writes g->nu entries of u_part (caller owns). Returns 0, or -1 with e
 * filled (k = 0, alpha not 1 or 2). */
int cr_tsh_data_step(const cr_bigraph *g, uint32_t k, uint32_t alpha, double beta, int sample, uint32_t pair_cap,
                     uint64_t seed, uint32_t *u_part, cr_err *e);

/* Step 2, Algorithm 2: given u_part, assign every parameter: repeatedly the
 * machine with the lowest cost (ties lowest id; cost_i starts at |N(U_i)|)
 * takes the unassigned parameter of N(U_i) that lowers its cost most (fewest
 * machines needing it, ties lowest id); a machine with no candidate left is
 * skipped; untouched parameters go round-robin. Writes g->nv entries of
 * v_part. Returns 0, or -1 with e filled. */
int cr_tsh_param_step(const cr_bigraph *g, uint32_t k, const uint32_t *u_part, uint32_t *v_part, cr_err *e);

#endif
