/* Baseline for tests/bench/mf.sh: plain single-threaded SGD for matrix
 * factorization, in place on two dense arrays, no parameter server.
 *
 * Same data (MatrixMarket train/test), same loss and update as
 * lua/models/mf.lua (per-cell SGD with per-update L2), same walk (columns in
 * a random order per epoch, cells of a column together), same init
 * distribution and bold driver. Loading and the per-epoch shuffle are outside
 * the timed part; it prints training throughput as
 * "cells_per_s=N train_seconds=S cells=C test_rmse=R train_cpu_seconds=T".
 *
 * usage: sgd_baseline --train F [--test F] [--epochs 20] [--dim 16] [--lr 0.02]
 *        [--lambda 0.05] [--init 0.1] [--seed 1] [--quiet] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "base/cr_time.h"
#include "kernels/cr_mfcells.h"

typedef struct {
    int64_t n;
    int32_t *i, *j;
    float *x;
} coo;

/* All cells of path in the walk order of seed (columns shuffled): global ids. */
static int walk(cr_mfcells *c, uint64_t seed, coo *out) {
    cr_mfcells_shuffle(c, seed);
    int64_t pos = 0, at = 0;
    cr_mfcells_batch b;
    while (cr_mfcells_next(c, &pos, &b)) {
        cr_mf_batch cells = cr_mfcells_gather(c, &b);
        for (int64_t s = 0; s < cells.n; s++, at++) {
            out->i[at] = (int32_t)b.wkeys[cells.wi[s]];
            out->j[at] = (int32_t)b.hkeys[cells.hj[s]];
            out->x[at] = cells.x[s];
        }
    }
    out->n = at;
    return 0;
}

static double rmse(const coo *t, const float *W, const float *H, int d) {
    double sse = 0;
    for (int64_t c = 0; c < t->n; c++) {
        const float *w = W + (int64_t)t->i[c] * d, *h = H + (int64_t)t->j[c] * d;
        float p = 0;
        for (int k = 0; k < d; k++) p += w[k] * h[k];
        sse += (double)(t->x[c] - p) * (t->x[c] - p);
    }
    return t->n ? sqrt(sse / (double)t->n) : 0;
}

static coo coo_alloc(int64_t n) {
    coo c = {n, cr_xmalloc((size_t)(n + 1) * 4), cr_xmalloc((size_t)(n + 1) * 4), cr_xmalloc((size_t)(n + 1) * 4)};
    return c;
}

int main(int argc, char **argv) {
    const char *train = NULL, *test = NULL;
    int epochs = 20, d = 16, quiet = 0;
    double lr = 0.02, lambda = 0.05, init = 0.1;
    uint64_t seed = 1;
    for (int a = 1; a < argc; a++) {
        const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(k, "--quiet")) { quiet = 1; continue; }
        if (!v) { fprintf(stderr, "sgd_baseline: %s needs a value\n", k); return 2; }
        a++;
        if (!strcmp(k, "--train")) train = v;
        else if (!strcmp(k, "--test")) test = v;
        else if (!strcmp(k, "--epochs")) epochs = atoi(v);
        else if (!strcmp(k, "--dim")) d = atoi(v);
        else if (!strcmp(k, "--lr")) lr = atof(v);
        else if (!strcmp(k, "--lambda")) lambda = atof(v);
        else if (!strcmp(k, "--init")) init = atof(v);
        else if (!strcmp(k, "--seed")) seed = strtoull(v, NULL, 10);
        else { fprintf(stderr, "sgd_baseline: unknown option %s\n", k); return 2; }
    }
    if (!train || d < 1 || epochs < 1) {
        fprintf(stderr, "usage: sgd_baseline --train F [--test F] [--epochs N] [--dim D] ...\n");
        return 2;
    }
    cr_err e;
    cr_mfcells *tc = cr_mfcells_load(train, NULL, &e);
    if (!tc) { fprintf(stderr, "sgd_baseline: %s\n", e.msg); return 1; }
    const cr_mf_shape *h = cr_mfcells_header(tc);
    int64_t R = h->rows, C = h->cols;
    coo tr = coo_alloc(cr_mfcells_count(tc)), te = {0, NULL, NULL, NULL};
    if (test) {
        cr_mfcells *sc = cr_mfcells_load(test, NULL, &e);
        if (!sc) { fprintf(stderr, "sgd_baseline: %s\n", e.msg); return 1; }
        te = coo_alloc(cr_mfcells_count(sc));
        walk(sc, 0, &te);
        cr_mfcells_destroy(&sc);
    }
    float *W = cr_xmalloc((size_t)(R * d) * 4), *H = cr_xmalloc((size_t)(C * d) * 4);
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (int64_t k = 0; k < R * d; k++) W[k] = (float)(init * cr_rng_normal(&r));
    for (int64_t k = 0; k < C * d; k++) H[k] = (float)(init * cr_rng_normal(&r));
    double secs = 0, cpu = 0, prev = INFINITY;
    int64_t done = 0;
    float rate = (float)lr, lam = (float)lambda;
    for (int ep = 1; ep <= epochs; ep++) {
        walk(tc, seed * 1000003u + (uint64_t)ep, &tr);
        double t0 = cr_now(), loss = 0;
        clock_t c0 = clock();
        for (int64_t c = 0; c < tr.n; c++) {
            float *w = W + (int64_t)tr.i[c] * d, *hh = H + (int64_t)tr.j[c] * d;
            float p = 0, ww = 0, hn = 0;
            for (int k = 0; k < d; k++) p += w[k] * hh[k], ww += w[k] * w[k], hn += hh[k] * hh[k];
            float err = tr.x[c] - p;
            loss += (double)err * err + (double)lam * (ww + hn);
            for (int k = 0; k < d; k++) {
                float gw = -2.0f * err * hh[k] + 2.0f * lam * w[k];
                float gh = -2.0f * err * w[k] + 2.0f * lam * hh[k];
                w[k] -= rate * gw;
                hh[k] -= rate * gh;
            }
        }
        secs += cr_now() - t0;
        cpu += (double)(clock() - c0) / CLOCKS_PER_SEC;
        done += tr.n;
        if (!quiet)
            printf("epoch %d loss %.1f lr %.4g test_rmse %.4f\n", ep, loss, rate, test ? rmse(&te, W, H, d) : 0.0);
        rate *= loss < prev ? 1.05f : 0.5f; /* bold driver */
        prev = loss;
    }
    printf("cells_per_s=%.0f train_seconds=%.3f cells=%lld test_rmse=%.4f train_cpu_seconds=%.3f\n",
           (double)done / secs, secs, (long long)done, test ? rmse(&te, W, H, d) : 0.0, cpu);
    cr_mfcells_destroy(&tc);
    coo *all[] = {&tr, &te};
    for (int k = 0; k < 2; k++) free(all[k]->i), free(all[k]->j), free(all[k]->x);
    free(W);
    free(H);
    return 0;
}
