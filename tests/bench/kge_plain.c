/* Baseline for tests/bench/kge.sh: knowledge-graph embedding training as a
 * plain single-threaded C loop, no parameter server.
 *
 * The same maths as lua/models/kge.lua on the same data: the same batcher
 * (src/kernels/cr_kgebatch.h: seeded walk, batches of `batch` positives,
 * `neg` subject and `neg` object corruptions per positive, drawn uniformly,
 * each negative with a row of its own), the same kernel
 * (cr_kge_loss_grad_split: logistic loss + L2 per triple and row), and the
 * same AdaGrad rule applied row by row (cr_optim_apply, what a server does
 * for each pushed row), on arrays held in this process: per batch, gather the
 * rows the batch touches, run the kernel, apply the gradients. Loading is
 * outside the timed part; it prints
 *   "triples_per_s=N train_seconds=S positives=P train_cpu_seconds=T loss=L"
 * (positive training triples per second, as examples/kge.lua counts them).
 *
 * usage: kge_plain --data DIR [--model complex] [--dim 100] [--neg 10] [--lr 0.2]
 *        [--lambda 1e-6] [--init 0.1] [--batch 500] [--epochs 2] [--seed 1]
 * DIR holds entities.tsv, relations.tsv and train.del (data/wordnet-rr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "base/cr_time.h"
#include "data/cr_dict.h"
#include "data/cr_graph.h"
#include "kernels/cr_kge.h"
#include "kernels/cr_kgebatch.h"
#include "optim/cr_optim.h"

typedef struct {
    const char *data, *model;
    int64_t dim, neg, batch, epochs, seed;
    double lr, lambda, init;
} args;

typedef struct { /* one table: rows, adagrad state */
    cr_mat w;
    float *h;
} table;

static int parse(int argc, char **argv, args *a) {
    *a = (args){NULL, "complex", 100, 10, 500, 2, 1, 0.2, 1e-6, 0.1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--data")) a->data = v;
        else if (!strcmp(k, "--model")) a->model = v;
        else if (!strcmp(k, "--dim")) a->dim = atoll(v);
        else if (!strcmp(k, "--neg")) a->neg = atoll(v);
        else if (!strcmp(k, "--batch")) a->batch = atoll(v);
        else if (!strcmp(k, "--epochs")) a->epochs = atoll(v);
        else if (!strcmp(k, "--seed")) a->seed = atoll(v);
        else if (!strcmp(k, "--lr")) a->lr = atof(v);
        else if (!strcmp(k, "--lambda")) a->lambda = atof(v);
        else if (!strcmp(k, "--init")) a->init = atof(v);
        else return fprintf(stderr, "kge_plain: unknown option %s\n", k), -1;
    }
    if (!a->data || argc % 2 == 0) return fprintf(stderr, "usage: kge_plain --data DIR [--name value ...]\n"), -1;
    return 0;
}

static table table_new(int64_t rows, int64_t cols, double std, cr_rng *g) {
    table t = {{rows, cols, cr_xmalloc((size_t)(rows * cols) * sizeof(float))},
               cr_xcalloc((size_t)(rows * cols), sizeof(float))};
    for (int64_t i = 0; i < rows * cols; i++) t.w.data[i] = (float)(std * cr_rng_normal(g));
    return t;
}

static void gather(const table *t, const int64_t *keys, int64_t n, cr_mat *out) {
    out->rows = n;
    out->cols = t->w.cols;
    for (int64_t i = 0; i < n; i++) memcpy(cr_mat_row(out, i), cr_mat_row(&t->w, keys[i]), t->w.cols * sizeof(float));
}

static void apply(const cr_optim *o, table *t, const int64_t *keys, const cr_mat *g) {
    for (int64_t i = 0; i < g->rows; i++)
        cr_optim_apply(o, cr_mat_row(&t->w, keys[i]), t->h + keys[i] * t->w.cols, cr_mat_row(g, i),
                       (int32_t)t->w.cols);
}

static cr_mat buf(int64_t rows, int64_t cols) {
    return (cr_mat){rows, cols, cr_xmalloc((size_t)((rows ? rows : 1) * cols) * sizeof(float))};
}

static void zero(cr_mat *m, int64_t rows) {
    m->rows = rows;
    memset(m->data, 0, (size_t)(rows * m->cols) * sizeof(float));
}

/* One epoch over kb; returns the loss, adds positives to *npos. */
static double epoch(cr_kge_model m, cr_kgebatch *kb, const args *a, table *E, table *R, int64_t *npos) {
    int64_t B = a->batch, d = a->dim, dr = R->w.cols, mneg = 2 * a->neg * B;
    cr_mat Ep = buf(2 * B, d), En = buf(mneg, d), Rr = buf(B, dr), gEp = buf(2 * B, d), gEn = buf(mneg, d),
           gR = buf(B, dr);
    int64_t *negs = cr_xmalloc((size_t)(mneg + 1) * sizeof *negs);
    cr_optim o = {.kind = CR_OPTIM_ADAGRAD, .lr = (float)a->lr, .eps = 1e-8f, .init = 0};
    cr_kge_stats st = {0, 0, 0};
    cr_kgebatch_out b;
    cr_err e;
    for (;;) {
        int64_t need = cr_kgebatch_needs(kb);
        cr_kgebatch_uniform(kb, negs, need);
        if (cr_kgebatch_next(kb, negs, need, &b, &e) != 1) break;
        gather(E, b.ekeys, b.ne, &Ep);
        gather(E, negs, need, &En);
        gather(R, b.rkeys, b.nr, &Rr);
        zero(&gEp, b.ne);
        zero(&gEn, need);
        zero(&gR, b.nr);
        cr_kge_loss_grad_split(m, &b.b, &Ep, &En, &Rr, (float)a->lambda, &gEp, &gEn, &gR, &st);
        apply(&o, E, b.ekeys, &gEp);
        apply(&o, E, negs, &gEn);
        apply(&o, R, b.rkeys, &gR);
        *npos += b.pos;
    }
    free(Ep.data), free(En.data), free(Rr.data), free(gEp.data), free(gEn.data), free(gR.data), free(negs);
    return st.loss + st.reg;
}

int main(int argc, char **argv) {
    args a;
    if (parse(argc, argv, &a)) return 2;
    cr_kge_model m;
    cr_err e;
    if (cr_kge_model_parse(a.model, &m, &e)) return fprintf(stderr, "kge_plain: %s\n", e.msg), 2;
    char path[4096];
    cr_dict ents, rels;
    cr_dict_init(&ents);
    cr_dict_init(&rels);
    cr_triple_cols t;
    snprintf(path, sizeof path, "%s/entities.tsv", a.data);
    int rc = cr_dict_load(&ents, path, &e);
    snprintf(path, sizeof path, "%s/relations.tsv", a.data);
    rc = rc ? rc : cr_dict_load(&rels, path, &e);
    snprintf(path, sizeof path, "%s/train.del", a.data);
    rc = rc ? rc : cr_triples_load_del(path, ents.n, rels.n, &t, &e);
    if (rc) return fprintf(stderr, "kge_plain: %s\n", e.msg), 1;
    cr_rng g;
    cr_rng_seed(&g, (uint64_t)a.seed);
    table E = table_new(ents.n, a.dim, a.init, &g), R = table_new(rels.n, m == CR_KGE_RESCAL ? a.dim * a.dim : a.dim,
                                                                  a.init, &g);
    cr_kgebatch_opts ko = {ents.n, rels.n, a.batch, a.neg, (uint64_t)a.seed, 1, 0, 1};
    cr_kgebatch *kb = cr_kgebatch_new(t.s, t.r, t.o, t.n, &ko, &e);
    if (!kb) return fprintf(stderr, "kge_plain: %s\n", e.msg), 1;
    int64_t npos = 0;
    double secs = 0, cpu = 0, loss = 0;
    for (int64_t ep = 1; ep <= a.epochs; ep++) {
        double t0 = cr_now();
        clock_t c0 = clock();
        cr_kgebatch_shuffle(kb, (uint64_t)(a.seed * 1000003 + ep)); /* timed, as in kge.lua's epoch */
        loss = epoch(m, kb, &a, &E, &R, &npos);
        secs += cr_now() - t0;
        cpu += (double)(clock() - c0) / CLOCKS_PER_SEC;
    }
    printf("triples_per_s=%.0f train_seconds=%.3f positives=%lld train_cpu_seconds=%.3f loss=%.6g\n",
           (double)npos / (secs > 0 ? secs : 1e-9), secs, (long long)npos, cpu, loss);
    cr_kgebatch_destroy(&kb);
    cr_triples_free(&t);
    cr_dict_free(&ents), cr_dict_free(&rels);
    free(E.w.data), free(E.h), free(R.w.data), free(R.h);
    return 0;
}
