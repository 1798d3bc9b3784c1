#ifndef PART_UTIL_H
#define PART_UTIL_H
/* Shared helpers of the partitioner tests: a planted-partition generator and
 * brute-force cost computations written straight from the spec's
 * definitions (independent of the code under test). */

#include <stdlib.h>
#include <string.h>

#include "base/cr_rng.h"
#include "partition/cr_bigraph.h"
#include "partition/cr_partition.h"

/* nu examples in k planted clusters, each with deg distinct-ish parameters:
 * with probability p_in from its cluster's block of nv/k parameters, else
 * uniform over all nv. */
static inline cr_bigraph *pu_planted(uint32_t nu, uint32_t nv, uint32_t k, uint32_t deg, double p_in,
                                     uint64_t seed) {
    cr_rng r;
    cr_rng_seed(&r, seed);
    uint64_t n = (uint64_t)nu * deg;
    uint32_t *eu = malloc(n * sizeof *eu), *ev = malloc(n * sizeof *ev);
    uint32_t blk = nv / k;
    for (uint32_t u = 0; u < nu; u++) {
        uint32_t c = u % k;
        for (uint32_t d = 0; d < deg; d++) {
            uint64_t i = (uint64_t)u * deg + d;
            eu[i] = u;
            ev[i] = cr_rng_uniform(&r) < p_in ? c * blk + (uint32_t)cr_rng_below(&r, blk)
                                              : (uint32_t)cr_rng_below(&r, nv);
        }
    }
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(eu, ev, n, nu, nv, &e);
    free(eu);
    free(ev);
    return g;
}

/* need[v*k + j] = 1 iff some example of machine j touches v. Caller frees. */
static inline unsigned char *pu_need(const cr_bigraph *g, const uint32_t *up, uint32_t k) {
    unsigned char *need = calloc((size_t)g->nv * k + 1, 1);
    for (uint32_t u = 0; u < g->nu; u++)
        for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) need[(size_t)g->u_adj[a] * k + up[u]] = 1;
    return need;
}

/* T_sum = sum_i ( |N(U_i) \ V_i| + sum_{j != i} |V_i ∩ N(U_j)| ). */
static inline uint64_t pu_tsum(const cr_bigraph *g, const uint32_t *up, const uint32_t *vp, uint32_t k) {
    unsigned char *need = pu_need(g, up, k);
    uint64_t t = 0;
    for (uint32_t i = 0; i < k; i++) {
        for (uint32_t v = 0; v < g->nv; v++) {
            if (need[(size_t)v * k + i] && vp[v] != i) t++;           /* pulls of machine i */
            if (vp[v] == i)
                for (uint32_t j = 0; j < k; j++) t += j != i && need[(size_t)v * k + j]; /* served */
        }
    }
    free(need);
    return t;
}

/* max_i |N(U_i)| */
static inline uint64_t pu_mmax(const cr_bigraph *g, const uint32_t *up, uint32_t k) {
    unsigned char *need = pu_need(g, up, k);
    uint64_t best = 0;
    for (uint32_t j = 0; j < k; j++) {
        uint64_t m = 0;
        for (uint32_t v = 0; v < g->nv; v++) m += need[(size_t)v * k + j];
        if (m > best) best = m;
    }
    free(need);
    return best;
}

/* max_i |U_i| */
static inline uint64_t pu_load(const uint32_t *up, uint32_t n, uint32_t k) {
    uint64_t *c = calloc(k, sizeof *c), best = 0;
    for (uint32_t u = 0; u < n; u++) c[up[u]]++;
    for (uint32_t j = 0; j < k; j++)
        if (c[j] > best) best = c[j];
    free(c);
    return best;
}

/* Every entry in [0, k). */
static inline int pu_complete(const cr_assign *p) {
    for (uint32_t u = 0; u < p->nu; u++)
        if (p->u_part[u] >= p->k) return 0;
    for (uint32_t v = 0; v < p->nv; v++)
        if (p->v_part[v] >= p->k) return 0;
    return 1;
}

/* Uniform random placement (the baseline), independent of cr_part_random. */
static inline void pu_random(cr_assign *p, uint64_t seed) {
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (uint32_t u = 0; u < p->nu; u++) p->u_part[u] = (uint32_t)cr_rng_below(&r, p->k);
    for (uint32_t v = 0; v < p->nv; v++) p->v_part[v] = (uint32_t)cr_rng_below(&r, p->k);
}

/* 1 if p and q assign every example and every key alike. */
static inline int pu_same(const cr_assign *p, const cr_assign *q) {
    return p->nu == q->nu && p->nv == q->nv && !memcmp(p->u_part, q->u_part, p->nu * sizeof(uint32_t)) &&
           !memcmp(p->v_part, q->v_part, p->nv * sizeof(uint32_t));
}

/* A small random graph for property loops: |U| < 60 (possibly 0), 1 <= |V| <= 40,
 * up to 4|U| edges (duplicates, empty rows and isolated keys happen), and a k
 * in [1, 9] returned in *k. Caller owns the graph. */
static inline cr_bigraph *pu_small_random(cr_rng *r, uint32_t *k) {
    uint32_t nu = (uint32_t)cr_rng_below(r, 60), nv = 1 + (uint32_t)cr_rng_below(r, 40);
    *k = 1 + (uint32_t)cr_rng_below(r, 9);
    uint32_t ne = nu ? (uint32_t)cr_rng_below(r, 4 * nu + 1) : 0;
    uint32_t eu[240], ev[240];
    for (uint32_t i = 0; i < ne; i++) eu[i] = (uint32_t)cr_rng_below(r, nu), ev[i] = (uint32_t)cr_rng_below(r, nv);
    cr_err e;
    return cr_bigraph_from_edges(eu, ev, ne, nu, nv, &e);
}

#endif
