/* Parsa: the bucket-list Algorithm 3 makes exactly the choices of a naive
 * O(|U||E|) implementation of the same greedy rule (same ties), with and
 * without the overflow bucket; the contract on random and degenerate graphs. */
#include <stdlib.h>

#include "base/cr_rng.h"
#include "partition/cr_parsa.h"
#include "cr_test.h"

static cr_bigraph *random_graph(cr_rng *r, uint32_t nu, uint32_t nv, uint64_t ne) {
    uint32_t *u = malloc((ne + 1) * sizeof *u), *v = malloc((ne + 1) * sizeof *v);
    for (uint64_t i = 0; i < ne; i++) u[i] = (uint32_t)cr_rng_below(r, nu), v[i] = (uint32_t)cr_rng_below(r, nv);
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(u, v, ne, nu, nv, &e);
    free(u), free(v);
    return g;
}

/* The rule written out plainly: partition with fewest examples (lowest id);
 * example with the lowest cost, then the most recent cost decrease on that
 * partition, then never-decreased by lowest id. Costs recomputed never. */
static void naive(const cr_bigraph *g, uint32_t k, int by_neighbours, uint32_t *part) {
    uint32_t n = g->nu;
    uint64_t *cost = calloc((size_t)k * n, 8), *stamp = calloc((size_t)k * n, 8), clock = 0;
    char *ins = calloc((size_t)k * g->nv + 1, 1), *done = calloc(n + 1, 1);
    uint64_t *usz = calloc(k, 8), *ssz = calloc(k, 8);
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t u = 0; u < n; u++) cost[(size_t)i * n + u] = g->u_off[u + 1] - g->u_off[u];
    for (uint32_t step = 0; step < n; step++) {
        const uint64_t *key = by_neighbours ? ssz : usz;
        uint32_t i = 0;
        for (uint32_t j = 1; j < k; j++)
            if (key[j] < key[i]) i = j;
        uint32_t best = UINT32_MAX;
        for (uint32_t u = 0; u < n; u++) {
            if (done[u]) continue;
            if (best == UINT32_MAX) { best = u; continue; }
            uint64_t cu = cost[(size_t)i * n + u], cb = cost[(size_t)i * n + best];
            uint64_t su = stamp[(size_t)i * n + u], sb = stamp[(size_t)i * n + best];
            if (cu < cb || (cu == cb && su > sb)) best = u;
        }
        done[best] = 1, part[best] = i, usz[i]++;
        for (uint64_t a = g->u_off[best]; a < g->u_off[best + 1]; a++) {
            uint32_t v = g->u_adj[a];
            if (ins[(size_t)v * k + i]) continue;
            ins[(size_t)v * k + i] = 1, ssz[i]++;
            for (uint64_t b = g->v_off[v]; b < g->v_off[v + 1]; b++) {
                uint32_t w = g->v_adj[b];
                if (done[w]) continue;
                cost[(size_t)i * n + w]--;
                stamp[(size_t)i * n + w] = ++clock;
            }
        }
    }
    free(cost), free(stamp), free(ins), free(done), free(usz), free(ssz);
}

static void test_equals_naive(void) {
    cr_rng r;
    cr_rng_seed(&r, 21);
    for (int rep = 0; rep < 60; rep++) {
        uint32_t nu = 1 + (uint32_t)cr_rng_below(&r, 80), nv = 1 + (uint32_t)cr_rng_below(&r, 50);
        uint32_t k = 1 + (uint32_t)cr_rng_below(&r, 7);
        cr_bigraph *g = random_graph(&r, nu, nv, cr_rng_below(&r, 500));
        uint32_t *a = malloc(nu * 4), *b = malloc(nu * 4);
        cr_part_opts o;
        cr_part_opts_default(&o);
        o.select_neighbours = rep % 3 == 0;
        uint32_t theta = rep % 2 ? CR_PARSA_THETA : (uint32_t)cr_rng_below(&r, 4); /* small: overflow bucket */
        cr_err e;
        int rc = cr_parsa_assign_u(g, k, &o, theta, a, &e);
        naive(g, k, o.select_neighbours, b);
        int same = rc == 0 && !memcmp(a, b, nu * 4);
        if (!same) printf("  rep %d nu %u nv %u k %u theta %u\n", rep, nu, nv, k, theta);
        free(a), free(b);
        cr_bigraph_destroy(&g);
        CR_CHECK(same);
    }
}

static int complete(const cr_assign *p) {
    for (uint32_t u = 0; u < p->nu; u++)
        if (p->u_part[u] >= p->k) return 0;
    for (uint32_t v = 0; v < p->nv; v++)
        if (p->v_part[v] >= p->k) return 0;
    return 1;
}

static void test_contract_and_options(void) {
    cr_rng r;
    cr_rng_seed(&r, 5);
    cr_bigraph *g = random_graph(&r, 300, 200, 3000);
    cr_part_opts o[5];
    for (int j = 0; j < 5; j++) cr_part_opts_default(&o[j]);
    o[1].blocks = 4;
    o[2].blocks = 4, o[2].init_blocks = 2;
    o[3].global_sample = 0.1;
    o[4].v_sweeps = -1;
    cr_part_metrics m1 = {0}, m4 = {0};
    for (int j = 0; j < 5; j++) {
        cr_assign *p = cr_assign_new(8, 300, 200), *q = cr_assign_new(8, 300, 200);
        cr_err e;
        int rc = cr_part_parsa(g, 8, &o[j], p, &e) | cr_part_parsa(g, 8, &o[j], q, &e);
        int ok = rc == 0 && complete(p) && !memcmp(p->u_part, q->u_part, 300 * 4) && !memcmp(p->v_part, q->v_part, 200 * 4);
        uint64_t cnt[8] = {0};
        for (uint32_t u = 0; u < 300; u++) cnt[p->u_part[u]]++;
        for (int i = 0; i < 8 && ok; i++) ok = cnt[i] == 37 || cnt[i] == 38; /* smallest-|U_i| rule balances */
        if (j == 0) cr_part_metrics_compute(g, p, &m1, &e);
        if (j == 4) cr_part_metrics_compute(g, p, &m4, &e);
        cr_assign_destroy(&p), cr_assign_destroy(&q);
        if (!ok) printf("  option set %d\n", j);
        CR_CHECK(ok);
    }
    int better = m4.t_max <= m1.t_max; /* improving sweeps never raise T_max */
    cr_part_metrics_free(&m1), cr_part_metrics_free(&m4);
    cr_bigraph_destroy(&g);
    CR_CHECK(better);
}

static void test_degenerate(void) {
    /* k = 1, k > |U|, empty rows, isolated parameters, duplicates */
    uint32_t u[] = {0, 0, 0, 2, 2}, v[] = {1, 1, 3, 3, 3};
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(u, v, 5, 4, 6, &e);
    uint32_t ks[] = {1, 3, 9};
    for (int j = 0; j < 3; j++) {
        cr_assign *p = cr_assign_new(ks[j], 4, 6);
        cr_part_opts o;
        cr_part_opts_default(&o);
        int ok = cr_part_parsa(g, ks[j], &o, p, &e) == 0 && complete(p);
        if (ks[j] == 9) ok = ok && p->u_part[0] != p->u_part[1] && p->u_part[2] != p->u_part[3];
        cr_assign_destroy(&p);
        if (!ok) cr_bigraph_destroy(&g);
        CR_CHECK(ok);
    }
    cr_bigraph_destroy(&g);
}

static void test_bad_options(void) {
    uint32_t u[] = {0}, v[] = {0};
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(u, v, 1, 0, 0, &e);
    cr_part_opts o;
    cr_part_opts_default(&o);
    o.blocks = 2, o.init_blocks = 3;
    uint32_t part[1];
    int rc = cr_parsa_assign_u(g, 2, &o, CR_PARSA_THETA, part, &e);
    cr_bigraph_destroy(&g);
    CR_CHECK(rc == -1);
    CR_CHECK_STR(e.msg, "parsa: init_blocks (3) > blocks (2)");
}

int main(void) {
    CR_RUN(test_equals_naive);
    CR_RUN(test_contract_and_options);
    CR_RUN(test_degenerate);
    CR_RUN(test_bad_options);
    return cr_test_done();
}
