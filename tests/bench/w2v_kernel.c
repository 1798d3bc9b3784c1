/* The word2vec kernels alone (no parameter server, no corpus reading): one
 * call of cr_w2v_sgns and of cr_w2v_cbow over 1M uniform tokens of a 10,000
 * word vocabulary, d = 100, window 5, negative 5 from a pre-drawn pool, the
 * sigmoid table, no loss. Prints "sgns: N words/s" and "cbow: N words/s": the
 * ceiling lua/models/word2vec.lua can reach per worker (tokens are not
 * subsampled here, so the peers' words/s on real text are not comparable one
 * to one). usage: w2v_kernel */
#include <stdio.h>
#include <stdlib.h>
#include "base/cr_rng.h"
#include "base/cr_time.h"
#include "kernels/cr_w2v.h"
int main(void) {
    enum { V = 10000, D = 100, N = 1000000, P = 1 << 20 };
    float *a = malloc(sizeof(float) * V * D), *c = malloc(sizeof(float) * V * D);
    int32_t *t = malloc(sizeof(int32_t) * N), *pool = malloc(sizeof(int32_t) * P);
    cr_mat A = {V, D, a}, C = {V, D, c};
    cr_rng r; cr_rng_seed(&r, 1);
    cr_w2v_init(&A, &C, &r);
    for (int i = 0; i < N; i++) t[i] = (int32_t)cr_rng_below(&r, V);
    for (int i = 0; i < P; i++) pool[i] = (int32_t)cr_rng_below(&r, V);
    for (int m = 0; m < 2; m++) {
        cr_w2v_batch b = {N, t, t, NULL, 0};
        cr_w2v_negs ng = {5, pool, P, 0, 0, NULL, NULL, 0};
        cr_w2v_params p = {5, 0.025f, 0, 0};
        cr_w2v_stats st = {0, 0};
        double t0 = cr_now();
        (m ? cr_w2v_cbow : cr_w2v_sgns)(&b, &p, &ng, &r, &A, &C, &st);
        printf("%s: %.0f words/s (%lld pairs)\n", m ? "cbow" : "sgns", N / (cr_now() - t0), (long long)st.pairs);
    }
    free(a);
    free(c);
    free(t);
    free(pool);
    return 0;
}
