/* TSH: the worked example of paper 000 (tables 2-3, spec "Unit test") and the
 * general contract (complete, balanced, deterministic). */
#include <stdlib.h>

#include "base/cr_rng.h"
#include "partition/cr_partition.h"
#include "partition/cr_tsh.h"
#include "cr_test.h"

/* d1..d4 = 0..3, p1..p6 = 0..5 */
static cr_bigraph *paper_graph(void) {
    uint32_t u[] = {0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
    uint32_t v[] = {0, 1, 0, 1, 2, 2, 3, 4, 5, 2, 3, 4, 5};
    cr_err e;
    return cr_bigraph_from_edges(u, v, 13, 4, 6, &e);
}

static void run(int alpha, cr_placement **pp, cr_part_metrics *m) {
    cr_bigraph *g = paper_graph();
    cr_placement *p = cr_placement_new(2, 4, 6);
    cr_part_opts o;
    cr_part_opts_default(&o);
    cr_err e;
    int rc = (alpha == 1 ? cr_part_tsh1 : cr_part_tsh2)(g, 2, &o, p, &e);
    if (rc == 0) rc = cr_part_metrics_compute(g, p, m, &e);
    cr_bigraph_destroy(&g);
    *pp = p;
    if (rc != 0) printf("  error: %s\n", e.msg);
}

static void test_paper_tsh2(void) {
    cr_placement *p;
    cr_part_metrics m = {0};
    run(2, &p, &m);
    uint32_t u0 = p->u_part[0], u1 = p->u_part[1], u2 = p->u_part[2], u3 = p->u_part[3], v2 = p->v_part[2];
    uint32_t v0 = p->v_part[0], v1 = p->v_part[1], v3 = p->v_part[3], v4 = p->v_part[4], v5 = p->v_part[5];
    cr_placement_destroy(&p);
    uint64_t mmax = m.m_max, t0 = m.t[0], t1 = m.t[1];
    cr_part_metrics_free(&m);
    CR_CHECK(u0 == 0 && u1 == 0 && u2 == 1 && u3 == 1); /* U_1 = {d1,d2}, U_2 = {d3,d4} */
    CR_CHECK(mmax == 4);
    CR_CHECK(v0 == 0 && v1 == 0 && v3 == 1 && v4 == 1 && v5 == 1);
    CR_CHECK(v2 == 0);                 /* machine 1 (cheaper) takes p3 at no cost */
    CR_CHECK(t0 == 1 && t1 == 1);      /* only p3 crosses: served once, pulled once */
}

static void test_paper_tsh1(void) {
    cr_placement *p;
    cr_part_metrics m = {0};
    run(1, &p, &m);
    uint32_t u0 = p->u_part[0], u1 = p->u_part[1], u2 = p->u_part[2], u3 = p->u_part[3];
    cr_placement_destroy(&p);
    uint64_t mmax = m.m_max, tsum = m.t_sum;
    cr_part_metrics_free(&m);
    CR_CHECK(u0 == 0 && u2 == 0 && u1 == 1 && u3 == 1); /* {d1,d3}, {d2,d4} */
    CR_CHECK(mmax == 6);
    CR_CHECK(tsum == 12); /* all six parameters cross: each pulled once, served once */
}

static void test_contract_random_graphs(void) {
    cr_rng r;
    cr_rng_seed(&r, 11);
    for (int rep = 0; rep < 30; rep++) {
        uint32_t nu = 1 + (uint32_t)cr_rng_below(&r, 60), nv = 1 + (uint32_t)cr_rng_below(&r, 40);
        uint32_t k = 1 + (uint32_t)cr_rng_below(&r, 8), ne = (uint32_t)cr_rng_below(&r, 300);
        uint32_t *u = malloc((ne + 1) * 4), *v = malloc((ne + 1) * 4);
        for (uint32_t i = 0; i < ne; i++) u[i] = (uint32_t)cr_rng_below(&r, nu), v[i] = (uint32_t)cr_rng_below(&r, nv);
        cr_err e;
        cr_bigraph *g = cr_bigraph_from_edges(u, v, ne, nu, nv, &e);
        free(u), free(v);
        for (int alpha = 1; alpha <= 2; alpha++)
            for (int sample = 0; sample <= 1; sample++) {
                uint32_t *a = malloc(nu * 4), *b = malloc(nu * 4), *pv = malloc(nv * 4);
                int rc = cr_tsh_data_step(g, k, (uint32_t)alpha, -1, sample, 64, 5, a, &e);
                rc |= cr_tsh_data_step(g, k, (uint32_t)alpha, -1, sample, 64, 5, b, &e);
                rc |= cr_tsh_param_step(g, k, a, pv, &e);
                uint32_t cap = (nu + k - 1) / k, cnt[8] = {0};
                int ok = rc == 0 && !memcmp(a, b, nu * 4);
                for (uint32_t x = 0; x < nu && ok; x++) ok = a[x] < k && ++cnt[a[x]] <= cap;
                for (uint32_t x = 0; x < nv && ok; x++) ok = pv[x] < k;
                free(a), free(b), free(pv);
                if (!ok) cr_bigraph_destroy(&g);
                CR_CHECK(ok);
            }
        cr_bigraph_destroy(&g);
    }
}

static void test_bad_alpha(void) {
    cr_bigraph *g = paper_graph();
    uint32_t up[4];
    cr_err e;
    int rc = cr_tsh_data_step(g, 2, 3, -1, 0, 64, 1, up, &e);
    cr_bigraph_destroy(&g);
    CR_CHECK(rc == -1);
    CR_CHECK_STR(e.msg, "tsh: alpha must be 1 or 2 (got 3)");
}

int main(void) {
    CR_RUN(test_paper_tsh2);
    CR_RUN(test_paper_tsh1);
    CR_RUN(test_contract_random_graphs);
    CR_RUN(test_bad_alpha);
    return cr_test_done();
}
