/* Cost per key of counting accesses (src/ps/cr_sketch.h), on the worker's
 * access path: batches of 100 keys, each mode timed over the same
 * pre-drawn streams, alternating, median of 31 rounds per mode:
 *
 *   exact     a 10,000-key table (one counter per key)
 *   cm-zipf   1,000,000 keys, width 4096, depth 4, 1024 candidates, Zipf 1.0
 *             (hot keys pass the heap's least often: the candidate path)
 *   cm-unif   the same sketch, uniform keys (the plain sketch path)
 *   shared    the alternative design: ONE sketch for 2 workers, counters
 *             bumped with atomic fetch_add by 2 threads at once (no
 *             candidates, so a lower bound of that design's cost)
 *   row-copy  the least a local pull does per key: copy a 64-float row
 *
 * Last line: ns per key of each, and cm-zipf / row-copy. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_rng.h"
#include "base/cr_time.h"
#include "ps/cr_sketch.h"

#define NK 1000000
#define LEN 1000000 /* keys per stream */
#define ROUNDS 31
#define DIM 64

static int64_t *zipf_stream(int64_t k, double s, uint64_t seed) {
    double *cdf = malloc((size_t)k * sizeof *cdf), acc = 0;
    for (int64_t i = 0; i < k; i++) cdf[i] = acc += pow((double)(i + 1), -s);
    int64_t *out = malloc(LEN * sizeof *out);
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (int64_t i = 0; i < LEN; i++) {
        double u = cr_rng_uniform(&r) * acc;
        int64_t lo = 0, hi = k - 1;
        while (lo < hi) {
            int64_t m = (lo + hi) / 2;
            if (cdf[m] < u) lo = m + 1;
            else hi = m;
        }
        out[i] = (int64_t)(((uint64_t)lo * 7919u) % (uint64_t)k);
    }
    free(cdf);
    return out;
}

static double time_sketch(cr_sketch *sk, const int64_t *keys) {
    double t0 = cr_now();
    for (int64_t i = 0; i < LEN; i += 100) cr_sketch_add_keys(sk, keys + i, 100);
    return (cr_now() - t0) * 1e9 / LEN;
}

/* ---- the shared, atomic alternative ---- */
typedef struct shared {
    _Atomic uint32_t *cnt;
    uint64_t mul[4];
    const int64_t *keys;
    pthread_barrier_t *go;
    double ns;
} shared;

static void *shared_worker(void *arg) {
    shared *s = arg;
    pthread_barrier_wait(s->go);
    double t0 = cr_now();
    for (int64_t i = 0; i < LEN; i++) {
        uint64_t k = (uint64_t)s->keys[i];
        for (int r = 0; r < 4; r++)
            atomic_fetch_add_explicit(&s->cnt[r * 4096 + ((k * s->mul[r]) >> 52)], 1, memory_order_relaxed);
    }
    s->ns = (cr_now() - t0) * 1e9 / LEN;
    return NULL;
}

static double time_shared(_Atomic uint32_t *cnt, const int64_t *a, const int64_t *b) {
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    shared s[2] = {{cnt, {0}, a, &go, 0}, {cnt, {0}, b, &go, 0}};
    for (int i = 0; i < 2; i++)
        for (int r = 0; r < 4; r++) s[i].mul[r] = cr_mix64((uint64_t)r + 1) | 1;
    pthread_t t;
    pthread_create(&t, NULL, shared_worker, &s[1]);
    shared_worker(&s[0]);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&go);
    return (s[0].ns + s[1].ns) / 2;
}

static double time_copy(const float *table, float *out, const int64_t *keys) {
    double t0 = cr_now();
    for (int64_t i = 0; i < LEN; i += 100)
        for (int j = 0; j < 100; j++) memcpy(out + j * DIM, table + (keys[i + j] % 100000) * DIM, DIM * sizeof(float));
    return (cr_now() - t0) * 1e9 / LEN;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MODES 5
static const char *names[MODES] = {"exact", "cm-zipf", "cm-unif", "shared", "row-copy"};

int main(void) {
    int64_t *zipf = zipf_stream(NK, 1.0, 1), *zipf2 = zipf_stream(NK, 1.0, 2);
    int64_t *unif = malloc(LEN * sizeof *unif), *small = malloc(LEN * sizeof *small);
    cr_rng r;
    cr_rng_seed(&r, 3);
    for (int64_t i = 0; i < LEN; i++) {
        unif[i] = (int64_t)cr_rng_below(&r, NK);
        small[i] = zipf[i] % 10000;
    }
    float *table = calloc((size_t)100000 * DIM, sizeof *table), *out = malloc(100 * DIM * sizeof *out);
    _Atomic uint32_t *cnt = calloc(4 * 4096, sizeof *cnt);
    double ns[MODES][ROUNDS];
    volatile float sink = 0;
    for (int round = 0; round < ROUNDS; round++) {
        cr_sketch *ex = cr_sketch_new(10000, 4096, 4, CR_SKETCH_DEFAULT_TOPK, 1, NULL);
        cr_sketch *cz = cr_sketch_new(NK, 4096, 4, CR_SKETCH_DEFAULT_TOPK, 1, NULL);
        cr_sketch *cu = cr_sketch_new(NK, 4096, 4, CR_SKETCH_DEFAULT_TOPK, 1, NULL);
        ns[0][round] = time_sketch(ex, small);
        ns[1][round] = time_sketch(cz, zipf);
        ns[2][round] = time_sketch(cu, unif);
        ns[3][round] = time_shared(cnt, zipf, zipf2);
        ns[4][round] = time_copy(table, out, zipf);
        sink += out[0] + (float)cr_sketch_total(cz);
        cr_sketch_destroy(&ex);
        cr_sketch_destroy(&cz);
        cr_sketch_destroy(&cu);
    }
    double med[MODES];
    for (int m = 0; m < MODES; m++) {
        qsort(ns[m], ROUNDS, sizeof(double), cmp);
        med[m] = ns[m][ROUNDS / 2];
        printf("%-9s %6.2f ns/key (min %.2f, max %.2f)\n", names[m], med[m], ns[m][0], ns[m][ROUNDS - 1]);
    }
    printf("sketch: exact %.2f, cm-zipf %.2f, cm-unif %.2f, shared-atomic %.2f, row-copy %.2f ns/key; "
           "cm-zipf/row-copy %.2fx, shared/cm-zipf %.2fx\n",
           med[0], med[1], med[2], med[3], med[4], med[1] / med[4], med[3] / med[1]);
    free(zipf);
    free(zipf2);
    free(unif);
    free(small);
    free(table);
    free(out);
    free((void *)cnt);
    return sink == -1.0f;
}
