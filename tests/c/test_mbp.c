#include "partition/cr_mbp.h"

#include <stdlib.h>

#include "cr_test.h"
#include "part_util.h"

static void test_coarsen_preserves_sums(void) {
    cr_bigraph *g = pu_planted(500, 300, 4, 8, 0.8, 3);
    cr_wgraph *w = cr_wgraph_from_bigraph(g);
    cr_rng r;
    cr_rng_seed(&r, 7);
    for (int level = 0; level < 3; level++) {
        uint32_t *um = malloc(w->nu * sizeof *um), *vm = malloc(w->nv * sizeof *vm);
        cr_wgraph *c = cr_coarsen(w, 1, 1, 16, 16, &r, um, vm);
        CR_CHECK(c->nu < w->nu && c->nv < w->nv);
        uint64_t su = 0, sv = 0, mu = 0, mv = 0, fu = 0;
        for (uint32_t u = 0; u < c->nu; u++) { su += c->uw[u]; CR_CHECK(c->uw[u] <= 16); }
        for (uint32_t v = 0; v < c->nv; v++) { sv += c->vw[v]; CR_CHECK(c->vw[v] <= 16); }
        for (uint64_t i = 0; i < c->ne; i++) mu += c->u_mul[i], mv += c->v_mul[i];
        for (uint64_t i = 0; i < w->ne; i++) fu += w->u_mul[i];
        CR_CHECK(su == 500 && sv == 300);
        CR_CHECK(mu == g->ne && mv == g->ne && fu == g->ne);
        /* each fine edge lands on the coarse edge of its endpoints' images */
        for (uint32_t u = 0; u < w->nu; u++)
            for (uint64_t a = w->u_off[u]; a < w->u_off[u + 1]; a++) {
                uint32_t cu = um[u], cv = vm[w->u_adj[a]];
                int found = 0;
                for (uint64_t b = c->u_off[cu]; b < c->u_off[cu + 1]; b++) found |= c->u_adj[b] == cv;
                CR_CHECK(found);
            }
        free(um);
        free(vm);
        cr_wgraph_destroy(&w);
        w = c;
    }
    cr_wgraph_destroy(&w);
    CR_CHECK(w == NULL);
    cr_bigraph_destroy(&g);
}

/* FM gains against brute-force T_sum differences on small random graphs. */
static void test_fm_gain_matches_bruteforce(void) {
    for (uint64_t seed = 1; seed <= 5; seed++) {
        cr_bigraph *g = pu_planted(30, 20, 3, 4, 0.5, seed);
        cr_wgraph *w = cr_wgraph_from_bigraph(g);
        uint32_t k = 3;
        cr_assign *p = cr_assign_new(k, g->nu, g->nv);
        pu_random(p, seed * 11);
        cr_fm fm;
        cr_err e;
        CR_CHECK(cr_fm_init(&fm, w, k, p->u_part, p->v_part, 1000, 0, &e) == 0);
        uint64_t t0 = pu_tsum(g, p->u_part, p->v_part, k);
        CR_CHECK(cr_fm_tsum(&fm) == t0);
        for (uint32_t u = 0; u < g->nu; u++)
            for (uint32_t b = 0; b < k; b++) {
                int64_t gain = cr_fm_gain_u(&fm, u, b);
                uint32_t a = p->u_part[u];
                p->u_part[u] = b;
                int64_t brute = (int64_t)t0 - (int64_t)pu_tsum(g, p->u_part, p->v_part, k);
                p->u_part[u] = a;
                CR_CHECK(gain == brute);
            }
        for (uint32_t v = 0; v < g->nv; v++)
            for (uint32_t b = 0; b < k; b++) {
                int64_t gain = cr_fm_gain_v(&fm, v, b);
                uint32_t a = p->v_part[v];
                p->v_part[v] = b;
                int64_t brute = (int64_t)t0 - (int64_t)pu_tsum(g, p->u_part, p->v_part, k);
                p->v_part[v] = a;
                CR_CHECK(gain == brute);
            }
        /* moves keep the incremental state equal to a rebuild */
        cr_fm_move_u(&fm, 0, (p->u_part[0] + 1) % k);
        cr_fm_move_v(&fm, 0, (p->v_part[0] + 1) % k);
        CR_CHECK(cr_fm_tsum(&fm) == pu_tsum(g, p->u_part, p->v_part, k));
        /* refinement only lowers T_sum */
        uint64_t before = cr_fm_tsum(&fm);
        cr_fm_refine(&fm, 8, 10);
        uint64_t after = pu_tsum(g, p->u_part, p->v_part, k);
        CR_CHECK(after == cr_fm_tsum(&fm));
        CR_CHECK(after <= before);
        cr_fm_free(&fm);
        cr_assign_destroy(&p);
        cr_wgraph_destroy(&w);
        cr_bigraph_destroy(&g);
    }
}

static void run_planted(cr_part_fn fn, const char *name) {
    uint32_t k = 8, nu = 4000, nv = 2000;
    cr_bigraph *g = pu_planted(nu, nv, k, 12, 0.85, 42);
    cr_part_opts o;
    cr_part_opts_default(&o);
    cr_assign *p = cr_assign_new(k, nu, nv), *q = cr_assign_new(k, nu, nv);
    cr_assign *rnd = cr_assign_new(k, nu, nv);
    cr_err e;
    CR_CHECK(fn(g, k, &o, p, &e) == 0);
    CR_CHECK(pu_complete(p));
    CR_CHECK(pu_load(p->u_part, nu, k) <= cr_mbp_ubound(nu, k, 0.03));
    CR_CHECK(fn(g, k, &o, q, &e) == 0);
    CR_CHECK(pu_same(p, q));
    pu_random(rnd, 5);
    cr_assign *pl = cr_assign_new(k, nu, nv);
    for (uint32_t u = 0; u < nu; u++) pl->u_part[u] = u % k;
    for (uint32_t v = 0; v < nv; v++) pl->v_part[v] = v / (nv / k);
    uint64_t tp = pu_tsum(g, pl->u_part, pl->v_part, k);
    cr_assign_destroy(&pl);
    uint64_t tm = pu_tsum(g, p->u_part, p->v_part, k), tr = pu_tsum(g, rnd->u_part, rnd->v_part, k);
    printf("  %s planted k=8: T_sum %llu, random %llu, planted %llu\n", name, (unsigned long long)tm,
           (unsigned long long)tr, (unsigned long long)tp);
    CR_CHECK(tm * 2 < tr);    /* planted structure: at least twice better than random */
    CR_CHECK(tm * 10 < tp * 13); /* and within 30% of the planted placement */
    cr_assign_destroy(&p);
    cr_assign_destroy(&q);
    cr_assign_destroy(&rnd);
    cr_bigraph_destroy(&g);
}

static void test_mbp_planted_beats_random(void) { run_planted(cr_part_mbp, "mbp"); }
static void test_mbp_grow_planted_beats_random(void) { run_planted(cr_part_mbp_grow, "mbp-grow"); }

static void test_mbp_seed_changes_placement(void) {
    cr_bigraph *g = pu_planted(3000, 1500, 4, 10, 0.7, 9);
    cr_part_opts o;
    cr_part_opts_default(&o);
    cr_assign *p = cr_assign_new(4, g->nu, g->nv), *q = cr_assign_new(4, g->nu, g->nv);
    cr_err e;
    CR_CHECK(cr_part_mbp(g, 4, &o, p, &e) == 0);
    o.seed = 2;
    CR_CHECK(cr_part_mbp(g, 4, &o, q, &e) == 0);
    CR_CHECK(memcmp(p->u_part, q->u_part, g->nu * sizeof(uint32_t)) != 0);
    cr_assign_destroy(&p);
    cr_assign_destroy(&q);
    cr_bigraph_destroy(&g);
}

static void test_mbp_memory_bound(void) {
    uint32_t k = 4;
    cr_bigraph *g = pu_planted(2000, 1000, k, 10, 0.6, 5);
    cr_part_opts o;
    cr_part_opts_default(&o);
    cr_assign *p = cr_assign_new(k, g->nu, g->nv);
    cr_err e;
    CR_CHECK(cr_part_mbp(g, k, &o, p, &e) == 0);
    uint64_t free_m = pu_mmax(g, p->u_part, k);
    /* a bound the unconstrained run does not meet */
    o.mem_bound = free_m - 20;
    CR_CHECK(cr_part_mbp(g, k, &o, p, &e) == 0);
    CR_CHECK(pu_mmax(g, p->u_part, k) <= o.mem_bound);
    CR_CHECK(pu_load(p->u_part, g->nu, k) <= cr_mbp_ubound(g->nu, k, 0.03));
    /* impossible bound: a clear error, no crash */
    o.mem_bound = 3;
    CR_CHECK(cr_part_mbp(g, k, &o, p, &e) == -1);
    CR_CHECK(strncmp(e.msg, "mbp: memory bound 3 cannot be met (max |N(U_i)| = ", 49) == 0);
    cr_assign_destroy(&p);
    cr_bigraph_destroy(&g);
}

static void test_mbp_degenerate(void) {
    /* examples 0..4; example 3 has no parameters (empty row); parameter 4
     * isolated; k = 1, k = |U|, k > |U| */
    uint32_t eu[] = {0, 0, 1, 2, 2, 4}, ev[] = {0, 1, 1, 2, 3, 0};
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(eu, ev, 6, 5, 6, &e);
    CR_CHECK(g);
    cr_part_opts o;
    cr_part_opts_default(&o);
    uint32_t ks[] = {1, 2, 5, 9};
    for (int i = 0; i < 4; i++) {
        cr_assign *p = cr_assign_new(ks[i], g->nu, g->nv);
        CR_CHECK(cr_part_mbp(g, ks[i], &o, p, &e) == 0);
        CR_CHECK(pu_complete(p));
        CR_CHECK(pu_load(p->u_part, g->nu, ks[i]) <= cr_mbp_ubound(g->nu, ks[i], 0.03));
        CR_CHECK(cr_part_mbp_grow(g, ks[i], &o, p, &e) == 0);
        CR_CHECK(pu_complete(p));
        cr_assign_destroy(&p);
    }
    cr_assign *p = cr_assign_new(0, g->nu, g->nv);
    CR_CHECK(cr_part_mbp(g, 0, &o, p, &e) == -1);
    CR_CHECK_STR(e.msg, "mbp: k must be >= 1");
    cr_assign_destroy(&p);
    cr_bigraph_destroy(&g);
    /* empty graph */
    g = cr_bigraph_from_edges(NULL, NULL, 0, 0, 0, &e);
    p = cr_assign_new(3, 0, 0);
    CR_CHECK(cr_part_mbp(g, 3, &o, p, &e) == 0);
    cr_assign_destroy(&p);
    cr_bigraph_destroy(&g);
}

static void test_ubound(void) {
    CR_CHECK(cr_mbp_ubound(10, 3, 0.03) == 4);
    CR_CHECK(cr_mbp_ubound(20000, 16, 0.03) == 1287);
    CR_CHECK(cr_mbp_ubound(3, 5, 0.03) == 1);
}

/* The brute-force T_sum of these tests and the shared metric code agree. */
static void test_tsum_matches_shared_metrics(void) {
    cr_bigraph *g = pu_planted(300, 200, 4, 6, 0.7, 8);
    cr_part_opts o;
    cr_part_opts_default(&o);
    cr_assign *p = cr_assign_new(4, g->nu, g->nv);
    cr_err e;
    CR_CHECK(cr_part_mbp(g, 4, &o, p, &e) == 0);
    cr_part_metrics m;
    CR_CHECK(cr_part_metrics_compute(g, p, &m, &e) == 0);
    CR_CHECK(m.t_sum == pu_tsum(g, p->u_part, p->v_part, 4));
    CR_CHECK(m.m_max == pu_mmax(g, p->u_part, 4));
    CR_CHECK(m.load == pu_load(p->u_part, g->nu, 4));
    cr_part_metrics_free(&m);
    cr_assign_destroy(&p);
    cr_bigraph_destroy(&g);
}

/* Many small random graphs (empty rows, isolated keys, k around |U|): every
 * run completes, stays in bound and is reproducible. */
static void test_mbp_random_small_graphs(void) {
    cr_rng r;
    cr_rng_seed(&r, 99);
    for (int t = 0; t < 200; t++) {
        uint32_t k;
        cr_bigraph *g = pu_small_random(&r, &k);
        CR_CHECK(g);
        uint32_t nu = g->nu, nv = g->nv;
        cr_err e;
        cr_part_opts o;
        cr_part_opts_default(&o);
        o.seed = (uint64_t)t;
        cr_assign *p = cr_assign_new(k, nu, nv), *q = cr_assign_new(k, nu, nv);
        int grow = t % 2;
        CR_CHECK((grow ? cr_part_mbp_grow : cr_part_mbp)(g, k, &o, p, &e) == 0);
        CR_CHECK(pu_complete(p));
        CR_CHECK(pu_load(p->u_part, nu, k) <= cr_mbp_ubound(nu, k, o.epsilon));
        CR_CHECK((grow ? cr_part_mbp_grow : cr_part_mbp)(g, k, &o, q, &e) == 0);
        CR_CHECK(pu_same(p, q));
        o.mem_bound = 1 + cr_rng_below(&r, nv);
        int rc = cr_part_mbp(g, k, &o, p, &e);
        if (rc == 0) CR_CHECK(pu_mmax(g, p->u_part, k) <= o.mem_bound);
        else CR_CHECK(strstr(e.msg, "cannot be met") != NULL && pu_mmax(g, p->u_part, k) > o.mem_bound);
        cr_assign_destroy(&p);
        cr_assign_destroy(&q);
        cr_bigraph_destroy(&g);
    }
}

int main(void) {
    CR_RUN(test_mbp_random_small_graphs);
    CR_RUN(test_tsum_matches_shared_metrics);
    CR_RUN(test_ubound);
    CR_RUN(test_coarsen_preserves_sums);
    CR_RUN(test_fm_gain_matches_bruteforce);
    CR_RUN(test_mbp_planted_beats_random);
    CR_RUN(test_mbp_grow_planted_beats_random);
    CR_RUN(test_mbp_seed_changes_placement);
    CR_RUN(test_mbp_memory_bound);
    CR_RUN(test_mbp_degenerate);
    return cr_test_done();
}
