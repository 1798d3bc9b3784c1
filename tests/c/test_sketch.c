/* Access-count sketch (src/ps/cr_sketch.h): estimates never undercount and
 * stay within the stated bound for the stated share of keys (seeded Zipf
 * streams, compared with exact counts); exact mode is exact; merge = sum;
 * a window (sub) counts what came after; planted hot keys and the Zipf
 * head are found as heavy hitters; memory is fixed whatever the stream;
 * the wire form round-trips and refuses bad bytes; a reader beside the
 * writer thread sees whole counters. */
#include <pthread.h>
#include <stdatomic.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "ps/cr_sketch.h"

/* Zipf(s) over [0, k): inverse CDF by binary search on the cumulative weights. */
typedef struct zipf {
    double *cdf;
    int64_t k;
} zipf;

static zipf zipf_new(int64_t k, double s) {
    zipf z = {malloc((size_t)k * sizeof(double)), k};
    double acc = 0;
    for (int64_t i = 0; i < k; i++) z.cdf[i] = acc += pow((double)(i + 1), -s);
    for (int64_t i = 0; i < k; i++) z.cdf[i] /= acc;
    return z;
}

static int64_t zipf_draw(const zipf *z, cr_rng *r) {
    double u = cr_rng_uniform(r);
    int64_t lo = 0, hi = z->k - 1;
    while (lo < hi) {
        int64_t m = (lo + hi) / 2;
        if (z->cdf[m] < u) lo = m + 1;
        else hi = m;
    }
    return lo;
}

/* Rank i of the Zipf stream is key perm(i): hot keys spread over the range. */
static int64_t perm(int64_t i, int64_t k) { return (int64_t)(((uint64_t)i * 7919u + 13u) % (uint64_t)k); }

/* Feed n keys (batches of 100) to sk and to the exact counts. */
static void feed(cr_sketch *sk, uint32_t *exact, const zipf *z, cr_rng *r, int64_t n) {
    int64_t b[100];
    for (int64_t done = 0; done < n; done += 100) {
        for (int i = 0; i < 100; i++) {
            b[i] = perm(zipf_draw(z, r), z->k);
            exact[b[i]]++;
        }
        cr_sketch_add_keys(sk, b, 100);
    }
}

#define K 100000
#define N 1000000

static void test_error_bound(void) {
    /* Over 3 seeds: no key undercounted; the share of keys over the bound
     * 2e/width * N stays below e^-depth = 1.8% (+ slack for the sample);
     * the mean error stays below its expectation bound 2N/width. */
    zipf z = zipf_new(K, 1.0);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        cr_rng r;
        cr_rng_seed(&r, seed);
        cr_sketch *sk = cr_sketch_new(K, 4096, 4, 256, seed * 77, NULL);
        uint32_t *ex = calloc(K, sizeof *ex);
        CR_CHECK(sk && ex && !cr_sketch_exact(sk));
        feed(sk, ex, &z, &r, N);
        CR_CHECK(cr_sketch_total(sk) == N);
        double bound = cr_sketch_bound(sk), sum = 0;
        CR_CHECK_NEAR(bound, 2 * M_E / 4096 * N, 1e-6);
        int64_t over = 0;
        for (int64_t k = 0; k < K; k++) {
            uint64_t est = cr_sketch_estimate(sk, k);
            CR_CHECK(est >= ex[k]);
            if ((double)(est - ex[k]) > bound) over++;
            sum += (double)(est - ex[k]);
        }
        printf("  seed %llu: %lld of %d keys over the bound %.0f, mean error %.1f (bound %.1f)\n",
               (unsigned long long)seed, (long long)over, K, bound, sum / K, 2.0 * N / 4096);
        CR_CHECK((double)over / K <= exp(-4.0) + 0.01);
        int64_t distinct = 0;
        for (int64_t k = 0; k < K; k++) distinct += ex[k] > 0;
        /* a lower bound: far more keys than columns fill every column */
        CR_CHECK(cr_sketch_distinct(sk) <= distinct && cr_sketch_distinct(sk) >= 4000);
        CR_CHECK(sum / K <= 2.0 * N / 4096);
        cr_sketch_destroy(&sk);
        free(ex);
    }
    free(z.cdf);
}

static void test_exact_mode(void) {
    /* 10,000 keys fit in width 4096 x depth 4: counts are exact, heavy scans. */
    zipf z = zipf_new(10000, 1.1);
    cr_rng r;
    cr_rng_seed(&r, 5);
    cr_sketch *sk = cr_sketch_new(10000, 4096, 4, 64, 1, NULL);
    uint32_t *ex = calloc(10000, sizeof *ex);
    CR_CHECK(sk && cr_sketch_exact(sk) && cr_sketch_bound(sk) == 0);
    feed(sk, ex, &z, &r, 200000);
    for (int64_t k = 0; k < 10000; k++) CR_CHECK(cr_sketch_estimate(sk, k) == ex[k]);
    cr_sketch_hit h[16];
    int n = cr_sketch_heavy(sk, 1000, h, 16);
    int want = 0;
    for (int64_t k = 0; k < 10000; k++) want += ex[k] > 1000;
    CR_CHECK(n == (want < 16 ? want : 16) && n > 0);
    for (int i = 0; i < n; i++) CR_CHECK(h[i].count == ex[h[i].key] && h[i].count > 1000);
    for (int i = 1; i < n; i++) CR_CHECK(h[i - 1].count >= h[i].count);
    CR_CHECK(cr_sketch_bytes(sk) < 10000 * 4 + 4096); /* one counter per key, no candidates */
    int64_t distinct = 0;
    for (int64_t k = 0; k < 10000; k++) distinct += ex[k] > 0;
    CR_CHECK(cr_sketch_distinct(sk) == distinct);
    cr_sketch_destroy(&sk);
    free(ex);
    free(z.cdf);
}

static void test_merge_is_sum(void) {
    /* Two streams into two sketches, merged = one sketch of both, counter for
     * counter (every estimate and the total); a window is what came after. */
    zipf z = zipf_new(K, 0.9);
    cr_rng r;
    cr_rng_seed(&r, 9);
    uint32_t *ex = calloc(K, sizeof *ex);
    cr_sketch *a = cr_sketch_new(K, 1024, 3, 64, 4, NULL), *b = cr_sketch_new(K, 1024, 3, 64, 4, NULL);
    cr_sketch *both = cr_sketch_new(K, 1024, 3, 64, 4, NULL), *other = cr_sketch_new(K, 1024, 3, 64, 5, NULL);
    feed(a, ex, &z, &r, 100000);
    cr_sketch *before = cr_sketch_clone(a);
    cr_rng r2;
    cr_rng_seed(&r2, 9);
    feed(both, ex, &z, &r2, 100000);
    cr_rng_seed(&r, 10);
    feed(b, ex, &z, &r, 50000);
    cr_rng_seed(&r2, 10);
    feed(both, ex, &z, &r2, 50000);
    cr_err e;
    CR_CHECK(cr_sketch_merge(a, b, &e) == 0);
    CR_CHECK(cr_sketch_total(a) == 150000 && cr_sketch_total(a) == cr_sketch_total(both));
    for (int64_t k = 0; k < K; k++) CR_CHECK(cr_sketch_estimate(a, k) == cr_sketch_estimate(both, k));
    CR_CHECK(cr_sketch_sub(a, before, &e) == 0);
    CR_CHECK(cr_sketch_total(a) == 50000);
    for (int64_t k = 0; k < K; k++) CR_CHECK(cr_sketch_estimate(a, k) == cr_sketch_estimate(b, k));
    CR_CHECK(cr_sketch_merge(a, other, &e) == -1);
    CR_CHECK(strstr(e.msg, "shapes differ") != NULL);
    cr_sketch_destroy(&a);
    cr_sketch_destroy(&b);
    cr_sketch_destroy(&both);
    cr_sketch_destroy(&other);
    cr_sketch_destroy(&before);
    free(ex);
    free(z.cdf);
}

static void test_topk_zipf(void) {
    /* Zipf 1.1 over 100,000 keys: every key above 100x the mean count (the
     * NuPS rule) is a heavy hitter, and none below it minus the bound is,
     * even split over 4 workers' sketches merged. */
    zipf z = zipf_new(K, 1.1);
    uint32_t *ex = calloc(K, sizeof *ex);
    cr_sketch *m = cr_sketch_new(K, 4096, 4, 256, 3, NULL);
    for (int w = 0; w < 4; w++) {
        cr_rng r;
        cr_rng_seed2(&r, 21, (uint64_t)w);
        cr_sketch *sk = cr_sketch_new(K, 4096, 4, 256, 3, NULL);
        feed(sk, ex, &z, &r, N / 4);
        CR_CHECK(cr_sketch_merge(m, sk, NULL) == 0);
        cr_sketch_destroy(&sk);
    }
    uint64_t thr = 100 * (uint64_t)N / K;
    cr_sketch_hit h[512];
    int n = cr_sketch_heavy(m, thr, h, 512);
    int want = 0;
    for (int64_t k = 0; k < K; k++) want += ex[k] > thr;
    printf("  %d heavy hitters over %llu, %d keys truly over it\n", n, (unsigned long long)thr, want);
    CR_CHECK(want >= 20 && n >= want);
    for (int64_t k = 0; k < K; k++) {
        if (ex[k] <= thr) continue;
        int found = 0;
        for (int i = 0; i < n; i++) found |= h[i].key == k;
        CR_CHECK(found);
    }
    for (int i = 0; i < n; i++) CR_CHECK((double)ex[h[i].key] > (double)thr - cr_sketch_bound(m));
    cr_sketch_destroy(&m);
    free(ex);
    free(z.cdf);
}

static void test_planted(void) {
    /* 8 planted keys, each 2% of a uniform stream over 1,000,000 keys: found
     * exactly (a flat stream has none), whatever their place in the stream. */
    int64_t hot[8] = {17, 999999, 4242, 500000, 123457, 77, 654321, 31337};
    cr_rng r;
    cr_rng_seed(&r, 8);
    cr_sketch *sk = cr_sketch_new(1000000, 4096, 4, 64, 99, NULL);
    int64_t b[100];
    for (int t = 0; t < 20000; t++) {
        for (int i = 0; i < 100; i++)
            b[i] = cr_rng_below(&r, 100) < 16 ? hot[cr_rng_below(&r, 8)] : (int64_t)cr_rng_below(&r, 1000000);
        cr_sketch_add_keys(sk, b, 100);
    }
    cr_sketch_hit h[64];
    int n = cr_sketch_heavy(sk, 100 * 2000000 / 1000000 * 10, h, 64); /* 1000x the mean */
    CR_CHECK(n == 8);
    for (int j = 0; j < 8; j++) {
        int found = 0;
        for (int i = 0; i < n; i++) found |= h[i].key == hot[j];
        CR_CHECK(found);
    }
    cr_sketch *flat = cr_sketch_new(1000000, 4096, 4, 64, 99, NULL);
    for (int t = 0; t < 20000; t++) {
        for (int i = 0; i < 100; i++) b[i] = (int64_t)cr_rng_below(&r, 1000000);
        cr_sketch_add_keys(flat, b, 100);
    }
    CR_CHECK(cr_sketch_heavy(flat, 2000, h, 64) == 0);
    cr_sketch *few = cr_sketch_new(1000000, 4096, 4, 64, 99, NULL);
    for (int64_t k = 0; k < 3000; k++) cr_sketch_add_keys(few, (int64_t[]){k * 331}, 1);
    printf("  3000 distinct keys estimated as %lld\n", (long long)cr_sketch_distinct(few));
    CR_CHECK(cr_sketch_distinct(few) <= 3000 && cr_sketch_distinct(few) >= 2000);
    cr_sketch_destroy(&few);
    cr_sketch_destroy(&sk);
    cr_sketch_destroy(&flat);
}

static void test_bounded_memory(void) {
    /* Memory is fixed at creation: 1,000,000 distinct keys change nothing. */
    cr_sketch *sk = cr_sketch_new(1 << 24, 4096, 4, 256, 1, NULL);
    size_t b0 = cr_sketch_bytes(sk);
    CR_CHECK(b0 < 4096 * 4 * 4 + 256 * 20 + 512 * 4 + 1024);
    int64_t b[1000];
    for (int64_t t = 0; t < 1000; t++) {
        for (int i = 0; i < 1000; i++) b[i] = t * 1000 + i;
        cr_sketch_add_keys(sk, b, 1000);
    }
    CR_CHECK(cr_sketch_bytes(sk) == b0 && cr_sketch_total(sk) == 1000000);
    CR_CHECK(cr_sketch_wire_size(sk) < 70000);
    cr_sketch_destroy(&sk);
}

static void test_wire(void) {
    zipf z = zipf_new(K, 1.0);
    cr_rng r;
    cr_rng_seed(&r, 2);
    uint32_t *ex = calloc(K, sizeof *ex);
    cr_sketch *sk = cr_sketch_new(K, 2048, 4, 128, 6, NULL);
    feed(sk, ex, &z, &r, 100000);
    size_t cap = cr_sketch_wire_size(sk);
    char *buf = malloc(cap);
    size_t n = cr_sketch_write(sk, buf, cap);
    CR_CHECK(n > 0 && n <= cap && cr_sketch_write(sk, buf, 100) == 0);
    cr_err e;
    cr_sketch *back = cr_sketch_read(buf, n, &e);
    CR_CHECK(back != NULL);
    CR_CHECK(cr_sketch_total(back) == cr_sketch_total(sk));
    for (int64_t k = 0; k < K; k += 7) CR_CHECK(cr_sketch_estimate(back, k) == cr_sketch_estimate(sk, k));
    cr_sketch_hit h1[32], h2[32];
    int a = cr_sketch_heavy(sk, 1000, h1, 32), b = cr_sketch_heavy(back, 1000, h2, 32);
    CR_CHECK(a == b && a > 0);
    for (int i = 0; i < a; i++) CR_CHECK(h1[i].key == h2[i].key && h1[i].count == h2[i].count);
    CR_CHECK(cr_sketch_read(buf, n - 1, &e) == NULL && strstr(e.msg, "expected"));
    CR_CHECK(cr_sketch_read(buf, 10, &e) == NULL && strstr(e.msg, "shorter than a header"));
    buf[0] ^= 1;
    CR_CHECK(cr_sketch_read(buf, n, &e) == NULL && strstr(e.msg, "not a sketch"));
    buf[0] ^= 1;
    int64_t badkey = -5;
    memcpy(buf + n - sizeof badkey, &badkey, sizeof badkey);
    CR_CHECK(cr_sketch_read(buf, n, &e) == NULL && strstr(e.msg, "out of range"));
    CR_CHECK(cr_sketch_new(10, 1000, 4, 1, 1, &e) == NULL && strstr(e.msg, "power of two"));
    CR_CHECK(cr_sketch_new(10, 1024, 9, 1, 1, &e) == NULL && strstr(e.msg, "depth 9"));
    cr_sketch_destroy(&sk);
    cr_sketch_destroy(&back);
    free(buf);
    free(ex);
    free(z.cdf);
}

/* A reader merging the writer's sketch while it counts: every snapshot is
 * a sketch of a prefix (total and estimates never go down, never above the
 * final ones); the last one after join is the whole stream. */
typedef struct wr {
    cr_sketch *sk;
    atomic_int done;
} wr;

static void *writer(void *arg) {
    wr *w = arg;
    int64_t b[64];
    cr_rng r;
    cr_rng_seed(&r, 12);
    for (int t = 0; t < 20000; t++) {
        for (int i = 0; i < 64; i++) b[i] = (int64_t)cr_rng_below(&r, 50) * 997;
        cr_sketch_add_keys(w->sk, b, 64);
    }
    atomic_store(&w->done, 1);
    return NULL;
}

static void test_reader_beside_writer(void) {
    wr w = {cr_sketch_new(K, 1024, 4, 32, 7, NULL), 0};
    pthread_t t;
    CR_CHECK(pthread_create(&t, NULL, writer, &w) == 0);
    uint64_t last = 0;
    int snaps = 0, ok = 1;
    while (!atomic_load(&w.done) || snaps == 0) {
        cr_sketch *c = cr_sketch_clone(w.sk);
        uint64_t tot = cr_sketch_total(c);
        ok &= tot >= last && tot <= 20000 * 64;
        last = tot;
        snaps++;
        cr_sketch_destroy(&c);
    }
    pthread_join(t, NULL);
    CR_CHECK(ok);
    cr_sketch_hit h[64];
    int n = cr_sketch_heavy(w.sk, 10000, h, 64);
    CR_CHECK(n == 32); /* 50 keys of ~25,600 each; 32 candidates kept */
    CR_CHECK(cr_sketch_total(w.sk) == 20000 * 64);
    printf("  %d snapshots while the writer ran\n", snaps);
    cr_sketch_destroy(&w.sk);
}

int main(void) {
    CR_RUN(test_error_bound);
    CR_RUN(test_exact_mode);
    CR_RUN(test_merge_is_sum);
    CR_RUN(test_topk_zipf);
    CR_RUN(test_planted);
    CR_RUN(test_bounded_memory);
    CR_RUN(test_wire);
    CR_RUN(test_reader_beside_writer);
    return cr_test_done();
}
