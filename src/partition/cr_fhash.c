/* Feature hashing of rows and of whole bipartite graphs. */
#include "partition/cr_fhash.h"

#include <stdlib.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

uint32_t cr_fhash_bin(uint32_t x, uint32_t m, uint64_t seed) {
    return (uint32_t)(cr_mix64(((uint64_t)x << 1) ^ cr_mix64(seed)) % m);
}

int cr_fhash_sign(uint32_t x, uint64_t seed) {
    return (cr_mix64(((uint64_t)x << 1 | 1) ^ cr_mix64(seed ^ 0x5157u)) >> 63) ? -1 : 1;
}

typedef struct bv {
    uint32_t bin;
    double v;
} bv;

static int cmp_bv(const void *a, const void *b) {
    uint32_t x = ((const bv *)a)->bin, y = ((const bv *)b)->bin;
    return (x > y) - (x < y);
}

uint32_t cr_fhash_row(const uint32_t *idx, const float *val, uint32_t n, uint32_t m, uint64_t seed,
                      uint32_t *out_idx, float *out_val) {
    bv *t = cr_xmalloc(((size_t)n + 1) * sizeof *t);
    for (uint32_t i = 0; i < n; i++)
        t[i] = (bv){cr_fhash_bin(idx[i], m, seed), (double)cr_fhash_sign(idx[i], seed) * val[i]};
    qsort(t, n, sizeof *t, cmp_bv);
    uint32_t w = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        double s = 0;
        while (j < n && t[j].bin == t[i].bin) s += t[j++].v;
        if (s != 0) out_idx[w] = t[i].bin, out_val[w] = (float)s, w++;
        i = j;
    }
    free(t);
    return w;
}

cr_bigraph *cr_fhash_graph(const cr_bigraph *g, uint32_t m, uint64_t seed, cr_err *e) {
    if (m == 0) return cr_errf(e, "feature hashing: the number of bins must be >= 1"), NULL;
    uint32_t *bin = cr_xmalloc(((size_t)g->nv + 1) * sizeof *bin);
    for (uint32_t v = 0; v < g->nv; v++) bin[v] = cr_fhash_bin(v, m, seed);
    uint32_t *eu = cr_xmalloc((g->ne + 1) * sizeof *eu), *ev = cr_xmalloc((g->ne + 1) * sizeof *ev);
    for (uint32_t u = 0; u < g->nu; u++)
        for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) eu[a] = u, ev[a] = bin[g->u_adj[a]];
    cr_bigraph *h = cr_bigraph_from_edges(eu, ev, g->ne, g->nu, m, e);
    free(bin);
    free(eu);
    free(ev);
    return h;
}

void cr_fhash_stats_of(const cr_bigraph *g, const cr_bigraph *h, cr_fhash_stats *s) {
    s->bins = h->nv;
    s->bins_used = 0;
    for (uint32_t v = 0; v < h->nv; v++) s->bins_used += h->v_off[v + 1] > h->v_off[v];
    s->edges = h->ne;
    s->edge_ratio = g->ne ? (double)h->ne / (double)g->ne : 1.0;
    s->density = h->nu && h->nv ? (double)h->ne / ((double)h->nu * h->nv) : 0.0;
    s->mean_v_degree = s->bins_used ? (double)h->ne / s->bins_used : 0.0;
}

int cr_fhash_stats_for(const cr_bigraph *g, uint32_t m, uint64_t seed, cr_fhash_stats *s, cr_err *e) {
    cr_bigraph *h = cr_fhash_graph(g, m, seed, e);
    if (!h) return -1;
    cr_fhash_stats_of(g, h, s);
    cr_bigraph_destroy(&h);
    return 0;
}
