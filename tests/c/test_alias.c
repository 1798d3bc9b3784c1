/* Alias tables: exact probabilities, chi-square of the draws at a fixed
 * seed, range tables, determinism, and the refusal of bad weights. */
#include "base/cr_alias.h"
#include "cr_test.h"
#include "stat_util.h"

/* Zipf-like weights 1 / (k + 1)^1.1, with a zero and a hot key mixed in so
 * that the build meets all three cases (small, large, zero). */
static void zipf_weights(double *w, int n) {
    for (int k = 0; k < n; k++) w[k] = 1.0 / pow(k + 1.0, 1.1);
    w[7] = 0;
}

static void test_exact_probabilities(void) {
    double w[50];
    zipf_weights(w, 50);
    double total = 0;
    for (int k = 0; k < 50; k++) total += w[k];
    cr_alias a;
    cr_err e;
    CR_CHECK(cr_alias_build(&a, w, 50, &e) == 0);
    CR_CHECK_NEAR(a.total, total, 1e-12);
    for (int k = 0; k < 50; k++) CR_CHECK_NEAR(cr_alias_p(&a, (uint64_t)k), w[k] / total, 1e-12);
    CR_CHECK(cr_alias_p(&a, 50) == 0);
    cr_alias_free(&a);
    cr_alias_free(&a); /* idempotent */
}

/* Chi-square of 200000 draws against the table's distribution. */
static double draws_chi2(const cr_alias *a, const double *p, int n, uint64_t seed) {
    static long cnt[128];
    memset(cnt, 0, sizeof cnt);
    cr_rng r;
    cr_rng_seed(&r, seed);
    long draws = 200000;
    for (long i = 0; i < draws; i++) cnt[cr_alias_draw(a, &r)]++;
    return st_chi2(cnt, p, n, draws);
}

static void test_uniform_chi2(void) {
    cr_alias a;
    cr_err e;
    CR_CHECK(cr_alias_build(&a, NULL, 20, &e) == 0);
    CR_CHECK(a.prob == NULL);
    double p[20];
    for (int k = 0; k < 20; k++) p[k] = 1.0 / 20;
    double c = draws_chi2(&a, p, 20, 1);
    CR_CHECK(c < CHI2_999_DF19);
    cr_alias_free(&a);
}

static void test_zipf_chi2(void) {
    double w[50], p[50], total = 0;
    zipf_weights(w, 50);
    for (int k = 0; k < 50; k++) total += w[k];
    for (int k = 0; k < 50; k++) p[k] = w[k] / total;
    cr_alias a;
    cr_err e;
    CR_CHECK(cr_alias_build(&a, w, 50, &e) == 0);
    /* key 7 has weight 0: never drawn; it is left out of the statistic. */
    CR_CHECK(cr_alias_p(&a, 7) == 0);
    double c = draws_chi2(&a, p, 50, 2);
    CR_CHECK(c < CHI2_999_DF49); /* 49 cells with p > 0 -> 48 df; the df49 bound is looser */
    /* The test can fail: the same draws judged against the uniform law. */
    double u[50];
    for (int k = 0; k < 50; k++) u[k] = k == 7 ? 0 : 1.0 / 49;
    CR_CHECK(draws_chi2(&a, u, 50, 2) > 10 * CHI2_999_DF49);
    cr_alias_free(&a);
}

/* A node's slice: draws stay in [lo, hi) and follow w restricted there. */
static void test_range(void) {
    double w[50], p[50] = {0}, t = 0;
    zipf_weights(w, 50);
    for (int k = 10; k < 30; k++) t += w[k];
    for (int k = 10; k < 30; k++) p[k] = w[k] / t;
    cr_alias a;
    cr_err e;
    CR_CHECK(cr_alias_build_range(&a, w, 50, 10, 30, &e) == 0);
    cr_rng r;
    cr_rng_seed(&r, 3);
    for (int i = 0; i < 10000; i++) {
        uint64_t k = cr_alias_draw(&a, &r);
        CR_CHECK(k >= 10 && k < 30);
    }
    static long cnt[20];
    for (int i = 0; i < 200000; i++) cnt[cr_alias_draw(&a, &r) - 10]++;
    CR_CHECK(st_chi2(cnt, p + 10, 20, 200000) < CHI2_999_DF19);
    cr_alias_free(&a);
    CR_CHECK(cr_alias_build_range(&a, NULL, 50, 40, 50, &e) == 0);
    for (int i = 0; i < 1000; i++) {
        uint64_t k = cr_alias_draw(&a, &r);
        CR_CHECK(k >= 40 && k < 50);
    }
    CR_CHECK_NEAR(cr_alias_p(&a, 45), 0.1, 1e-15);
    cr_alias_free(&a);
}

static void test_deterministic(void) {
    double w[50];
    zipf_weights(w, 50);
    cr_alias a;
    cr_err e;
    CR_CHECK(cr_alias_build(&a, w, 50, &e) == 0);
    cr_rng r1, r2;
    cr_rng_seed(&r1, 9);
    cr_rng_seed(&r2, 9);
    for (int i = 0; i < 1000; i++) CR_CHECK(cr_alias_draw(&a, &r1) == cr_alias_draw(&a, &r2));
    cr_alias_free(&a);
}

/* One point mass among zeros: always that key. */
static void test_point_mass(void) {
    double w[5] = {0, 0, 3, 0, 0};
    cr_alias a;
    cr_err e;
    CR_CHECK(cr_alias_build(&a, w, 5, &e) == 0);
    cr_rng r;
    cr_rng_seed(&r, 4);
    for (int i = 0; i < 1000; i++) CR_CHECK(cr_alias_draw(&a, &r) == 2);
    cr_alias_free(&a);
}

static void test_bad_weights(void) {
    cr_alias a;
    cr_err e;
    double nan_w[3] = {1, NAN, 1}, neg[3] = {1, 2, -0.5}, zero[3] = {0, 0, 0};
    double inf_w[2] = {1, INFINITY}, big[2] = {1e308, 1e308}, part[4] = {1, 0, 0, 1};
    CR_CHECK(cr_alias_build(&a, nan_w, 3, &e) == -1);
    CR_CHECK_STR(e.msg, "weight of key 1 is not a number");
    CR_CHECK(a.prob == NULL && a.m == 0);
    CR_CHECK(cr_alias_build(&a, neg, 3, &e) == -1);
    CR_CHECK_STR(e.msg, "weight of key 2 is negative (-0.5)");
    CR_CHECK(cr_alias_build(&a, zero, 3, &e) == -1);
    CR_CHECK_STR(e.msg, "all weights are zero");
    CR_CHECK(cr_alias_build(&a, inf_w, 2, &e) == -1);
    CR_CHECK_STR(e.msg, "weight of key 1 is infinite");
    CR_CHECK(cr_alias_build(&a, big, 2, &e) == -1);
    CR_CHECK_STR(e.msg, "sum of weights is not finite");
    CR_CHECK(cr_alias_build(&a, NULL, 0, &e) == -1);
    CR_CHECK_STR(e.msg, "no keys to sample from (n = 0)");
    CR_CHECK(cr_alias_build_range(&a, part, 4, 1, 3, &e) == -1);
    CR_CHECK_STR(e.msg, "all weights in keys [1, 3) are zero");
    CR_CHECK(cr_alias_build_range(&a, part, 4, 3, 3, &e) == -1);
    CR_CHECK_STR(e.msg, "bad key range [3, 3) for 4 keys");
    CR_CHECK(cr_alias_build_range(&a, NULL, 4, 2, 5, &e) == -1);
    CR_CHECK_STR(e.msg, "bad key range [2, 5) for 4 keys");
    cr_alias_free(&a);
}

int main(void) {
    CR_RUN(test_exact_probabilities);
    CR_RUN(test_uniform_chi2);
    CR_RUN(test_zipf_chi2);
    CR_RUN(test_range);
    CR_RUN(test_deterministic);
    CR_RUN(test_point_mass);
    CR_RUN(test_bad_weights);
    return cr_test_done();
}
