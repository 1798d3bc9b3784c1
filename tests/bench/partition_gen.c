/* Synthetic bipartite graphs for the partition benchmarks, as LIBSVM text on
 * stdout (label 1, value 1):
 *   partition_gen zipf NU NV NE SEED [TOPICS]   rcv1-like: example lengths
 *       around NE/NU (exponential spread), features drawn with zipf(1)
 *       popularity; with TOPICS > 0 every example has a random topic t and
 *       half of its features come from t's own zipf ranking (rank r ->
 *       feature r*TOPICS + t), so the graph has the clusters real text has
 *   partition_gen uniform NU NV NU_SPARSITY SEED   paper 000's synthetic
 *       sets: every cell is an edge with probability 1 - sparsity */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_rng.h"

static int cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void emit(uint32_t *f, uint32_t n) {
    qsort(f, n, sizeof *f, cmp);
    fputs("1", stdout);
    for (uint32_t j = 0; j < n; j++)
        if (j == 0 || f[j] != f[j - 1]) printf(" %u:1", f[j] + 1);
    putchar('\n');
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: partition_gen zipf NU NV NE SEED [TOPICS] | uniform NU NV SPARSITY SEED\n");
        return 2;
    }
    uint32_t nu = (uint32_t)strtoul(argv[2], NULL, 10), nv = (uint32_t)strtoul(argv[3], NULL, 10);
    cr_rng r;
    cr_rng_seed(&r, strtoull(argv[5], NULL, 10));
    uint32_t *f = malloc(((size_t)nv + 1) * sizeof *f);
    if (!strcmp(argv[1], "zipf")) {
        double mean = strtod(argv[4], NULL) / nu;
        double *cdf = malloc((size_t)nv * sizeof *cdf), s = 0;
        for (uint32_t j = 0; j < nv; j++) cdf[j] = (s += 1.0 / (j + 1));
        /* a random permutation so that popular features are not the low ids */
        uint32_t *perm = malloc((size_t)nv * sizeof *perm);
        for (uint32_t j = 0; j < nv; j++) perm[j] = j;
        cr_rng_shuffle_u32(&r, perm, nv);
        uint32_t topics = argc == 7 ? (uint32_t)strtoul(argv[6], NULL, 10) : 0;
        for (uint32_t u = 0; u < nu; u++) {
            uint32_t topic = topics ? (uint32_t)cr_rng_below(&r, topics) : 0;
            double x = -log(1 - cr_rng_uniform(&r)) * mean; /* exponential lengths */
            uint32_t len = 1 + (uint32_t)x;
            if (len > nv) len = nv;
            for (uint32_t j = 0; j < len; j++) {
                double t = cr_rng_uniform(&r) * s;
                uint32_t lo = 0, hi = nv - 1;
                while (lo < hi) {
                    uint32_t mid = (lo + hi) / 2;
                    if (cdf[mid] < t) lo = mid + 1;
                    else hi = mid;
                }
                int local = topics && cr_rng_uniform(&r) < 0.5;
                f[j] = perm[local ? ((uint64_t)lo * topics + topic) % nv : lo];
            }
            emit(f, len);
        }
        free(cdf), free(perm);
    } else if (!strcmp(argv[1], "uniform")) {
        double p = 1 - strtod(argv[4], NULL);
        for (uint32_t u = 0; u < nu; u++) {
            uint32_t n = 0;
            for (double j = -1;;) { /* geometric skips over the row */
                j += 1 + floor(log(1 - cr_rng_uniform(&r)) / log(1 - p));
                if (j >= nv) break;
                f[n++] = (uint32_t)j;
            }
            emit(f, n);
        }
    } else {
        fprintf(stderr, "partition_gen: unknown kind '%s'\n", argv[1]);
        return 2;
    }
    free(f);
    return 0;
}
