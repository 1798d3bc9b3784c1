/* Shards under concurrent batches (src/ps/cr_table.c): worker threads pull
 * and push large batches into one shard at once. Every update is applied
 * exactly once, and a large update with optimizer state (adagrad) holds one
 * stripe lock at a time: a stripe held elsewhere neither stops such a batch
 * when it does not touch it nor keeps it from updating its other stripes
 * meanwhile. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/cr_time.h"
#include "cr_test.h"
#include "ps/cr_table.h"

#define KEYS 3000
#define DIM 4

static cr_shard *new_shard(cr_optim_kind kind) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "E");
    d.keys = KEYS;
    d.dim = DIM;
    d.init = CR_INIT_ZEROS;
    d.optim = (cr_optim){.kind = kind, .lr = 1.0f};
    cr_err e;
    return cr_shard_new(&d, 0, 1, &e);
}

typedef struct job {
    cr_shard *s;
    int64_t n, *keys;
    float *g, *out;
    int rounds, pull; /* pull: each round pulls the keys back too */
    atomic_int done;
} job;

/* n keys i*stride % KEYS (repeats when n > KEYS), updates of 1. */
static void job_init(job *j, cr_shard *s, int64_t n, int64_t stride, int rounds) {
    j->s = s;
    j->n = n;
    j->rounds = rounds;
    j->pull = 0;
    j->keys = malloc((size_t)n * sizeof *j->keys);
    j->g = malloc((size_t)n * DIM * sizeof *j->g);
    j->out = malloc((size_t)n * DIM * sizeof *j->out);
    for (int64_t i = 0; i < n; i++) j->keys[i] = (i * stride) % KEYS;
    for (int64_t i = 0; i < n * DIM; i++) j->g[i] = 1.0f;
    atomic_store(&j->done, 0);
}

static void job_free(job *j) {
    free(j->keys);
    free(j->g);
    free(j->out);
}

static void *pusher(void *arg) {
    job *j = arg;
    for (int r = 0; r < j->rounds; r++) {
        cr_shard_push(j->s, j->keys, j->n, j->g);
        if (j->pull) cr_shard_pull(j->s, j->keys, j->n, j->out);
    }
    atomic_store(&j->done, 1);
    return NULL;
}

/* Up to 5 s for j to finish: 1 if it did. */
static int finishes(job *j) {
    double t0 = cr_now();
    while (!atomic_load(&j->done) && cr_now() - t0 < 5) usleep(1000);
    return atomic_load(&j->done);
}

/* Two threads push and pull batches of 10,000 and of 700 keys (both with
 * repeats: with the `add` rule the first takes every stripe, the second goes
 * stripe by stripe) for 30 rounds each: every row ends with exactly the sum
 * of its updates. */
static void test_concurrent_sums(void) {
    cr_shard *s = new_shard(CR_OPTIM_ADD);
    CR_CHECK(s != NULL);
    job a, b;
    job_init(&a, s, 10000, 7, 30);
    job_init(&b, s, 700, 13, 30);
    a.pull = b.pull = 1;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, pusher, &a);
    pthread_create(&tb, NULL, pusher, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    float *want = calloc(KEYS, sizeof *want), row[DIM];
    for (int64_t i = 0; i < a.n; i++) want[a.keys[i]] += (float)a.rounds;
    for (int64_t i = 0; i < b.n; i++) want[b.keys[i]] += (float)b.rounds;
    int bad = 0;
    for (int64_t k = 0; k < KEYS; k++) {
        cr_shard_pull(s, &k, 1, row);
        for (int c = 0; c < DIM; c++) bad |= row[c] != want[k];
    }
    free(want);
    job_free(&a);
    job_free(&b);
    cr_shard_destroy(&s);
    CR_CHECK(!bad);
}

static int count(const job *j, int64_t k) {
    int c = 0;
    for (int64_t i = 0; i < j->n; i++) c += j->keys[i] == k;
    return c;
}

/* Value of a row (zeros, state 0) after u updates of 1 with s's rule. */
static float after(const cr_shard *s, int u) {
    float w[DIM] = {0}, st[DIM] = {0}, g[DIM] = {1, 1, 1, 1};
    for (int i = 0; i < u; i++) cr_optim_apply(&s->def.optim, w, st, g, DIM);
    return w[0];
}

/* While this thread holds stripe 5: a 5,000-key adagrad push avoiding
 * stripe 5 completes; one touching it waits, but has updated its rows of
 * the other stripes meanwhile, and completes once the stripe is free. */
static void test_held_stripe(void) {
    cr_shard *s = new_shard(CR_OPTIM_ADAGRAD);
    CR_CHECK(s != NULL);
    job a, b;
    job_init(&a, s, 5000, 1, 1);
    for (int64_t i = 0, k = 0; i < a.n; i++, k = (k + 1) % KEYS) { /* every key but stripe 5's, cycling */
        if (k % CR_SHARD_STRIPES == 5) k++;
        a.keys[i] = k;
    }
    job_init(&b, s, 5000, 1, 1); /* keys 0..2999, 0..1999 */
    int64_t k1 = 1, k5 = 5;      /* b's keys of stripes 1 and 5 */
    int n1 = count(&a, 1) + count(&b, 1), n5 = count(&b, 5);
    float want1 = after(s, n1), want5 = after(s, n5), r1[DIM] = {0}, r5[DIM], after5[DIM];
    pthread_mutex_lock(&s->locks[5]);
    pthread_t ta, tb;
    pthread_create(&ta, NULL, pusher, &a);
    int a_done = finishes(&a);
    pthread_create(&tb, NULL, pusher, &b);
    double t0 = cr_now();
    while (r1[0] != want1 && cr_now() - t0 < 5) { /* b's update of key 1 lands (never wait on its lock) */
        usleep(1000);
        if (pthread_mutex_trylock(&s->locks[1]) != 0) continue;
        memcpy(r1, s->w + k1 * DIM, sizeof r1);
        pthread_mutex_unlock(&s->locks[1]);
    }
    int b_early = atomic_load(&b.done);
    memcpy(r5, s->w + 5 * DIM, sizeof r5); /* we hold its lock */
    pthread_mutex_unlock(&s->locks[5]);
    int b_done = finishes(&b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    cr_shard_pull(s, &k5, 1, after5);
    job_free(&a);
    job_free(&b);
    cr_shard_destroy(&s);
    CR_CHECK(n1 == 4 && n5 == 2 && want1 != want5);
    CR_CHECK(a_done);
    CR_CHECK(r1[0] == want1);
    CR_CHECK(!b_early && r5[0] == 0.0f);
    CR_CHECK(b_done && after5[0] == want5);
}

int main(void) {
    CR_RUN(test_concurrent_sums);
    CR_RUN(test_held_stripe);
    return cr_test_done();
}
