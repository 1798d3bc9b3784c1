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

/* The reference: Algorithm 1 written out plainly. Marginal costs are
 * recounted from a covered-parameter table at every step and pairs are tried
 * all against all (cost |N(a) ∪ N(b) \ N(U_i)|, ties by smaller id, then
 * larger). The only thing it shares with cr_tsh.c is the definition of the
 * sample: T is drawn over the positions of machine i's heap of unassigned
 * examples ordered by (cost, id), so this keeps the same heap, arranged by
 * the same operations (build, removal of an assigned example from every
 * heap, one sift-up per cost decrease). */
typedef struct ref {
    const cr_bigraph *g;
    uint32_t k, n, *h, *pos, *cost, *hn; /* k heaps of ids: h, pos, cost are k x n */
    unsigned char *cov;                  /* k x nv: v in N(U_i) */
} ref;

static int ref_less(const ref *r, uint32_t i, uint32_t a, uint32_t b) {
    const uint32_t *c = r->cost + (size_t)i * r->n;
    return c[a] < c[b] || (c[a] == c[b] && a < b);
}

static void ref_put(ref *r, uint32_t i, uint32_t p, uint32_t u) {
    r->h[(size_t)i * r->n + p] = u, r->pos[(size_t)i * r->n + u] = p;
}

static uint32_t ref_at(const ref *r, uint32_t i, uint32_t p) { return r->h[(size_t)i * r->n + p]; }

static void ref_up(ref *r, uint32_t i, uint32_t p) {
    uint32_t u = ref_at(r, i, p);
    for (; p > 0 && ref_less(r, i, u, ref_at(r, i, (p - 1) / 2)); p = (p - 1) / 2)
        ref_put(r, i, p, ref_at(r, i, (p - 1) / 2));
    ref_put(r, i, p, u);
}

static void ref_down(ref *r, uint32_t i, uint32_t p) {
    uint32_t u = ref_at(r, i, p);
    for (uint32_t c; (c = 2 * p + 1) < r->hn[i]; p = c) {
        if (c + 1 < r->hn[i] && ref_less(r, i, ref_at(r, i, c + 1), ref_at(r, i, c))) c++;
        if (!ref_less(r, i, ref_at(r, i, c), u)) break;
        ref_put(r, i, p, ref_at(r, i, c));
    }
    ref_put(r, i, p, u);
}

static void ref_assign(ref *r, uint32_t u, uint32_t i) {
    const cr_bigraph *g = r->g;
    for (uint32_t j = 0; j < r->k; j++) {
        uint32_t p = r->pos[(size_t)j * r->n + u], last = ref_at(r, j, --r->hn[j]);
        r->pos[(size_t)j * r->n + u] = UINT32_MAX;
        if (p == r->hn[j]) continue;
        ref_put(r, j, p, last);
        ref_down(r, j, p);
        ref_up(r, j, r->pos[(size_t)j * r->n + last]);
    }
    for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) {
        uint32_t v = g->u_adj[a];
        if (r->cov[(size_t)i * g->nv + v]) continue;
        r->cov[(size_t)i * g->nv + v] = 1;
        for (uint64_t b = g->v_off[v]; b < g->v_off[v + 1]; b++) {
            uint32_t w = g->v_adj[b];
            if (r->pos[(size_t)i * r->n + w] == UINT32_MAX) continue;
            r->cost[(size_t)i * r->n + w]--;
            ref_up(r, i, r->pos[(size_t)i * r->n + w]);
        }
    }
}

/* |N(S) \ N(U_i)| for S = {a} or {a, b} (b = UINT32_MAX: singleton). */
static uint32_t ref_union(const ref *r, uint32_t i, uint32_t a, uint32_t b, unsigned char *mark) {
    const cr_bigraph *g = r->g;
    uint32_t c = 0, s[2] = {a, b};
    for (int x = 0; x < 2 && s[x] != UINT32_MAX; x++)
        for (uint64_t y = g->u_off[s[x]]; y < g->u_off[s[x] + 1]; y++) {
            uint32_t v = g->u_adj[y];
            if (!r->cov[(size_t)i * g->nv + v] && !mark[v]) mark[v] = 1, c++;
        }
    for (int x = 0; x < 2 && s[x] != UINT32_MAX; x++)
        for (uint64_t y = g->u_off[s[x]]; y < g->u_off[s[x] + 1]; y++) mark[g->u_adj[y]] = 0;
    return c;
}

static void ref_data_step(const cr_bigraph *g, uint32_t k, uint32_t alpha, int sample, uint64_t seed,
                          uint32_t *part) {
    uint32_t n = g->nu, cap = (n + k - 1) / k;
    double beta = n;
    ref r = {g, k, n, malloc((size_t)k * n * 4 + 4), malloc((size_t)k * n * 4 + 4), malloc((size_t)k * n * 4 + 4),
             calloc(k, 4), calloc((size_t)k * g->nv + 1, 1)};
    uint32_t *t = malloc((size_t)n * 4 + 4), *size = calloc(k, 4);
    unsigned char *mark = calloc(g->nv + 1, 1);
    for (uint32_t i = 0; i < k; i++) {
        r.hn[i] = n;
        for (uint32_t u = 0; u < n; u++) r.cost[(size_t)i * n + u] = (uint32_t)(g->u_off[u + 1] - g->u_off[u]);
        for (uint32_t u = 0; u < n; u++) ref_put(&r, i, u, u);
        for (uint32_t p = n / 2; p-- > 0;) ref_down(&r, i, p);
    }
    cr_rng rng;
    cr_rng_seed(&rng, seed);
    for (uint32_t left = n; left > 0;) {
        uint32_t i = 0, m = 0;
        for (uint32_t j = 1; j < k; j++)
            if (size[j] < size[i]) i = j;
        double keep = sample ? (double)n / ((double)k * r.hn[i]) : 1.0; /* T: positions of heap i */
        if (keep >= 1.0) {
            for (uint32_t p = 0; p < r.hn[i]; p++) t[m++] = ref_at(&r, i, p);
        } else {
            for (double p = -1, lk = log1p(-keep);;) {
                p += 1 + floor(log1p(-cr_rng_uniform(&rng)) / lk);
                if (p >= r.hn[i]) break;
                t[m++] = ref_at(&r, i, (uint32_t)p);
            }
        }
        if (m == 0) t[m++] = ref_at(&r, i, (uint32_t)cr_rng_below(&rng, r.hn[i]));
        double bv = INFINITY;
        uint32_t ba = UINT32_MAX, bb = UINT32_MAX;
        for (uint32_t x = 0; x < m; x++)
            for (uint32_t y = alpha == 2 ? x : m; y <= m; y++) { /* y = m: the singleton t[x] */
                uint32_t a = t[x], b = y < m ? t[y] : UINT32_MAX;
                if (a == b) continue;
                if (b != UINT32_MAX && b < a) a = t[y], b = t[x];
                double v = (double)ref_union(&r, i, a, b, mark) - (b == UINT32_MAX ? beta : 2 * beta);
                if (v < bv || (v == bv && (a < ba || (a == ba && b < bb)))) bv = v, ba = a, bb = b;
            }
        if (bb != UINT32_MAX && size[i] + 2 > cap) { /* keep the cheaper one */
            uint32_t ca = ref_union(&r, i, ba, UINT32_MAX, mark), cb = ref_union(&r, i, bb, UINT32_MAX, mark);
            if (cb < ca) ba = bb; /* equal costs: the smaller id, ba */
            bb = UINT32_MAX;
        }
        part[ba] = i, ref_assign(&r, ba, i), size[i]++, left--;
        if (bb != UINT32_MAX) part[bb] = i, ref_assign(&r, bb, i), size[i]++, left--;
    }
    free(r.h), free(r.pos), free(r.cost), free(r.hn), free(r.cov), free(t), free(size), free(mark);
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
    CR_RUN(test_pair_cap);
    CR_RUN(test_bad_alpha);
    return cr_test_done();
}
