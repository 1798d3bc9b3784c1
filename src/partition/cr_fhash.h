#ifndef CR_FHASH_H
#define CR_FHASH_H
/* Feature hashing (the compression DPPA partitions after; paper 001 section
 * 3.2, Weinberger et al. style): feature x goes to bin h(x) mod m with sign
 * xi(x) in {-1, +1} from an independent hash, so that inner products of
 * hashed vectors are unbiased estimates of the originals. */

#include <stdint.h>

#include "base/cr_err.h"
#include "partition/cr_bigraph.h"

/* Bin and sign of feature x under (m, seed); m >= 1. */
uint32_t cr_fhash_bin(uint32_t x, uint32_t m, uint64_t seed);
int cr_fhash_sign(uint32_t x, uint64_t seed);

/* Hash one sparse row: adds xi(idx[i]) * val[i] into bin h(idx[i]). Writes
 * the nonzero bins, sorted, into out_idx/out_val (capacity n each) and
 * returns their count; bins whose signed sum is exactly 0 are dropped (a
 * cancelled feature updates nothing). */
uint32_t cr_fhash_row(const uint32_t *idx, const float *val, uint32_t n, uint32_t m, uint64_t seed,
                      uint32_t *out_idx, float *out_val);

/* The hashed graph: U unchanged, V = m bins, edge (u, h(v)) for every edge
 * (u, v), duplicates merged (presence only, no cancellation). Caller owns.
 * Returns NULL with e filled when m == 0. */
cr_bigraph *cr_fhash_graph(const cr_bigraph *g, uint32_t m, uint64_t seed, cr_err *e);

/* How the graph densifies: filled for the hashed graph h of g. */
typedef struct cr_fhash_stats {
    uint32_t bins;          /* m */
    uint32_t bins_used;     /* bins with at least one edge */
    uint64_t edges;         /* |E| after hashing */
    double edge_ratio;      /* |E_h| / |E| (collisions inside a row merge edges) */
    double density;         /* |E_h| / (|U| * m) */
    double mean_v_degree;   /* |E_h| / bins_used */
} cr_fhash_stats;

void cr_fhash_stats_of(const cr_bigraph *g, const cr_bigraph *h, cr_fhash_stats *s);

/* The same for g hashed into m bins with seed (the graph DPPA partitions
 * with those options): builds the hashed graph, measures it, frees it.
 * Returns 0, or -1 with e filled when m == 0. */
int cr_fhash_stats_for(const cr_bigraph *g, uint32_t m, uint64_t seed, cr_fhash_stats *s, cr_err *e);

#endif
