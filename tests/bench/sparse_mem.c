/* Memory and speed of a sparse table's shard (keys = "sparse", ps/cr_fmap.h)
 * against a dense one of the same rows: 1,000,000 hashed keys pushed once
 * (stored), then pulls of batches of 4096 of them through cr_shard_pull, for
 * dim 1 with adagrad (the logistic-regression shape: 4 bytes of value, 4 of
 * state) and dim 16 with sgd. Prints bytes per stored row against the row's
 * own bytes, and the median ns per pulled row, sparse and dense (11 samples). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_time.h"
#include "ps/cr_table.h"

#include "stat_util.h"

#define KEYS 1000000
#define BATCH 4096
#define SAMPLES 11

static cr_shard *shard(int sparse, int dim, int kind) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "T");
    d.keys = sparse ? 0 : KEYS;
    d.sparse = sparse;
    d.placement = sparse ? CR_PLACE_HASH : CR_PLACE_RANGE;
    d.dim = dim;
    d.optim = (cr_optim){.kind = kind, .lr = 0.1f, .eps = 1e-6f};
    cr_err e;
    cr_shard *s = cr_shard_new(&d, 0, 1, &e);
    if (!s) fprintf(stderr, "%s\n", e.msg), exit(1);
    return s;
}

static double pull_ns(cr_shard *s, const int64_t *keys, float *out) {
    double t[SAMPLES];
    for (int r = 0; r < SAMPLES; r++) {
        double t0 = cr_now();
        for (int64_t b = 0; b + BATCH <= KEYS; b += BATCH) cr_shard_pull(s, keys + b, BATCH, out);
        t[r] = (cr_now() - t0) * 1e9 / (double)(KEYS / BATCH * BATCH);
    }
    return st_median(t, SAMPLES);
}

static void one(int dim, int kind, const char *what) {
    int64_t *hk = malloc(KEYS * sizeof *hk), *dk = malloc(KEYS * sizeof *dk);
    float *g = calloc((size_t)BATCH * (size_t)dim, sizeof *g), *out = malloc((size_t)BATCH * (size_t)dim * sizeof *out);
    for (int64_t i = 0; i < KEYS; i++) {
        hk[i] = (int64_t)((uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL); /* hashed feature ids */
        dk[i] = (int64_t)(((uint64_t)i * 7919) % KEYS);                /* the same order, dense */
    }
    cr_shard *sp = shard(1, dim, kind), *de = shard(0, dim, kind);
    for (int64_t b = 0; b < KEYS; b += BATCH) cr_shard_push(sp, hk + b, KEYS - b < BATCH ? KEYS - b : BATCH, g);
    double row = (double)(dim + sp->sdim) * 4, per = (double)cr_shard_sparse_bytes(sp) / (double)KEYS;
    printf("%s: %lld rows stored, %.1f bytes a row (the row itself: %.0f bytes values + state, +8 its key; "
           "overhead %.1f)\n", what, (long long)atomic_load(&sp->sp_rows), per, row, per - row);
    double ns = pull_ns(sp, hk, out), nd = pull_ns(de, dk, out);
    printf("%s: pull %.1f ns a row sparse, %.1f dense (%.2fx)\n", what, ns, nd, ns / nd);
    cr_shard_destroy(&sp);
    cr_shard_destroy(&de);
    free(hk), free(dk), free(g), free(out);
}

int main(void) {
    one(1, CR_OPTIM_ADAGRAD, "dim 1 adagrad");
    one(16, CR_OPTIM_SGD, "dim 16 sgd");
    return 0;
}
