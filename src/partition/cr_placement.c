#include <stdlib.h>

#include "base/cr_alloc.h"
#include "partition/cr_partition.h"

void cr_part_opts_default(cr_part_opts *o) {
    *o = (cr_part_opts){.seed = 1, .blocks = 1, .init_blocks = 0, .global_sample = 0.0,
                        .select_neighbours = 0, .v_sweeps = 0, .alpha = 1, .beta = -1.0,
                        .sample = 0, .pair_cap = 64, .epsilon = 0.03, .mem_bound = 0, .hash_bins = 0};
}

cr_placement *cr_placement_new(uint32_t k, uint32_t nu, uint32_t nv) {
    cr_placement *p = cr_xcalloc(1, sizeof *p);
    p->k = k;
    p->nu = nu;
    p->nv = nv;
    p->u_part = cr_xmalloc(((size_t)nu + 1) * sizeof *p->u_part);
    p->v_part = cr_xmalloc(((size_t)nv + 1) * sizeof *p->v_part);
    return p;
}

void cr_placement_destroy(cr_placement **pp) {
    if (!pp || !*pp) return;
    free((*pp)->u_part);
    free((*pp)->v_part);
    free(*pp);
    *pp = NULL;
}
