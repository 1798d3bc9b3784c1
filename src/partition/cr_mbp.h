#ifndef CR_MBP_H
#define CR_MBP_H
/* Multilevel bipartite partitioning (MBP, paper 000 section 5;
 * docs/partitioning-mbp-dppa.md). Internal pieces exposed for tests and for
 * other partitioners: the weighted bipartite graph of the coarse levels, one
 * coarsening step, and the k-way FM refinement state.
 *
 * Cost model on a weighted graph: machine j needs need(v, j) =
 * min(w(v), cnt_j(v)) of the originals inside parameter v (cnt_j(v) = edge
 * multiplicity from U_j into v, an upper bound on the originals it touches),
 * and T_sum = 2 * sum_v sum_{j != s(v)} need(v, j) (the factor 2 counts the
 * pull and the request served, as in the metrics); M_j = sum_v need(v, j).
 * On the finest level (all weights 1) this is exactly the spec's T_sum. */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_rng.h"
#include "partition/cr_bigraph.h"
#include "partition/cr_partition.h"

typedef struct cr_wgraph {
    uint32_t nu, nv;
    uint64_t ne;            /* distinct (coarse) edges */
    uint32_t *uw, *vw;      /* vertex weights: number of original vertices */
    uint64_t *u_off, *v_off;
    uint32_t *u_adj, *v_adj;
    uint32_t *u_mul, *v_mul; /* edge multiplicities, aligned with *_adj */
} cr_wgraph;

/* Copy g into a weighted graph with unit weights and multiplicities. Caller
 * owns the result (cr_wgraph_destroy). */
cr_wgraph *cr_wgraph_from_bigraph(const cr_bigraph *g);
void cr_wgraph_destroy(cr_wgraph **gp);

/* One coarsening level: heavy-edge matching of U (if do_u) and of V (if do_v)
 * on g, visiting vertices in an order drawn from r; a merge is allowed only
 * while the merged weight stays <= cap_u (U) or cap_v (V). Writes the fine ->
 * coarse maps (u_map: g->nu entries, v_map: g->nv entries) and returns the
 * contracted graph (caller owns): weights add up, parallel edges become one
 * edge whose multiplicity is the sum. The neighbour-of-neighbour scan of one
 * vertex visits at most CR_MBP_SCAN_BUDGET pairs and at most
 * CR_MBP_SCAN_PER_NBR entries of each neighbour's list (a window starting at
 * a random place, so long lists are not always cut at the same ids). */
#define CR_MBP_SCAN_BUDGET 2048
#define CR_MBP_SCAN_PER_NBR 64
cr_wgraph *cr_coarsen(const cr_wgraph *g, int do_u, int do_v, uint32_t cap_u, uint32_t cap_v,
                      cr_rng *r, uint32_t *u_map, uint32_t *v_map);

/* k-way FM refinement state over a weighted graph and a placement of it. */
typedef struct cr_fm {
    const cr_wgraph *g;
    uint32_t k;
    uint32_t *up, *vp;      /* borrowed: part of every U / V vertex, updated in place */
    uint32_t *cnt;          /* nv*k: summed multiplicity from U_j into v */
    uint64_t *uload;        /* k: weight of U_j */
    uint64_t *vload;        /* k: weight of V_j */
    uint64_t *mem;          /* k: estimated |N(U_j)| (exact on the finest level) */
    uint64_t ubound;        /* balance bound on uload */
    uint64_t mem_bound;     /* 0 = none */
    int64_t penalty;        /* weight of memory excess in the refined objective */
    int64_t *scratch;       /* 2k */
} cr_fm;

/* Build the state from a complete placement (up, vp borrowed, must outlive
 * fm). Returns 0, or -1 with e filled (multiplicity overflow). */
int cr_fm_init(cr_fm *fm, const cr_wgraph *g, uint32_t k, uint32_t *up, uint32_t *vp,
               uint64_t ubound, uint64_t mem_bound, cr_err *e);
void cr_fm_free(cr_fm *fm);

/* Decrease in the estimated T_sum if U vertex u (resp. V vertex v) moved to
 * part b (b may equal its part: 0). Ignores the bounds. */
int64_t cr_fm_gain_u(const cr_fm *fm, uint32_t u, uint32_t b);
int64_t cr_fm_gain_v(const cr_fm *fm, uint32_t v, uint32_t b);
/* Estimated T_sum of the current state. */
uint64_t cr_fm_tsum(const cr_fm *fm);
/* Move u (resp. v) to part b, updating the state. */
void cr_fm_move_u(cr_fm *fm, uint32_t u, uint32_t b);
void cr_fm_move_v(cr_fm *fm, uint32_t v, uint32_t b);

/* Refinement passes: highest gain first (lazy max-heap, gains recomputed when
 * popped), each vertex moves at most once per pass, only moves that keep
 * uload <= ubound. With mem_bound set, the objective refined is
 * T_sum + penalty * sum_j max(0, mem_j - mem_bound). When no positive move is
 * left a pass continues with the best non-positive U moves for at most
 * `stall` moves without a new best (stall = 1: no hill climbing), then rolls
 * back to the best prefix. Repeats passes until one gains nothing or
 * max_passes is reached. Returns the total T_sum decrease. */
uint64_t cr_fm_refine(cr_fm *fm, int max_passes, uint64_t stall);

/* Initial partition of a (coarse) weighted graph. */
typedef enum { CR_MBP_INIT_RANDOM, CR_MBP_INIT_GROW } cr_mbp_init;

/* MBP with a chosen initial partition; cr_part_mbp is INIT_RANDOM (the
 * paper's choice), cr_part_mbp_grow is greedy growing. Same contract as
 * every cr_part_fn. */
int cr_mbp_run(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_mbp_init init,
               cr_assign *out, cr_err *e);
int cr_part_mbp_grow(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out,
                     cr_err *e);

/* The balance bound on |U_i| for n examples: max(ceil(n/k), floor((1+eps) n/k)). */
uint64_t cr_mbp_ubound(uint64_t n, uint32_t k, double eps);

#endif
