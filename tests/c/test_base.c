#include "base/cr_alloc.h"
#include "base/cr_err.h"
#include "base/cr_rng.h"
#include "cr_test.h"

static void test_err_at(void) {
    cr_err e;
    CR_CHECK(cr_errf_at(&e, "a.txt", 7, "bad value '%s'", "x") == -1);
    CR_CHECK_STR(e.msg, "a.txt:7: bad value 'x'");
}

static void test_rng_deterministic(void) {
    cr_rng a, b;
    cr_rng_seed(&a, 42);
    cr_rng_seed(&b, 42);
    for (int i = 0; i < 100; i++) CR_CHECK(cr_rng_u64(&a) == cr_rng_u64(&b));
    cr_rng_seed2(&a, 42, 1);
    cr_rng_seed2(&b, 42, 2);
    CR_CHECK(cr_rng_u64(&a) != cr_rng_u64(&b));
}

static void test_rng_below_uniform(void) {
    cr_rng r;
    cr_rng_seed(&r, 1);
    int counts[10] = {0};
    for (int i = 0; i < 100000; i++) counts[cr_rng_below(&r, 10)]++;
    for (int i = 0; i < 10; i++) CR_CHECK(counts[i] > 9500 && counts[i] < 10500);
}

static void test_rng_normal_moments(void) {
    cr_rng r;
    cr_rng_seed(&r, 3);
    double s = 0, s2 = 0;
    int n = 200000;
    for (int i = 0; i < n; i++) {
        double x = cr_rng_normal(&r);
        s += x;
        s2 += x * x;
    }
    CR_CHECK_NEAR(s / n, 0.0, 0.01);
    CR_CHECK_NEAR(s2 / n, 1.0, 0.02);
}

int main(void) {
    CR_RUN(test_err_at);
    CR_RUN(test_rng_deterministic);
    CR_RUN(test_rng_below_uniform);
    CR_RUN(test_rng_normal_moments);
    return cr_test_done();
}
