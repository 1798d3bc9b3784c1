/* Weighted bipartite graphs and one level of heavy-edge coarsening (MBP). */
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_csr.h"
#include "partition/cr_mbp.h"

cr_wgraph *cr_wgraph_from_bigraph(const cr_bigraph *g) {
    cr_wgraph *w = cr_xcalloc(1, sizeof *w);
    w->nu = g->nu;
    w->nv = g->nv;
    w->ne = g->ne;
    size_t ne = g->ne ? g->ne : 1;
    w->uw = cr_xmalloc(((size_t)g->nu + 1) * sizeof *w->uw);
    w->vw = cr_xmalloc(((size_t)g->nv + 1) * sizeof *w->vw);
    for (uint32_t i = 0; i < g->nu; i++) w->uw[i] = 1;
    for (uint32_t i = 0; i < g->nv; i++) w->vw[i] = 1;
    w->u_off = cr_xmalloc(((size_t)g->nu + 1) * sizeof *w->u_off);
    w->v_off = cr_xmalloc(((size_t)g->nv + 1) * sizeof *w->v_off);
    memcpy(w->u_off, g->u_off, ((size_t)g->nu + 1) * sizeof *w->u_off);
    memcpy(w->v_off, g->v_off, ((size_t)g->nv + 1) * sizeof *w->v_off);
    w->u_adj = cr_xmalloc(ne * sizeof *w->u_adj);
    w->v_adj = cr_xmalloc(ne * sizeof *w->v_adj);
    memcpy(w->u_adj, g->u_adj, g->ne * sizeof *w->u_adj);
    memcpy(w->v_adj, g->v_adj, g->ne * sizeof *w->v_adj);
    w->u_mul = cr_xmalloc(ne * sizeof *w->u_mul);
    w->v_mul = cr_xmalloc(ne * sizeof *w->v_mul);
    for (uint64_t i = 0; i < g->ne; i++) w->u_mul[i] = w->v_mul[i] = 1;
    return w;
}

void cr_wgraph_destroy(cr_wgraph **gp) {
    if (!gp || !*gp) return;
    cr_wgraph *w = *gp;
    free(w->uw);
    free(w->vw);
    free(w->u_off);
    free(w->v_off);
    free(w->u_adj);
    free(w->v_adj);
    free(w->u_mul);
    free(w->v_mul);
    free(w);
    *gp = NULL;
}

/* One side of the graph seen from that side: rows are the vertices to match,
 * their neighbours are on the other side. */
typedef struct side {
    uint32_t n;
    const uint32_t *w;
    const uint64_t *off;
    const uint32_t *adj, *mul;
    const uint64_t *ooff; /* the other side's CSR (neighbour -> rows) */
    const uint32_t *oadj, *omul;
} side;

/* Heavy-edge matching of one side. match[x] = partner or x itself. The score
 * of a candidate y is sum over shared neighbours of min(mult(x,.), mult(y,.)),
 * an estimate of the number of original parameters (examples) they share. */
static void match_side(const side *s, uint32_t cap, cr_rng *r, uint32_t *match) {
    uint32_t *order = cr_xmalloc(((size_t)s->n + 1) * sizeof *order);
    uint64_t *score = cr_xcalloc((size_t)s->n + 1, sizeof *score);
    uint32_t *touched = cr_xmalloc((CR_MBP_SCAN_BUDGET + 1) * sizeof *touched);
    for (uint32_t i = 0; i < s->n; i++) order[i] = i, match[i] = UINT32_MAX;
    cr_rng_shuffle_u32(r, order, s->n);
    for (uint32_t oi = 0; oi < s->n; oi++) {
        uint32_t x = order[oi];
        if (match[x] != UINT32_MAX) continue;
        uint32_t nt = 0, budget = CR_MBP_SCAN_BUDGET;
        for (uint64_t a = s->off[x]; a < s->off[x + 1] && budget; a++) {
            uint32_t nb = s->adj[a], mx = s->mul[a];
            uint64_t lo = s->ooff[nb], len = s->ooff[nb + 1] - lo, start = 0, cnt = len;
            if (len > CR_MBP_SCAN_PER_NBR) { /* a window at a random place of a long list */
                cnt = CR_MBP_SCAN_PER_NBR;
                start = cr_rng_below(r, len);
            }
            for (uint64_t j = 0; j < cnt && budget; j++, budget--) {
                uint64_t b = lo + (start + j) % len;
                uint32_t y = s->oadj[b];
                if (y == x || match[y] != UINT32_MAX) continue;
                if ((uint64_t)s->w[x] + s->w[y] > cap) continue;
                if (score[y] == 0) touched[nt++] = y;
                score[y] += mx < s->omul[b] ? mx : s->omul[b];
            }
        }
        uint32_t best = x;
        uint64_t bs = 0;
        for (uint32_t t = 0; t < nt; t++) {
            if (score[touched[t]] > bs) bs = score[touched[t]], best = touched[t];
            score[touched[t]] = 0;
        }
        match[x] = best;
        match[best] = x;
    }
    free(order);
    free(score);
    free(touched);
}

/* Coarse ids in order of the lower fine id of each pair. Returns the count. */
static uint32_t number_side(uint32_t n, const uint32_t *match, uint32_t *map) {
    uint32_t nc = 0;
    for (uint32_t i = 0; i < n; i++) map[i] = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        if (map[i] != UINT32_MAX) continue;
        map[i] = nc;
        map[match[i]] = nc;
        nc++;
    }
    return nc;
}

/* Transpose the coarse U-side CSR into the V side (lists come out sorted:
 * placement is stable and u ascends). Cannot fail: nv < 2^32 rows, and the
 * coarse ids in u_adj are < nv by construction (number_side). */
static void transpose(cr_wgraph *c) {
    cr_csr_build b;
    (void)cr_csr_begin(&b, c->nv, NULL);
    for (uint64_t i = 0; i < c->ne; i++) cr_csr_count(&b, c->u_adj[i]);
    (void)cr_csr_offsets(&b, NULL, 0, &c->v_off, NULL);
    size_t ne = c->ne ? c->ne : 1;
    c->v_adj = cr_xmalloc(ne * sizeof *c->v_adj);
    c->v_mul = cr_xmalloc(ne * sizeof *c->v_mul);
    for (uint32_t u = 0; u < c->nu; u++)
        for (uint64_t a = c->u_off[u]; a < c->u_off[u + 1]; a++) {
            uint64_t p = cr_csr_slot(&b, c->u_adj[a]);
            c->v_adj[p] = u;
            c->v_mul[p] = c->u_mul[a];
        }
    cr_csr_end(&b);
}

/* Contract g along the maps into c (nu, nv, weights already set). */
static void contract(const cr_wgraph *g, const uint32_t *u_map, const uint32_t *v_map,
                     cr_wgraph *c) {
    /* members of each coarse U vertex: first[cu], second[cu] (or UINT32_MAX) */
    uint32_t *first = cr_xmalloc(((size_t)c->nu + 1) * sizeof *first);
    uint32_t *second = cr_xmalloc(((size_t)c->nu + 1) * sizeof *second);
    for (uint32_t i = 0; i < c->nu; i++) first[i] = second[i] = UINT32_MAX;
    for (uint32_t u = 0; u < g->nu; u++) {
        uint32_t cu = u_map[u];
        if (first[cu] == UINT32_MAX) first[cu] = u;
        else second[cu] = u;
    }
    int64_t *slot = cr_xmalloc(((size_t)c->nv + 1) * sizeof *slot);
    for (uint32_t v = 0; v < c->nv; v++) slot[v] = -1;
    size_t cap = g->ne ? g->ne : 1;
    c->u_off = cr_xmalloc(((size_t)c->nu + 1) * sizeof *c->u_off);
    c->u_adj = cr_xmalloc(cap * sizeof *c->u_adj);
    c->u_mul = cr_xmalloc(cap * sizeof *c->u_mul);
    uint64_t w = 0;
    for (uint32_t cu = 0; cu < c->nu; cu++) {
        c->u_off[cu] = w;
        uint32_t mem[2] = {first[cu], second[cu]};
        for (int m = 0; m < 2 && mem[m] != UINT32_MAX; m++) {
            uint32_t u = mem[m];
            for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) {
                uint32_t cv = v_map[g->u_adj[a]];
                if (slot[cv] < 0) {
                    slot[cv] = (int64_t)w;
                    c->u_adj[w] = cv;
                    c->u_mul[w] = 0;
                    w++;
                }
                c->u_mul[slot[cv]] += g->u_mul[a];
            }
        }
        for (uint64_t a = c->u_off[cu]; a < w; a++) slot[c->u_adj[a]] = -1;
    }
    c->u_off[c->nu] = w;
    c->ne = w;
    c->u_adj = cr_xrealloc(c->u_adj, (w ? w : 1) * sizeof *c->u_adj);
    c->u_mul = cr_xrealloc(c->u_mul, (w ? w : 1) * sizeof *c->u_mul);
    free(first);
    free(second);
    free(slot);
    transpose(c);
}

cr_wgraph *cr_coarsen(const cr_wgraph *g, int do_u, int do_v, uint32_t cap_u, uint32_t cap_v,
                      cr_rng *r, uint32_t *u_map, uint32_t *v_map) {
    uint32_t *mu = cr_xmalloc(((size_t)g->nu + 1) * sizeof *mu);
    uint32_t *mv = cr_xmalloc(((size_t)g->nv + 1) * sizeof *mv);
    side su = {g->nu, g->uw, g->u_off, g->u_adj, g->u_mul, g->v_off, g->v_adj, g->v_mul};
    side sv = {g->nv, g->vw, g->v_off, g->v_adj, g->v_mul, g->u_off, g->u_adj, g->u_mul};
    if (do_u) match_side(&su, cap_u, r, mu);
    else for (uint32_t i = 0; i < g->nu; i++) mu[i] = i;
    if (do_v) match_side(&sv, cap_v, r, mv);
    else for (uint32_t i = 0; i < g->nv; i++) mv[i] = i;
    cr_wgraph *c = cr_xcalloc(1, sizeof *c);
    c->nu = number_side(g->nu, mu, u_map);
    c->nv = number_side(g->nv, mv, v_map);
    c->uw = cr_xcalloc((size_t)c->nu + 1, sizeof *c->uw);
    c->vw = cr_xcalloc((size_t)c->nv + 1, sizeof *c->vw);
    for (uint32_t u = 0; u < g->nu; u++) c->uw[u_map[u]] += g->uw[u];
    for (uint32_t v = 0; v < g->nv; v++) c->vw[v_map[v]] += g->vw[v];
    free(mu);
    free(mv);
    contract(g, u_map, v_map, c);
    return c;
}
