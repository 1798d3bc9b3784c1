/* LDA sampler speed in one thread (tests/bench/lda_kernel.sh): sweeps over
 * a LIBSVM corpus in chunks, each chunk sampled against its rows of the
 * global counts (the snapshot) with its deltas applied before the next
 * chunk, as a worker does with the parameter server in between.
 *   lda_kernel PATH V K SAMPLER SWEEPS [PARTS [TOKENS_PER_CHUNK]]
 * Prints per sweep the CPU time inside cr_lda_sample (the kernel: table
 * builds included) and the log-likelihood per token, then one line
 *   "lda_kernel K=.. sampler=.. tokens=.. tokens_per_s=.. ns_per_token=.."
 * with the median over sweeps 2.. (the first sweep starts from random
 * topics, where the MH sampler accepts more moves than later).
 * alpha 0.1 and beta 0.01, the example's defaults (LDA_ALPHA overrides
 * alpha: it sets how many document proposals are uniform, K alpha /
 * (L + K alpha), which is most of what grows with K). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "base/cr_alloc.h"
#include "kernels/cr_lda.h"

/* This thread's CPU time: the machine is shared, and a sweep's wall time
 * would count the time other processes hold the core. */
static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Pulled rows and deltas, kept across chunks (as a worker keeps its
 * matrices) so that page faults of fresh buffers are not timed. */
static int32_t *snap, *dw, *dk, *snk;

/* One sweep; returns seconds inside cr_lda_sample. */
static double sweep(cr_lda_corpus *c, int32_t *nwk, int32_t *nk, const cr_lda_sample_opts *o, int64_t *changed) {
    int K = c->K;
    double t = 0;
    for (int64_t ch = 0; ch < c->nchunks; ch++) {
        int64_t n = cr_lda_chunk_nkeys(c, ch);
        const int64_t *keys = c->key + c->key_off[ch];
        for (int64_t r = 0; r < n; r++) memcpy(snap + r * K, nwk + keys[r] * K, (size_t)K * 4);
        memcpy(snk, nk, (size_t)K * 4);
        cr_lda_sample_stats st;
        cr_err e;
        double t0 = cpu_now();
        if (cr_lda_sample(c, ch, snap, snk, dw, dk, o, &st, &e)) {
            fprintf(stderr, "lda_kernel: %s\n", e.msg);
            exit(1);
        }
        t += cpu_now() - t0;
        *changed += st.changed;
        for (int64_t r = 0; r < n; r++)
            for (int k = 0; k < K; k++) nwk[keys[r] * K + k] += dw[r * K + k];
        for (int k = 0; k < K; k++) nk[k] += dk[k];
    }
    return t;
}

static double loglik(const cr_lda_corpus *c, const int32_t *nwk, const int32_t *nk, double alpha, double beta) {
    int K = c->K;
    double w = cr_lda_word_loglik(nwk, c->V * K, beta) + K * lgamma(c->V * beta);
    for (int k = 0; k < K; k++) w -= lgamma(nk[k] + c->V * beta);
    return (w + cr_lda_doc_loglik(c, alpha)) / (double)c->ntokens;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: lda_kernel PATH V K mh|plain SWEEPS [PARTS [TOKENS_PER_CHUNK]]\n");
        return 2;
    }
    int K = atoi(argv[3]), sweeps = atoi(argv[5]), mh = strcmp(argv[4], "mh") == 0;
    int64_t parts = argc > 6 ? atoll(argv[6]) : 1, tpc = argc > 7 ? atoll(argv[7]) : 250000;
    cr_lda_load_opts lo = {CR_LDA_LIBSVM, NULL, atoll(argv[2]), 0, parts, 0, 0};
    cr_err e;
    cr_lda_corpus *c = cr_lda_corpus_load(argv[1], &lo, &e);
    if (!c || cr_lda_corpus_init(c, K, 1, &e) || cr_lda_corpus_chunks(c, tpc, &e)) {
        fprintf(stderr, "lda_kernel: %s\n", e.msg);
        return 1;
    }
    int32_t *nwk = cr_xmalloc((size_t)(c->V * K) * 4), *nk = cr_xcalloc((size_t)K, 4);
    cr_lda_word_topic_counts(c, 0, c->V, nwk);
    for (int64_t i = 0; i < c->V * K; i++) nk[i % K] += nwk[i];
    double alpha = getenv("LDA_ALPHA") ? atof(getenv("LDA_ALPHA")) : 0.1; /* examples/lda.lua's default */
    cr_lda_sample_opts o = {mh ? CR_LDA_MH : CR_LDA_PLAIN, alpha, 0.01, 2, 0, 0, getenv("LDA_SLICE_ROWS") ? atoll(getenv("LDA_SLICE_ROWS")) : 0};
    double *tps = cr_xmalloc((size_t)sweeps * sizeof *tps);
    int64_t most = 1;
    for (int64_t ch = 0; ch < c->nchunks; ch++)
        if (cr_lda_chunk_nkeys(c, ch) > most) most = cr_lda_chunk_nkeys(c, ch);
    snap = cr_xcalloc((size_t)(most * K), 4);
    dw = cr_xcalloc((size_t)(most * K), 4);
    dk = cr_xcalloc((size_t)K, 4);
    snk = cr_xcalloc((size_t)K, 4);
    for (int s = 0; s < sweeps; s++) {
        int64_t changed = 0;
        o.seed = (uint64_t)s;
        double t = sweep(c, nwk, nk, &o, &changed);
        tps[s] = (double)c->ntokens / t;
        printf("sweep %d: %.3f s in the kernel, %.0f tokens/s, %.1f%% changed, loglik/token %.4f\n", s + 1, t, tps[s],
               100.0 * (double)changed / (double)c->ntokens, loglik(c, nwk, nk, o.alpha, o.beta));
        fflush(stdout);
    }
    int from = sweeps > 1 ? 1 : 0;
    qsort(tps + from, (size_t)(sweeps - from), sizeof *tps, cmp_d);
    double med = tps[from + (sweeps - from) / 2];
    printf("lda_kernel K=%d sampler=%s tokens=%lld chunks=%lld tokens_per_s=%.0f ns_per_token=%.1f\n", K, argv[4],
           (long long)c->ntokens, (long long)c->nchunks, med, 1e9 / med);
    free(tps);
    free(snap);
    free(dw);
    free(dk);
    free(snk);
    free(nwk);
    free(nk);
    cr_lda_corpus_destroy(&c);
    return 0;
}
