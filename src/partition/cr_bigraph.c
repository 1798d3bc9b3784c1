#include "partition/cr_bigraph.h"

#include <stdlib.h>

#include "base/cr_alloc.h"
#include "base/cr_csr.h"

static int cmp(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* CSR of one direction: rows[i] -> cols[i], nrows rows (cr_csr), then each
 * adjacency list sorted and without duplicates. Sets *ne to the number of
 * distinct edges and the arrays (caller owns). */
static int build_csr(const uint32_t *rows, const uint32_t *cols, uint64_t n, uint32_t nrows, uint64_t **off_p,
                     uint32_t **adj_p, uint64_t *ne, cr_err *e) {
    uint64_t *off;
    uint32_t *adj;
    if (cr_csr_from_pairs(rows, cols, n, nrows, &off, &adj, e)) return -1;
    /* sort each list (insertion sort for short lists, qsort otherwise) and dedupe in place */
    uint64_t w = 0;
    for (uint32_t r = 0; r < nrows; r++) {
        uint64_t a = off[r], b = off[r + 1];
        uint32_t *l = adj + a;
        uint64_t len = b - a;
        if (len > 32) {
            qsort(l, len, sizeof *l, cmp);
        } else {
            for (uint64_t i = 1; i < len; i++) {
                uint32_t x = l[i];
                uint64_t j = i;
                while (j > 0 && l[j - 1] > x) { l[j] = l[j - 1]; j--; }
                l[j] = x;
            }
        }
        off[r] = w;
        for (uint64_t i = 0; i < len; i++)
            if (i == 0 || l[i] != l[i - 1]) adj[w++] = l[i];
    }
    off[nrows] = w;
    *off_p = off;
    *adj_p = cr_xrealloc(adj, (w ? w : 1) * sizeof *adj);
    *ne = w;
    return 0;
}

cr_bigraph *cr_bigraph_from_edges(const uint32_t *u, const uint32_t *v, uint64_t n, uint32_t nu,
                                  uint32_t nv, cr_err *e) {
    uint32_t mu = 0, mv = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (u[i] >= mu) mu = u[i] + 1;
        if (v[i] >= mv) mv = v[i] + 1;
    }
    if (nu && mu > nu) return cr_errf(e, "example id %u out of range (|U| = %u)", mu - 1, nu), NULL;
    if (nv && mv > nv) return cr_errf(e, "parameter id %u out of range (|V| = %u)", mv - 1, nv), NULL;
    cr_bigraph *g = cr_xcalloc(1, sizeof *g);
    g->nu = nu ? nu : mu;
    g->nv = nv ? nv : mv;
    uint64_t ne_v;
    if (build_csr(u, v, n, g->nu, &g->u_off, &g->u_adj, &g->ne, e) ||
        build_csr(v, u, n, g->nv, &g->v_off, &g->v_adj, &ne_v, e)) {
        cr_bigraph_destroy(&g);
        return NULL;
    }
    return g;
}

void cr_bigraph_destroy(cr_bigraph **gp) {
    if (!gp || !*gp) return;
    cr_bigraph *g = *gp;
    free(g->u_off);
    free(g->u_adj);
    free(g->v_off);
    free(g->v_adj);
    free(g);
    *gp = NULL;
}
