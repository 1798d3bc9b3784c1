/* random: the seeded uniform baseline of every improvement figure. */
#include "base/cr_rng.h"
#include "partition/cr_partition.h"

int cr_part_random(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e) {
    if (k == 0) return cr_errf(e, "k must be at least 1");
    cr_rng r;
    cr_rng_seed(&r, o->seed);
    for (uint32_t u = 0; u < g->nu; u++) out->u_part[u] = (uint32_t)cr_rng_below(&r, k);
    for (uint32_t v = 0; v < g->nv; v++) out->v_part[v] = (uint32_t)cr_rng_below(&r, k);
    return 0;
}
