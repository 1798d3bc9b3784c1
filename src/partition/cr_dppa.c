/* DPPA (paper 001): hash, then TSH's sampling data step and its parameter
 * step on the hashed graph. cr_part_dppa returns a placement of the original
 * keys: each key goes to the server of its bin, since after hashing the bin
 * is the parameter the model stores. */
#include "partition/cr_dppa.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "partition/cr_fhash.h"
#include "partition/cr_tsh.h"

int cr_dppa_hashed(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_bigraph **hp,
                   cr_assign **pp, cr_err *e) {
    *hp = NULL;
    *pp = NULL;
    if (k == 0) return cr_errf(e, "dppa: k must be >= 1");
    const cr_bigraph *w = g;
    if (o->hash_bins) {
        if (!(*hp = cr_fhash_graph(g, o->hash_bins, o->seed, e))) return -1;
        w = *hp;
    }
    cr_assign *p = cr_assign_new(k, w->nu, w->nv);
    uint32_t alpha = o->alpha ? o->alpha : 1;
    if (cr_tsh_data_step(w, k, alpha, o->beta, 1, o->pair_cap, o->seed, p->u_part, e) ||
        cr_tsh_param_step(w, k, p->u_part, p->v_part, e)) {
        cr_assign_destroy(&p);
        cr_bigraph_destroy(hp);
        return -1;
    }
    *pp = p;
    return 0;
}

int cr_part_dppa(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e) {
    cr_bigraph *h;
    cr_assign *p;
    if (cr_dppa_hashed(g, k, o, &h, &p, e)) return -1;
    memcpy(out->u_part, p->u_part, (size_t)g->nu * sizeof *out->u_part);
    if (!h) {
        memcpy(out->v_part, p->v_part, (size_t)g->nv * sizeof *out->v_part);
    } else {
        for (uint32_t v = 0; v < g->nv; v++) out->v_part[v] = p->v_part[cr_fhash_bin(v, o->hash_bins, o->seed)];
    }
    cr_assign_destroy(&p);
    cr_bigraph_destroy(&h);
    return 0;
}
