/* What an i32 table's push costs against an f32 table's (dtype = "i32",
 * ps/cr_table.h): one shard of 200,000 keys x dim 64, pushes of batches of
 * 256 and 8192 uniform keys through cr_shard_push (the path every local or
 * served push takes), the rule add on f32 and on i32 and sgd on f32,
 * samples of 400,000 rows alternating, 21 samples each. Prints the median
 * ns per row and the ratio i32 add / f32 add per batch size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_time.h"
#include "ps/cr_table.h"

#include "stat_util.h"

#define KEYS 200000
#define DIM 64
#define ROWS 400000
#define SAMPLES 21

enum { F32_ADD, I32_ADD, F32_SGD, NCASE };
static const char *names[NCASE] = {"f32 add", "i32 add", "f32 sgd"};

static cr_shard *shard(int c) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "T");
    d.keys = KEYS;
    d.dim = DIM;
    d.dtype = c == I32_ADD ? CR_DTYPE_I32 : CR_DTYPE_F32;
    d.optim = (cr_optim){.kind = c == F32_SGD ? CR_OPTIM_SGD : CR_OPTIM_ADD, .lr = 0.01f};
    cr_err e;
    cr_shard *s = cr_shard_new(&d, 0, 1, &e);
    if (!s) {
        fprintf(stderr, "table_dtype: %s\n", e.msg);
        exit(1);
    }
    return s;
}

/* ns per row of ROWS rows pushed in batches of n. */
static double sample(cr_shard *s, int n, int64_t *keys, const float *g, uint64_t *x) {
    double t0 = cr_now();
    for (int64_t rows = 0; rows < ROWS; rows += n) {
        for (int i = 0; i < n; i++) {
            *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
            keys[i] = (int64_t)((*x >> 33) % KEYS);
        }
        cr_shard_push(s, keys, n, g);
    }
    return (cr_now() - t0) / ROWS * 1e9;
}

int main(void) {
    int sizes[2] = {256, 8192};
    int64_t *keys = malloc(8192 * sizeof *keys);
    float *g = calloc((size_t)8192 * DIM, sizeof *g); /* zeros: the same bits for either type */
    cr_shard *s[NCASE];
    for (int c = 0; c < NCASE; c++) s[c] = shard(c);
    uint64_t x = 7;
    for (int b = 0; b < 2; b++) {
        double t[NCASE][SAMPLES], med[NCASE];
        for (int i = 0; i < SAMPLES; i++)
            for (int c = 0; c < NCASE; c++) t[c][i] = sample(s[c], sizes[b], keys, g, &x);
        for (int c = 0; c < NCASE; c++) {
            med[c] = st_median(t[c], SAMPLES);
            printf("batch %d: %s %.1f ns/row\n", sizes[b], names[c], med[c]);
        }
        printf("batch %d: i32 add / f32 add %.2fx\n", sizes[b], med[I32_ADD] / med[F32_ADD]);
    }
    for (int c = 0; c < NCASE; c++) cr_shard_destroy(&s[c]);
    free(keys);
    free(g);
    return 0;
}
