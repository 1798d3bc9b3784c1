#ifndef CR_DPPA_H
#define CR_DPPA_H
/* DPPA: data and parameter partitioning after compression (paper 001
 * section 4). The graph is first compressed by feature hashing into m' bins
 * (opts.hash_bins; 0 = no hashing), then the examples are assigned by the
 * sampling submodular step of TSH (Algorithm 1 with opts.alpha, opts.beta,
 * sampling on) and the bins by Algorithm 2 (cr_tsh.h). */

#include "partition/cr_bigraph.h"
#include "partition/cr_partition.h"

/* Partition the hashed graph itself: *hp gets the hashed graph (or a copy
 * of g's shape when hash_bins is 0: then *hp is NULL and the placement is of
 * g), *pp a placement of its examples and bins. Caller owns both. Returns 0,
 * or -1 with e filled (k = 0, alpha not 1 or 2). */
int cr_dppa_hashed(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_bigraph **hp,
                   cr_assign **pp, cr_err *e);

#endif
