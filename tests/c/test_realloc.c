#include "partition/cr_realloc.h"

#include <stdlib.h>

#include "cr_test.h"

static void test_lru_bounded_and_recency(void) {
    cr_lru *l = cr_lru_new(10);
    cr_err e;
    uint32_t idx[] = {0};
    float val[] = {1};
    uint32_t keys[] = {3};
    for (uint64_t id = 0; id < 100; id++) {
        CR_CHECK(cr_lru_put(l, id, idx, val, 1, keys, 1, &e) == 0);
        CR_CHECK(cr_lru_size(l) <= 10);
        if (id % 7 == 0) CR_CHECK(cr_lru_put(l, 3, idx, val, 1, keys, 1, &e) == 0); /* keep 3 hot */
    }
    CR_CHECK(cr_lru_size(l) == 10);
    CR_CHECK(cr_lru_contains(l, 99) && cr_lru_contains(l, 91) && cr_lru_contains(l, 3));
    CR_CHECK(!cr_lru_contains(l, 90) && !cr_lru_contains(l, 0) && !cr_lru_contains(l, 50));
    /* replacing keeps the size */
    CR_CHECK(cr_lru_put(l, 95, idx, val, 1, keys, 1, &e) == 0);
    CR_CHECK(cr_lru_size(l) == 10);
    uint32_t bad[] = {2, 2};
    float bv[] = {1, 1};
    CR_CHECK(cr_lru_put(l, 1000, bad, bv, 2, keys, 1, &e) == -1);
    CR_CHECK_STR(e.msg, "lru: sample 1000: feature indices not strictly increasing at 1");
    cr_lru_destroy(&l);
    CR_CHECK(l == NULL);
}

/* Hash index survives heavy churn (backward-shift deletes). */
static void test_lru_churn(void) {
    cr_lru *l = cr_lru_new(37);
    cr_err e;
    for (uint64_t id = 0; id < 5000; id++) {
        uint64_t key = (id * 2654435761u) % 1000;
        CR_CHECK(cr_lru_put(l, key, NULL, NULL, 0, NULL, 0, &e) == 0);
        CR_CHECK(cr_lru_contains(l, key));
    }
    CR_CHECK(cr_lru_size(l) == 37);
    cr_lru_destroy(&l);
}

/* Memory follows the rows cached now: it grows while the cache fills, then
 * stays put however long the stream, and shrinks when big rows are replaced. */
static void test_lru_bytes_bounded(void) {
    cr_lru *l = cr_lru_new(8);
    cr_err e;
    uint32_t idx[100], keys[100];
    float val[100];
    for (uint32_t i = 0; i < 100; i++) idx[i] = i, keys[i] = i, val[i] = 1;
    uint64_t empty = cr_lru_bytes(l), full = 0;
    for (uint64_t id = 0; id < 1000; id++) {
        CR_CHECK(cr_lru_put(l, id, idx, val, 100, keys, 100, &e) == 0);
        if (id == 7) full = cr_lru_bytes(l);
        if (id >= 7) CR_CHECK(cr_lru_bytes(l) == full);
    }
    CR_CHECK(full == empty + 8 * (101 * 8 + 101 * 4));
    for (uint64_t id = 1000; id < 1008; id++) CR_CHECK(cr_lru_put(l, id, idx, val, 1, keys, 1, &e) == 0);
    CR_CHECK(cr_lru_bytes(l) == empty + 8 * (2 * 8 + 2 * 4));
    cr_lru_destroy(&l);
}

/* f(d, p) by hand: cache a = (1,0) keys {0,1}; b = (0,1) keys {1,2};
 * sample d = (1, 0.5): dist(a) = 0.5, dist(b) = sqrt(1.25). */
static void test_estimate_weights(void) {
    cr_lru *l = cr_lru_new(4);
    cr_err e;
    uint32_t ia[] = {0}, ib[] = {1};
    float va[] = {1}, vb[] = {1};
    uint32_t ka[] = {0, 1}, kb[] = {1, 2};
    CR_CHECK(cr_lru_put(l, 1, ia, va, 1, ka, 2, &e) == 0);
    CR_CHECK(cr_lru_put(l, 2, ib, vb, 1, kb, 2, &e) == 0);
    uint32_t id[] = {0, 1};
    float vd[] = {1, 0.5f};
    cr_sample s = {id, vd, 2};
    cr_realloc_opts o;
    cr_realloc_opts_default(&o);
    o.r = 2;
    o.c = 0.0;
    double w[4] = {0};
    uint64_t edges = 0;
    CR_CHECK(cr_realloc_estimate(l, &s, 1, &o, 4, w, &edges, &e) == 0);
    double sa = 1 / 0.5, sb = 1 / sqrt(1.25);
    CR_CHECK(edges == 3);
    CR_CHECK_NEAR(w[0], sa / (sa + sb), 1e-6);
    CR_CHECK_NEAR(w[1], 1.0, 1e-6);
    CR_CHECK_NEAR(w[2], sb / (sa + sb), 1e-6);
    CR_CHECK(w[3] == 0);
    /* threshold c drops the weak edge; r = 1 uses only the nearest */
    o.c = 0.4;
    double w2[4] = {0};
    CR_CHECK(cr_realloc_estimate(l, &s, 1, &o, 4, w2, &edges, &e) == 0);
    CR_CHECK(edges == 2 && w2[2] == 0);
    o.r = 1;
    double w3[4] = {0};
    CR_CHECK(cr_realloc_estimate(l, &s, 1, &o, 4, w3, &edges, &e) == 0);
    CR_CHECK(w3[0] == 1 && w3[1] == 1 && w3[2] == 0);
    /* a cached key outside the key range is an error */
    CR_CHECK(cr_realloc_estimate(l, &s, 1, &o, 2, w3, &edges, &e) == -1);
    CR_CHECK_STR(e.msg, "realloc: cached sample 2 accessed key 2 >= 2 keys");
    cr_lru_destroy(&l);
}

static double load_spread(const uint32_t *server, const double *w, uint32_t n, uint32_t k) {
    double L[8] = {0};
    for (uint32_t p = 0; p < n; p++) L[server[p]] += w[p];
    double mx = L[0], mn = L[0];
    for (uint32_t j = 1; j < k; j++) mx = L[j] > mx ? L[j] : mx, mn = L[j] < mn ? L[j] : mn;
    return mx - mn;
}

static void test_run_balances_and_counts_migration(void) {
    enum { N = 200, K = 4 };
    uint32_t server[N];
    double w[N], size[N];
    for (uint32_t p = 0; p < N; p++) {
        server[p] = p < 120 ? 0 : p % K; /* server 0 overloaded */
        w[p] = 1 + (p % 5);
        size[p] = 0.5 + (p % 3) * 0.25;
    }
    double before = load_spread(server, w, N, K);
    cr_realloc_opts o;
    cr_realloc_opts_default(&o);
    cr_realloc_result r;
    cr_err e;
    CR_CHECK(cr_realloc_run(K, N, server, w, size, &o, &r, &e) == 0);
    double after = load_spread(server, w, N, K);
    CR_CHECK(r.moves > 0);
    CR_CHECK(after < before / 4);
    CR_CHECK_NEAR(r.max_before - r.min_before, before, 1e-9);
    CR_CHECK_NEAR(r.max_after - r.min_after, after, 1e-9);
    double vol = 0;
    for (uint64_t i = 0; i < r.moves; i++) {
        CR_CHECK(r.from[i] != r.to[i] && r.to[i] < K);
        vol += size[r.key[i]];
    }
    CR_CHECK_NEAR(r.migration_volume, vol, 1e-9);
    /* stops when benefit <= cost: the next best move would not pay */
    cr_realloc_result r2;
    CR_CHECK(cr_realloc_run(K, N, server, w, size, &o, &r2, &e) == 0);
    CR_CHECK(r2.moves == 0);
    cr_realloc_result_free(&r);
    cr_realloc_result_free(&r2);
}

static void test_run_cost_and_threshold(void) {
    enum { N = 40, K = 2 };
    uint32_t server[N];
    double w[N], size[N];
    for (uint32_t p = 0; p < N; p++) server[p] = p < 30 ? 0 : 1, w[p] = 1, size[p] = 5;
    cr_realloc_opts o;
    cr_realloc_opts_default(&o);
    cr_realloc_result r;
    cr_err e;
    /* each move saves 1 unit of bottleneck traffic but costs 5: nothing moves */
    CR_CHECK(cr_realloc_run(K, N, server, w, size, &o, &r, &e) == 0);
    CR_CHECK(r.moves == 0 && r.migration_volume == 0);
    /* over a horizon of 10 batches it pays: moves until the spread is <= 1 */
    o.horizon = 10;
    CR_CHECK(cr_realloc_run(K, N, server, w, size, &o, &r, &e) == 0);
    CR_CHECK(r.moves == 10 && r.migration_volume == 50);
    CR_CHECK(r.max_after == 20 && r.min_after == 20);
    cr_realloc_result_free(&r);
    /* below the trigger threshold nothing happens */
    for (uint32_t p = 0; p < N; p++) server[p] = p < 30 ? 0 : 1;
    o.threshold = 25;
    CR_CHECK(cr_realloc_run(K, N, server, w, size, &o, &r, &e) == 0);
    CR_CHECK(r.moves == 0);
    server[0] = 7;
    CR_CHECK(cr_realloc_run(K, N, server, w, size, &o, &r, &e) == -1);
    CR_CHECK_STR(e.msg, "realloc: key 0 on server 7 >= k = 2");
}

/* End to end: samples of "topic" t (feature t) access keys 10t..10t+9; all
 * hot topics' keys sit on server 0. A batch drawn from the cached topics gets
 * access estimates on exactly those keys, and reallocation spreads them. */
static void test_pipeline_shifted_access(void) {
    enum { K = 4, NK = 80 };
    cr_lru *l = cr_lru_new(64);
    cr_err e;
    for (uint64_t id = 0; id < 200; id++) {
        uint32_t t = (uint32_t)(id % 4), idx[1] = {t};
        float val[1] = {1.0f + (float)(id % 3) * 0.01f};
        uint32_t keys[10];
        for (uint32_t j = 0; j < 10; j++) keys[j] = 10 * t + j;
        CR_CHECK(cr_lru_put(l, id, idx, val, 1, keys, 10, &e) == 0);
    }
    CR_CHECK(cr_lru_size(l) == 64);
    uint32_t server[NK];
    for (uint32_t p = 0; p < NK; p++) server[p] = p < 40 ? 0 : 1 + p % 3;
    cr_sample batch[40];
    uint32_t bidx[40];
    float bval[40];
    for (uint32_t d = 0; d < 40; d++) {
        bidx[d] = d % 4, bval[d] = 1.0f;
        batch[d] = (cr_sample){&bidx[d], &bval[d], 1};
    }
    cr_realloc_opts o;
    cr_realloc_opts_default(&o);
    double w[NK] = {0};
    uint64_t edges;
    CR_CHECK(cr_realloc_estimate(l, batch, 40, &o, NK, w, &edges, &e) == 0);
    CR_CHECK(edges == 400);
    for (uint32_t p = 0; p < NK; p++) CR_CHECK_NEAR(w[p], p < 40 ? 10.0 : 0.0, 1e-9);
    double before = load_spread(server, w, NK, K);
    CR_CHECK_NEAR(before, 400, 1e-9);
    cr_realloc_result r;
    CR_CHECK(cr_realloc_run(K, NK, server, w, NULL, &o, &r, &e) == 0);
    CR_CHECK(load_spread(server, w, NK, K) <= 10 + 1e-9);
    CR_CHECK(r.moves == 30 && r.migration_volume == 30);
    cr_realloc_result_free(&r);
    cr_lru_destroy(&l);
}

int main(void) {
    CR_RUN(test_pipeline_shifted_access);
    CR_RUN(test_lru_bounded_and_recency);
    CR_RUN(test_lru_churn);
    CR_RUN(test_lru_bytes_bounded);
    CR_RUN(test_estimate_weights);
    CR_RUN(test_run_balances_and_counts_migration);
    CR_RUN(test_run_cost_and_threshold);
    return cr_test_done();
}
