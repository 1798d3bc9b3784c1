#include "partition/cr_fhash.h"

#include <stdlib.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "part_util.h"

static void test_bins_and_signs_deterministic(void) {
    int pos = 0;
    uint32_t hist[16] = {0};
    for (uint32_t x = 0; x < 16000; x++) {
        uint32_t b = cr_fhash_bin(x, 16, 3);
        CR_CHECK(b < 16 && b == cr_fhash_bin(x, 16, 3));
        hist[b]++;
        pos += cr_fhash_sign(x, 3) > 0;
    }
    for (int b = 0; b < 16; b++) CR_CHECK(hist[b] > 850 && hist[b] < 1150);
    CR_CHECK(pos > 7600 && pos < 8400);
    /* a different seed gives a different mapping */
    int same = 0;
    for (uint32_t x = 0; x < 1000; x++) same += cr_fhash_bin(x, 16, 3) == cr_fhash_bin(x, 16, 4);
    CR_CHECK(same < 200);
}

/* Signed hashing keeps inner products unbiased: the mean over seeds of
 * <h(a), h(b)> approaches <a, b> although bins collide heavily. */
static void test_row_unbiased_inner_product(void) {
    enum { N = 40 };
    uint32_t idx[N];
    float a[N], b[N];
    double exact = 0;
    cr_rng r;
    cr_rng_seed(&r, 1);
    for (uint32_t i = 0; i < N; i++) {
        idx[i] = i * 7 + 1;
        a[i] = (float)cr_rng_normal(&r);
        b[i] = (float)(0.5 * a[i] + cr_rng_normal(&r));
        exact += (double)a[i] * b[i];
    }
    double mean = 0;
    int runs = 4000;
    for (int s = 0; s < runs; s++) {
        uint32_t ia[N], ib[N];
        float va[N], vb[N];
        uint32_t na = cr_fhash_row(idx, a, N, 8, (uint64_t)s, ia, va);
        uint32_t nb = cr_fhash_row(idx, b, N, 8, (uint64_t)s, ib, vb);
        for (uint32_t i = 1; i < na; i++) CR_CHECK(ia[i] > ia[i - 1]);
        double dot = 0;
        for (uint32_t i = 0, j = 0; i < na && j < nb;) {
            if (ia[i] < ib[j]) i++;
            else if (ia[i] > ib[j]) j++;
            else dot += (double)va[i++] * vb[j++];
        }
        mean += dot / runs;
    }
    CR_CHECK_NEAR(mean, exact, 0.08 * fabs(exact) + 0.5);
}

static void test_row_cancellation_dropped(void) {
    /* find two features in the same bin with opposite signs */
    uint32_t x = 0, y = 1;
    for (;; y++)
        if (cr_fhash_bin(y, 4, 9) == cr_fhash_bin(x, 4, 9) && cr_fhash_sign(y, 9) != cr_fhash_sign(x, 9)) break;
    uint32_t idx[] = {x, y};
    float val[] = {2, 2};
    uint32_t oi[2];
    float ov[2];
    CR_CHECK(cr_fhash_row(idx, val, 2, 4, 9, oi, ov) == 0);
}

static void test_graph_densifies(void) {
    cr_bigraph *g = pu_planted(2000, 5000, 4, 20, 0.5, 3);
    cr_err e;
    double prev_density = 0, prev_ratio = 2;
    uint32_t ms[] = {4096, 1024, 256, 64};
    for (int i = 0; i < 4; i++) {
        cr_bigraph *h = cr_fhash_graph(g, ms[i], 1, &e);
        CR_CHECK(h && h->nu == g->nu && h->nv == ms[i]);
        cr_fhash_stats st;
        cr_fhash_stats_of(g, h, &st);
        printf("  m'=%u: bins used %u, edges %llu (%.3f of original), density %.4f\n", ms[i],
               st.bins_used, (unsigned long long)st.edges, st.edge_ratio, st.density);
        CR_CHECK(st.density > prev_density && st.edge_ratio < prev_ratio);
        CR_CHECK(st.edges <= g->ne);
        /* every original edge survives as its bin's edge */
        for (uint32_t u = 0; u < g->nu; u += 97)
            for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) {
                uint32_t b = cr_fhash_bin(g->u_adj[a], ms[i], 1);
                int found = 0;
                for (uint64_t c = h->u_off[u]; c < h->u_off[u + 1]; c++) found |= h->u_adj[c] == b;
                CR_CHECK(found);
            }
        prev_density = st.density, prev_ratio = st.edge_ratio;
        cr_bigraph_destroy(&h);
    }
    CR_CHECK(cr_fhash_graph(g, 0, 1, &e) == NULL);
    CR_CHECK_STR(e.msg, "feature hashing: the number of bins must be >= 1");
    cr_bigraph_destroy(&g);
}

int main(void) {
    CR_RUN(test_bins_and_signs_deterministic);
    CR_RUN(test_row_unbiased_inner_product);
    CR_RUN(test_row_cancellation_dropped);
    CR_RUN(test_graph_densifies);
    return cr_test_done();
}
