/* Machine reference for tests/bench/mf.sh: the MF kernel alone (no parameter
 * server, no Lua) on 1 thread over all cells, then on 2 threads over half
 * the columns each (own copies of W and H). Their ratio is the best speedup
 * 2 workers can show on this machine right now; on a shared or busy host it
 * is well below 2, and the bench prints it next to the --workers 2 result.
 * usage: mf_threads TRAIN.mmc [epochs]  -> "threads1=N threads2=N" (cells/s) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"
#include "kernels/cr_mfcells.h"

typedef struct {
    cr_mfcells *c;
    float *W, *H;
    int epochs;
    int64_t n;
} job;

static void *run(void *p) {
    job *j = p;
    for (int ep = 0; ep < j->epochs; ep++) {
        cr_mfcells_shuffle(j->c, (uint64_t)ep);
        int64_t pos = 0;
        cr_mfcells_batch b;
        while (cr_mfcells_next(j->c, &pos, &b)) {
            cr_mat Wm = {b.nw, 16, j->W}, Hm = {b.nh, 16, j->H};
            cr_mf_stats st = {0, 0, 0};
            for (int64_t k = 0; k < b.nh; k++) {
                cr_mf_batch col = cr_mfcells_column(j->c, &b, k);
                cr_mf_sgd(&col, &Wm, &Hm, 0.01f, 0.02f, &st);
            }
            j->n += b.n;
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: mf_threads TRAIN.mmc [epochs]\n");
        return 2;
    }
    int epochs = argc > 2 ? atoi(argv[2]) : 10;
    double rate[3] = {0, 0, 0};
    for (int T = 1; T <= 2; T++) {
        job js[2];
        pthread_t th[2];
        for (int t = 0; t < T; t++) {
            cr_err e;
            js[t].c = cr_mfcells_load(argv[1], &(cr_mfcells_opts){0, -1, t, T, 100000, 1, 0, 0}, &e);
            if (!js[t].c) {
                fprintf(stderr, "mf_threads: %s\n", e.msg);
                return 1;
            }
            const cr_mf_shape *s = cr_mfcells_header(js[t].c);
            js[t].W = cr_xcalloc((size_t)s->rows * 16, sizeof(float));
            js[t].H = cr_xcalloc((size_t)s->cols * 16, sizeof(float));
            js[t].epochs = epochs;
            js[t].n = 0;
        }
        double t0 = cr_now();
        for (int t = 0; t < T; t++) pthread_create(&th[t], NULL, run, &js[t]);
        int64_t n = 0;
        for (int t = 0; t < T; t++) {
            pthread_join(th[t], NULL);
            n += js[t].n;
        }
        rate[T] = (double)n / (cr_now() - t0);
        for (int t = 0; t < T; t++) {
            cr_mfcells_destroy(&js[t].c);
            free(js[t].W);
            free(js[t].H);
        }
    }
    printf("threads1=%.0f threads2=%.0f\n", rate[1], rate[2]);
    return 0;
}
