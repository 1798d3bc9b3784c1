#include "partition/cr_dppa.h"

#include <stdlib.h>

#include "base/cr_rng.h"

#include "cr_test.h"
#include "part_util.h"
#include "partition/cr_fhash.h"

static void test_dppa_complete_deterministic_beats_random(void) {
    uint32_t k = 4, nu = 1200, nv = 800;
    cr_bigraph *g = pu_planted(nu, nv, k, 8, 0.85, 11);
    cr_part_opts o;
    cr_part_opts_default(&o);
    cr_assign *p = cr_assign_new(k, nu, nv), *q = cr_assign_new(k, nu, nv);
    cr_assign *r = cr_assign_new(k, nu, nv);
    cr_err e;
    for (uint32_t alpha = 1; alpha <= 2; alpha++) {
        o.alpha = alpha;
        CR_CHECK(cr_part_dppa(g, k, &o, p, &e) == 0);
        CR_CHECK(pu_complete(p));
        CR_CHECK(pu_load(p->u_part, nu, k) <= (nu + k - 1) / k);
        CR_CHECK(cr_part_dppa(g, k, &o, q, &e) == 0);
        CR_CHECK(pu_same(p, q));
        pu_random(r, 3);
        uint64_t td = pu_tsum(g, p->u_part, p->v_part, k), tr = pu_tsum(g, r->u_part, r->v_part, k);
        printf("  dppa alpha=%u: T_sum %llu vs random %llu\n", alpha, (unsigned long long)td,
               (unsigned long long)tr);
        CR_CHECK(td * 3 < tr * 2);
    }
    cr_assign_destroy(&p);
    cr_assign_destroy(&q);
    cr_assign_destroy(&r);
    cr_bigraph_destroy(&g);
}

/* After hashing: keys of one bin share a server, and on the hashed graph
 * DPPA still beats random as m' shrinks (the gap narrows as it densifies). */
static void test_dppa_hashed(void) {
    uint32_t k = 4, nu = 1200, nv = 3000;
    cr_bigraph *g = pu_planted(nu, nv, k, 10, 0.85, 12);
    cr_part_opts o;
    cr_part_opts_default(&o);
    cr_err e;
    uint32_t ms[] = {2048, 512, 128};
    for (int i = 0; i < 3; i++) {
        o.hash_bins = ms[i];
        cr_assign *p = cr_assign_new(k, nu, nv);
        CR_CHECK(cr_part_dppa(g, k, &o, p, &e) == 0);
        CR_CHECK(pu_complete(p));
        uint32_t *srv = malloc(ms[i] * sizeof *srv);
        for (uint32_t b = 0; b < ms[i]; b++) srv[b] = UINT32_MAX;
        for (uint32_t v = 0; v < nv; v++) {
            uint32_t b = cr_fhash_bin(v, ms[i], o.seed);
            if (srv[b] == UINT32_MAX) srv[b] = p->v_part[v];
            CR_CHECK(srv[b] == p->v_part[v]);
        }
        free(srv);
        cr_bigraph *h;
        cr_assign *ph, *rnd;
        CR_CHECK(cr_dppa_hashed(g, k, &o, &h, &ph, &e) == 0);
        CR_CHECK(h->nv == ms[i] && ph->nv == ms[i]);
        CR_CHECK(memcmp(ph->u_part, p->u_part, nu * sizeof(uint32_t)) == 0);
        rnd = cr_assign_new(k, nu, ms[i]);
        pu_random(rnd, 4);
        uint64_t td = pu_tsum(h, ph->u_part, ph->v_part, k), tr = pu_tsum(h, rnd->u_part, rnd->v_part, k);
        printf("  m'=%u: dppa T_sum %llu, random %llu (%.0f%% better)\n", ms[i], (unsigned long long)td,
               (unsigned long long)tr, 100.0 * ((double)tr - (double)td) / (double)td);
        CR_CHECK(td < tr);
        cr_assign_destroy(&ph);
        cr_assign_destroy(&rnd);
        cr_bigraph_destroy(&h);
        cr_assign_destroy(&p);
    }
    cr_bigraph_destroy(&g);
}

static void test_dppa_degenerate(void) {
    uint32_t eu[] = {0, 0, 1, 2, 2, 4}, ev[] = {0, 1, 1, 2, 3, 0};
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(eu, ev, 6, 5, 6, &e); /* row 3 empty, key 4, 5 isolated */
    cr_part_opts o;
    cr_part_opts_default(&o);
    uint32_t ks[] = {1, 2, 5, 9};
    for (int i = 0; i < 4; i++)
        for (uint32_t bins = 0; bins <= 3; bins += 3) {
            o.hash_bins = bins;
            cr_assign *p = cr_assign_new(ks[i], g->nu, g->nv);
            CR_CHECK(cr_part_dppa(g, ks[i], &o, p, &e) == 0);
            CR_CHECK(pu_complete(p));
            cr_assign_destroy(&p);
        }
    cr_assign *p = cr_assign_new(1, g->nu, g->nv);
    CR_CHECK(cr_part_dppa(g, 0, &o, p, &e) == -1);
    CR_CHECK_STR(e.msg, "dppa: k must be >= 1");
    o.hash_bins = 0;
    o.alpha = 3;
    CR_CHECK(cr_part_dppa(g, 2, &o, p, &e) == -1);
    cr_assign_destroy(&p);
    cr_bigraph_destroy(&g);
}

/* Small random graphs, with and without hashing, alpha 1 and 2. */
static void test_dppa_random_small_graphs(void) {
    cr_rng r;
    cr_rng_seed(&r, 77);
    for (int t = 0; t < 200; t++) {
        uint32_t k;
        cr_bigraph *g = pu_small_random(&r, &k);
        CR_CHECK(g);
        uint32_t nu = g->nu, nv = g->nv;
        cr_err e;
        cr_part_opts o;
        cr_part_opts_default(&o);
        o.seed = (uint64_t)t;
        o.alpha = 1 + (uint32_t)(t % 2);
        o.hash_bins = (t / 2) % 2 ? 1 + (uint32_t)cr_rng_below(&r, 20) : 0;
        cr_assign *p = cr_assign_new(k, nu, nv), *q = cr_assign_new(k, nu, nv);
        CR_CHECK(cr_part_dppa(g, k, &o, p, &e) == 0);
        CR_CHECK(pu_complete(p));
        CR_CHECK(pu_load(p->u_part, nu, k) <= (nu + k - 1) / k);
        CR_CHECK(cr_part_dppa(g, k, &o, q, &e) == 0);
        CR_CHECK(pu_same(p, q));
        cr_assign_destroy(&p);
        cr_assign_destroy(&q);
        cr_bigraph_destroy(&g);
    }
}

int main(void) {
    CR_RUN(test_dppa_random_small_graphs);
    CR_RUN(test_dppa_complete_deterministic_beats_random);
    CR_RUN(test_dppa_hashed);
    CR_RUN(test_dppa_degenerate);
    return cr_test_done();
}
