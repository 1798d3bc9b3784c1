/* TSH: the worked example of paper 000 (tables 2-3, spec "Unit test"), the
 * general contract (complete, balanced, deterministic), and the data step
 * against a plain reference of the same rule, sampled and not. */
#include <math.h>
#include <stdlib.h>

#include "base/cr_rng.h"
#include "partition/cr_partition.h"
#include "partition/cr_tsh.h"
#include "cr_test.h"
#include "part_util.h"

/* d1..d4 = 0..3, p1..p6 = 0..5 */
static cr_bigraph *paper_graph(void) {
    uint32_t u[] = {0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
    uint32_t v[] = {0, 1, 0, 1, 2, 2, 3, 4, 5, 2, 3, 4, 5};
    cr_err e;
    return cr_bigraph_from_edges(u, v, 13, 4, 6, &e);
}

static void run(int alpha, cr_assign **pp, cr_part_metrics *m) {
    cr_bigraph *g = paper_graph();
    cr_assign *p = cr_assign_new(2, 4, 6);
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
    cr_assign *p;
    cr_part_metrics m = {0};
    run(2, &p, &m);
    uint32_t u0 = p->u_part[0], u1 = p->u_part[1], u2 = p->u_part[2], u3 = p->u_part[3], v2 = p->v_part[2];
    uint32_t v0 = p->v_part[0], v1 = p->v_part[1], v3 = p->v_part[3], v4 = p->v_part[4], v5 = p->v_part[5];
    cr_assign_destroy(&p);
    uint64_t mmax = m.m_max, t0 = m.t[0], t1 = m.t[1];
    cr_part_metrics_free(&m);
    CR_CHECK(u0 == 0 && u1 == 0 && u2 == 1 && u3 == 1); /* U_1 = {d1,d2}, U_2 = {d3,d4} */
    CR_CHECK(mmax == 4);
    CR_CHECK(v0 == 0 && v1 == 0 && v3 == 1 && v4 == 1 && v5 == 1);
    CR_CHECK(v2 == 0);                 /* machine 1 (cheaper) takes p3 at no cost */
    CR_CHECK(t0 == 1 && t1 == 1);      /* only p3 crosses: served once, pulled once */
}

static void test_paper_tsh1(void) {
    cr_assign *p;
    cr_part_metrics m = {0};
    run(1, &p, &m);
    uint32_t u0 = p->u_part[0], u1 = p->u_part[1], u2 = p->u_part[2], u3 = p->u_part[3];
    cr_assign_destroy(&p);
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

/* The reference: Algorithm 1 written out plainly. Marginal costs are
 * recounted from a covered-parameter table at every step and pairs are tried
 * all against all (cost |N(a) ∪ N(b) \ N(U_i)|, ties by smaller id, then
 * larger). What it shares with cr_tsh.c is the definition of the sample:
 * at step s (from 1) u is in T iff mix64(mix64(seed) + s + u) < keep 2^64,
 * and an empty T becomes the unassigned example of rank
 * cr_rng_below(|U'|) in id order (one generator seeded by seed). */
typedef struct ref {
    const cr_bigraph *g;
    unsigned char *cov, *mark; /* k x nv: v in N(U_i); nv scratch */
} ref;

/* |N(S) \ N(U_i)| for S = {a} or {a, b} (b = UINT32_MAX: singleton). */
static uint32_t ref_union(const ref *r, uint32_t i, uint32_t a, uint32_t b) {
    const cr_bigraph *g = r->g;
    uint32_t c = 0, s[2] = {a, b};
    for (int x = 0; x < 2 && s[x] != UINT32_MAX; x++)
        for (uint64_t y = g->u_off[s[x]]; y < g->u_off[s[x] + 1]; y++) {
            uint32_t v = g->u_adj[y];
            if (!r->cov[(size_t)i * g->nv + v] && !r->mark[v]) r->mark[v] = 1, c++;
        }
    for (int x = 0; x < 2 && s[x] != UINT32_MAX; x++)
        for (uint64_t y = g->u_off[s[x]]; y < g->u_off[s[x] + 1]; y++) r->mark[g->u_adj[y]] = 0;
    return c;
}

static void ref_data_step(const cr_bigraph *g, uint32_t k, uint32_t alpha, int sample, uint64_t seed,
                          uint32_t *part) {
    uint32_t n = g->nu, cap = (n + k - 1) / k;
    double beta = n;
    ref r = {g, calloc((size_t)k * g->nv + 1, 1), calloc(g->nv + 1, 1)};
    uint32_t *t = malloc((size_t)n * 4 + 4), *size = calloc(k, 4);
    unsigned char *done = calloc(n + 1, 1);
    cr_rng rng;
    cr_rng_seed(&rng, seed);
    for (uint32_t left = n, step = 1; left > 0; step++) {
        uint32_t i = 0, m = 0;
        for (uint32_t j = 1; j < k; j++)
            if (size[j] < size[i]) i = j;
        double keep = sample ? (double)n / ((double)k * left) : 1.0;
        uint64_t key = cr_mix64(cr_mix64(seed) + step);
        for (uint32_t u = 0; u < n; u++)
            if (!done[u] && (keep >= 1.0 || cr_mix64(key + u) < (uint64_t)(keep * 0x1.0p64))) t[m++] = u;
        if (m == 0)
            for (uint32_t u = 0, rank = (uint32_t)cr_rng_below(&rng, left);; u++)
                if (!done[u] && rank-- == 0) {
                    t[m++] = u;
                    break;
                }
        double bv = INFINITY;
        uint32_t ba = UINT32_MAX, bb = UINT32_MAX;
        for (uint32_t x = 0; x < m; x++)
            for (uint32_t y = alpha == 2 ? x + 1 : m; y <= m; y++) { /* y = m: the singleton t[x] */
                uint32_t a = t[x], b = y < m ? t[y] : UINT32_MAX;
                double v = (double)ref_union(&r, i, a, b) - (b == UINT32_MAX ? beta : 2 * beta);
                if (v < bv || (v == bv && (a < ba || (a == ba && b < bb)))) bv = v, ba = a, bb = b;
            }
        if (bb != UINT32_MAX && size[i] + 2 > cap) { /* keep the cheaper one, ties the smaller id */
            if (ref_union(&r, i, bb, UINT32_MAX) < ref_union(&r, i, ba, UINT32_MAX)) ba = bb;
            bb = UINT32_MAX;
        }
        for (int x = 0; x < 2; x++) {
            uint32_t u = x ? bb : ba;
            if (u == UINT32_MAX) continue;
            part[u] = i, done[u] = 1, size[i]++, left--;
            for (uint64_t y = g->u_off[u]; y < g->u_off[u + 1]; y++) r.cov[(size_t)i * g->nv + g->u_adj[y]] = 1;
        }
    }
    free(r.cov), free(r.mark), free(t), free(size), free(done);
}

/* cr_tsh_data_step with no pair cap makes exactly the reference's choices:
 * alpha 1 and 2, exact and sampled, on small random graphs and a planted one. */
static void test_equals_reference(void) {
    cr_rng r;
    cr_rng_seed(&r, 31);
    int bad = 0;
    for (int rep = 0; rep < 120 && !bad; rep++) {
        uint32_t k;
        cr_bigraph *g = rep < 119 ? pu_small_random(&r, &k) : pu_planted(240, 200, 4, 6, 0.8, 9);
        if (rep == 119) k = 4;
        uint32_t n = g->nu, *a = malloc((size_t)n * 4 + 4), *b = malloc((size_t)n * 4 + 4);
        cr_err e;
        for (uint32_t alpha = 1; alpha <= 2 && !bad; alpha++)
            for (int sample = 0; sample <= 1 && !bad; sample++) {
                uint64_t seed = (uint64_t)rep * 4 + alpha * 2 + (uint64_t)sample;
                bad = cr_tsh_data_step(g, k, alpha, -1, sample, 0, seed, a, &e) != 0;
                ref_data_step(g, k, alpha, sample, seed, b);
                bad = bad || memcmp(a, b, (size_t)n * 4) != 0;
                if (bad) printf("  differs: rep %d, alpha %u, sample %d, n %u, k %u\n", rep, alpha, sample, n, k);
            }
        free(a), free(b);
        cr_bigraph_destroy(&g);
    }
    CR_CHECK(!bad);
}

/* A medium graph for alpha = 1 (the reference's pair loop is quadratic):
 * 2000 examples, k = 8, sampled (DPPA's step) and not. */
static void test_equals_reference_medium(void) {
    uint32_t n = 2000, k = 8, *a = malloc(n * 4), *b = malloc(n * 4);
    cr_bigraph *g = pu_planted(n, 1500, k, 8, 0.8, 17);
    cr_err e;
    for (int sample = 0; sample <= 1; sample++) {
        CR_CHECK(cr_tsh_data_step(g, k, 1, -1, sample, 0, 3, a, &e) == 0);
        ref_data_step(g, k, 1, sample, 3, b);
        CR_CHECK(memcmp(a, b, n * 4) == 0);
    }
    free(a), free(b);
    cr_bigraph_destroy(&g);
}

/* The pair cap bounds the search only: with any cap the result is complete
 * and balanced, the paper's example (few candidates) is unchanged, and on a
 * graph where it binds it changes some choice. */
static void test_pair_cap(void) {
    cr_bigraph *g = paper_graph();
    uint32_t up[4], ex[4];
    cr_err e;
    CR_CHECK(cr_tsh_data_step(g, 2, 2, -1, 0, 1, 1, up, &e) == 0);
    CR_CHECK(cr_tsh_data_step(g, 2, 2, -1, 0, 0, 1, ex, &e) == 0);
    CR_CHECK(!memcmp(up, ex, sizeof up) && ex[0] == 0 && ex[1] == 0 && ex[2] == 1 && ex[3] == 1);
    cr_bigraph_destroy(&g);
    uint32_t n = 400, k = 4;
    g = pu_planted(n, 300, k, 8, 0.7, 5);
    uint32_t *a = malloc(n * 4), *b = malloc(n * 4), cnt[4] = {0};
    CR_CHECK(cr_tsh_data_step(g, k, 2, -1, 0, 1, 1, a, &e) == 0);
    CR_CHECK(cr_tsh_data_step(g, k, 2, -1, 0, 0, 1, b, &e) == 0);
    for (uint32_t u = 0; u < n; u++) cnt[a[u] < k ? a[u] : 0] += a[u] < k ? 1 : 1000;
    CR_CHECK(cnt[0] == n / k && cnt[1] == n / k && cnt[2] == n / k && cnt[3] == n / k);
    CR_CHECK(memcmp(a, b, n * 4) != 0);
    free(a), free(b);
    cr_bigraph_destroy(&g);
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
    CR_RUN(test_equals_reference);
    CR_RUN(test_equals_reference_medium);
    CR_RUN(test_pair_cap);
    CR_RUN(test_bad_alpha);
    return cr_test_done();
}
