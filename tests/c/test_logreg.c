/* Logistic regression kernels (src/kernels/cr_logreg.h): gradients against
 * finite differences, the loader's splits and placement checks, and DBPG
 * (the kernel's pushes through the server rule) against a dense reference. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "grad_util.h"
#include "data/cr_libsvm.h"
#include "kernels/cr_logreg.h"
#include "optim/cr_optim.h"

#define NEX 40
#define NF 12

/* A small random LIBSVM file: NEX examples over NF features, the label a
 * noisy linear function so that there is something to learn. */
static void write_data(const char *path, uint64_t seed) {
    FILE *f = fopen(path, "w");
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (int i = 0; i < NEX; i++) {
        double s = 0;
        char line[512];
        int n = 0;
        for (int j = 0; j < NF; j++) {
            if (cr_rng_uniform(&r) < 0.4 || (j == NF - 1 && i == 0)) { /* feature NF appears at least once */
                double v = 1 + (int)(cr_rng_uniform(&r) * 3);
                s += (j % 3 == 0 ? 1.0 : j % 3 == 1 ? -1.0 : 0.2) * v;
                n += snprintf(line + n, sizeof line - (size_t)n, " %d:%g", j + 1, v);
            }
        }
        fprintf(f, "%s%s\n", s + 0.5 * cr_rng_normal(&r) > 0 ? "+1" : "-1", line);
    }
    fclose(f);
}

static cr_logreg_data *load(const char *path, int split, double heldout, int64_t part, int64_t parts) {
    cr_logreg_load_opts o = {.features = 0, .heldout = heldout, .seed = 7, .split = split, .part = part, .parts = parts};
    cr_err e;
    cr_logreg_data *d = cr_logreg_load(path, &o, &e);
    if (!d) printf("  load: %s\n", e.msg);
    return d;
}

typedef struct fdctx {
    cr_logreg_data *d;
    float *w; /* dense, NF */
} fdctx;

static double loss_at(void *ud) {
    fdctx *c = ud;
    cr_logreg_margins(c->d, c->w, NF, 1);
    return cr_logreg_loss(c->d);
}

/* batch_grad (and block_grad's g) against central differences of the loss;
 * block_grad's u at rho = 0 against differences of the gradient. */
static void test_gradients(void) {
    const char *path = "/tmp/test_logreg_grad.svm";
    write_data(path, 3);
    cr_logreg_data *d = load(path, CR_LOGREG_ALL, 0, 0, 1);
    CR_CHECK(d && d->n == NEX && d->features == NF);
    float w[NF];
    cr_rng r;
    cr_rng_seed(&r, 5);
    for (int j = 0; j < NF; j++) w[j] = (float)(cr_rng_uniform(&r) - 0.5);
    cr_logreg_batches(d, NEX); /* one batch: its keys are every feature, sorted */
    CR_CHECK(d->nbatches == 1 && d->bat_koff[1] == NF);
    float g[NF], gb[2 * NF];
    double loss = cr_logreg_batch_grad(d, 0, w, 1, 0, g);
    fdctx c = {d, w};
    CR_CHECK_NEAR(loss, loss_at(&c), 1e-9);
    double norm = 0, worst = fd_worst(w, g, NF, 1e-3f, loss_at, &c, &norm);
    CR_CHECK(norm > 1 && worst < 2e-3);
    /* blocks over the same weights: margins must hold w */
    cr_logreg_blocks(d, 3, NF, NULL);
    CR_CHECK(d->nblocks == 3 && d->nu == NF);
    cr_logreg_margins(d, w, NF, 1);
    for (int64_t j = 0; j < d->nu; j++) d->trust[j] = 0; /* radius 0: the curvature at the margins */
    for (int64_t b = 0, at = 0; b < 3; b++) {
        cr_logreg_block_grad(d, b, 0, gb + 2 * at);
        at += d->nact[b];
    }
    for (int j = 0; j < NF; j++) CR_CHECK_NEAR(gb[2 * j], g[j], 1e-4 * (1 + fabs(g[j])));
    /* u at rho = 0 is d g_j / d w_j */
    for (int j = 0; j < NF; j++) {
        float keep = w[j];
        float gp[NF], gm[NF];
        w[j] = keep + 1e-3f;
        cr_logreg_batch_grad(d, 0, w, 1, 0, gp);
        w[j] = keep - 1e-3f;
        cr_logreg_batch_grad(d, 0, w, 1, 0, gm);
        w[j] = keep;
        double h = (gp[j] - gm[j]) / 2e-3;
        CR_CHECK_NEAR(gb[2 * j + 1], h, 2e-3 * (1 + fabs(h)));
    }
    /* l2 adds l2 w */
    float g2[NF];
    cr_logreg_batch_grad(d, 0, w, 1, 0.5, g2);
    for (int j = 0; j < NF; j++) CR_CHECK_NEAR(g2[j], g[j] + 0.5 * w[j], 1e-5);
    cr_logreg_destroy(&d);
    remove(path);
}

/* Held-out split: deterministic, test and train partition the file, parts
 * partition the training examples. */
static void test_splits(void) {
    const char *path = "/tmp/test_logreg_split.svm";
    write_data(path, 11);
    cr_logreg_data *tr = load(path, CR_LOGREG_TRAIN, 0.3, 0, 1), *te = load(path, CR_LOGREG_TEST, 0.3, 0, 1),
                   *tr2 = load(path, CR_LOGREG_TRAIN, 0.3, 0, 1), *p0 = load(path, CR_LOGREG_TRAIN, 0.3, 0, 2),
                   *p1 = load(path, CR_LOGREG_TRAIN, 0.3, 1, 2);
    CR_CHECK(tr && te && tr2 && p0 && p1);
    CR_CHECK(tr->n + te->n == NEX && te->n > 0 && tr->n > te->n);
    CR_CHECK(tr->file_examples == NEX && te->features == NF);
    CR_CHECK(tr2->n == tr->n && tr2->nnz == tr->nnz && !memcmp(tr2->key, tr->key, (size_t)tr->nnz * sizeof *tr->key));
    CR_CHECK(p0->n + p1->n == tr->n && p0->nnz + p1->nnz == tr->nnz && p0->n - p1->n <= 1);
    cr_logreg_destroy(&tr), cr_logreg_destroy(&te), cr_logreg_destroy(&tr2);
    cr_logreg_destroy(&p0), cr_logreg_destroy(&p1);
    remove(path);
}

/* A placement file keeps the examples its u lines place on the node, and
 * one made for other data or another node count is refused. */
static void test_placement(void) {
    const char *path = "/tmp/test_logreg_pl.svm", *pl = "/tmp/test_logreg_pl.place";
    FILE *f = fopen(path, "w");
    fputs("+1 1:1 3:2\n-1 2:1\n\n+1 3:1 4:1\n-1 1:1 4:3\n", f); /* the blank line is not an example */
    fclose(f);
    f = fopen(pl, "w");
    fputs("# crescent placement 1\nk 2\nexamples 4\nkeys 4\nu 0 1\nu 1 0\nu 2 1\nu 3 1\nv 0 0\nv 1 0\nv 2 1\nv 3 1\n", f);
    fclose(f);
    cr_logreg_load_opts o = {.split = CR_LOGREG_TRAIN, .parts = 1, .placement = pl, .node = 1, .nodes = 2, .seed = 1};
    cr_err e;
    cr_logreg_data *d = cr_logreg_load(path, &o, &e);
    CR_CHECK(d && d->n == 3 && d->y[0] == 1 && d->key[0] == 0 && d->key[2] == 2 && d->y[2] == -1);
    cr_logreg_destroy(&d);
    o.node = 0;
    d = cr_logreg_load(path, &o, &e);
    CR_CHECK(d && d->n == 1 && d->nnz == 1 && d->key[0] == 1);
    cr_logreg_destroy(&d);
    o.nodes = 3;
    CR_CHECK(!cr_logreg_load(path, &o, &e) && strstr(e.msg, "2 machines, the job has 3 nodes"));
    o.nodes = 2;
    f = fopen(pl, "w"); /* 5 examples: made for another file */
    fputs("# crescent placement 1\nk 2\nexamples 5\nkeys 4\nu 0 1\nu 1 0\nu 2 1\nu 3 1\nu 4 0\n"
          "v 0 0\nv 1 0\nv 2 1\nv 3 1\n", f);
    fclose(f);
    CR_CHECK(!cr_logreg_load(path, &o, &e) && strstr(e.msg, "placement for 5 examples") && strstr(e.msg, path));
    f = fopen(pl, "w"); /* 5 keys */
    fputs("# crescent placement 1\nk 2\nexamples 4\nkeys 5\nu 0 1\nu 1 0\nu 2 1\nu 3 1\n"
          "v 0 0\nv 1 0\nv 2 1\nv 3 1\nv 4 1\n", f);
    fclose(f);
    CR_CHECK(!cr_logreg_load(path, &o, &e) && strstr(e.msg, "placement for 5 keys") && strstr(e.msg, "4 features"));
    f = fopen(pl, "w"); /* 3 examples */
    fputs("# crescent placement 1\nk 2\nexamples 3\nkeys 4\nu 0 1\nu 1 0\nu 2 1\nv 0 0\nv 1 0\nv 2 1\nv 3 1\n", f);
    fclose(f);
    CR_CHECK(!cr_logreg_load(path, &o, &e) && strstr(e.msg, "places 3 examples"));
    remove(path);
    remove(pl);
}

/* Writes text to path (a test's small input file). */
static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Feature ids in any order (hashed features) are sorted; lines in order
 * load as before. A repeated id is refused with file:line, the rule
 * cr_libsvm_load applies (the loader once summed repeats silently). */
static void test_any_order(void) {
    const char *path = "/tmp/test_logreg_order.svm";
    write_text(path, "+1 3:1.5 1:2\n-1 2:1 4:3\n");
    cr_logreg_load_opts o = {.split = CR_LOGREG_ALL, .parts = 1};
    cr_err e;
    cr_logreg_data *d = cr_logreg_load(path, &o, &e);
    CR_CHECK(d != NULL);
    if (!d) return;
    CR_CHECK(d->n == 2 && d->nnz == 4 && d->features == 4);
    CR_CHECK(d->ptr[1] == 2 && d->key[0] == 0 && d->key[1] == 2 && d->val[0] == 2 && d->val[1] == 1.5f);
    CR_CHECK(d->key[2] == 1 && d->key[3] == 3 && d->val[3] == 3);
    CR_CHECK(d->fcount[2] == 1);
    cr_logreg_destroy(&d);
    write_text(path, "-1 2:1\n1 5:1 3:1 5:2\n");
    CR_CHECK(!cr_logreg_load(path, &o, &e));
    CR_CHECK_STR(e.msg, "/tmp/test_logreg_order.svm:2: feature id 5 repeated");
    cr_csr m;
    write_text(path, "-1 2:1\n1 3:1 5:1 5:2\n");
    CR_CHECK(cr_libsvm_load(path, 0, &m, &e) == -1 && strstr(e.msg, "test_logreg_order.svm:2: feature ids must increase"));
    CR_CHECK(!cr_logreg_load(path, &o, &e));
    CR_CHECK_STR(e.msg, "/tmp/test_logreg_order.svm:2: feature id 5 repeated");
    remove(path);
}

/* Bad LIBSVM input names the file and line. */
static void test_bad_input(void) {
    const char *path = "/tmp/test_logreg_bad.svm";
    write_text(path, "+1 1:1 2:1\n-1 3:x\n");
    cr_logreg_load_opts o = {.split = CR_LOGREG_ALL, .parts = 1};
    cr_err e;
    CR_CHECK(!cr_logreg_load(path, &o, &e) && strstr(e.msg, "/tmp/test_logreg_bad.svm:2:"));
    write_text(path, "+1 1:1 2:1\n-1 3:1 9:1\n");
    o.features = 5; /* the table's keys */
    CR_CHECK(!cr_logreg_load(path, &o, &e) && strstr(e.msg, "/tmp/test_logreg_bad.svm:2:"));
    o.features = 0;
    o.heldout = 1;
    CR_CHECK(!cr_logreg_load(path, &o, &e) && strstr(e.msg, "heldout"));
    o.heldout = 0, o.part = 2, o.parts = 2;
    CR_CHECK(!cr_logreg_load(path, &o, &e) && strstr(e.msg, "part"));
    remove(path);
}

/* ---------- DBPG against a dense reference ---------- */

#define NB 3
#define EPOCHS 15

static double sigm(double z) { return 1 / (1 + exp(-z)); }

/* Plain block proximal gradient on the dense data: for each block, the full
 * gradient and curvature of every feature of the block (the same formula
 * as the kernel, over all examples), then the soft-threshold step. */
/* sigma' at |m| - delta, or 1/4 (the kernel's curvature within a radius). */
static double curv(double m, double delta) {
    double a = fabs(m) - delta;
    return a <= 0 ? 0.25 : sigm(a) * (1 - sigm(a));
}

/* Plain block proximal gradient on the dense data: for each block, the full
 * gradient and curvature of every feature of the block (the same formulas
 * as the kernel and the rule, over all examples), then the soft-threshold
 * step within each feature's trust radius. */
static void dense_reference(const double X[NEX][NF], const double *y, double lr, double l1, double rho, double *w) {
    double m[NEX] = {0}, r[NF];
    for (int j = 0; j < NF; j++) r[j] = 1;
    for (int ep = 0; ep < EPOCHS; ep++) {
        for (int b = 0; b < NB; b++) {
            int lo = b * NF / NB, hi = (b + 1) * NF / NB;
            double nw[NF];
            for (int j = lo; j < hi; j++) {
                double g = 0, u = 0;
                int seen = 0;
                for (int i = 0; i < NEX; i++) {
                    if (X[i][j] == 0) continue;
                    double s = 0, x = fabs(X[i][j]), c = curv(m[i], r[j] * x);
                    for (int k = lo; k < hi; k++) s += fabs(X[i][k]);
                    g += -y[i] * sigm(-y[i] * m[i]) * X[i][j];
                    u += c * x * ((1 - rho) * x + rho * s);
                    seen = 1;
                }
                nw[j] = w[j];
                if (!seen) continue;
                double z = w[j] - lr * g / u, t = lr * l1 / u;
                double dw = (z > t ? z - t : z < -t ? z + t : 0) - w[j];
                dw = dw > r[j] ? r[j] : dw < -r[j] ? -r[j] : dw;
                nw[j] = w[j] + dw;
                r[j] = fmax(2 * fabs(dw), r[j] / 2);
            }
            for (int j = lo; j < hi; j++) {
                for (int i = 0; i < NEX; i++) m[i] += X[i][j] * (nw[j] - w[j]);
                w[j] = nw[j];
            }
        }
    }
}

/* Two workers (examples dealt round robin), each registered for its keys;
 * per block: both push (g, u), the rule steps once the pass is complete,
 * both pull and update their margins: the tau = 0 schedule of the model. */
static void test_dbpg_reference(void) {
    const char *path = "/tmp/test_logreg_ref.svm";
    write_data(path, 21);
    cr_logreg_data *all = load(path, CR_LOGREG_ALL, 0, 0, 1), *wk[2] = {load(path, CR_LOGREG_TRAIN, 0, 0, 2),
                                                                        load(path, CR_LOGREG_TRAIN, 0, 1, 2)};
    CR_CHECK(all && wk[0] && wk[1]);
    double X[NEX][NF] = {{0}}, y[NEX], wref[NF] = {0};
    for (int i = 0; i < NEX; i++) {
        y[i] = all->y[i];
        for (int64_t k = all->ptr[i]; k < all->ptr[i + 1]; k++) X[i][all->key[k]] = all->val[k];
    }
    const double lr = 0.8, l1 = 0.3, rho = 0.5;
    dense_reference(X, y, lr, l1, rho, wref);
    cr_optim o = {.kind = CR_OPTIM_DBPG, .lr = (float)lr, .l1 = (float)l1, .delta = -1};
    float tab[NF][2] = {{0}}, st[NF][5] = {{0}}, reg[2] = {0, -1}, buf[2 * NF], rows[2 * NF];
    for (int w = 0; w < 2; w++) {
        cr_logreg_blocks(wk[w], NB, NF, NULL);
        for (int64_t q = 0; q < wk[w]->nu; q++) cr_optim_apply(&o, tab[wk[w]->ukey[q]], st[wk[w]->ukey[q]], reg, 2);
    }
    for (int ep = 0; ep < EPOCHS; ep++)
        for (int b = 0; b < NB; b++) {
            for (int w = 0; w < 2; w++) {
                cr_logreg_data *d = wk[w];
                const int64_t *a = cr_logreg_block_act(d, b);
                cr_logreg_block_grad(d, b, rho, buf);
                for (int64_t q = 0; q < d->nact[b]; q++) cr_optim_apply(&o, tab[d->ukey[a[q]]], st[d->ukey[a[q]]], buf + 2 * q, 2);
            }
            for (int w = 0; w < 2; w++) {
                cr_logreg_data *d = wk[w];
                const int64_t *a = cr_logreg_block_act(d, b);
                for (int64_t q = 0; q < d->nact[b]; q++)
                    rows[2 * q] = tab[d->ukey[a[q]]][0], rows[2 * q + 1] = tab[d->ukey[a[q]]][1];
                cr_logreg_block_update(d, b, rows, 2);
            }
        }
    int nonzero = 0;
    for (int j = 0; j < NF; j++) {
        CR_CHECK_NEAR(tab[j][0], wref[j], 1e-5);
        nonzero += wref[j] != 0;
    }
    CR_CHECK(nonzero >= 3 && nonzero < NF); /* the test exercises both sides of the threshold */
    /* the objective fell from w = 0 */
    double m0 = NEX * log(2.0), obj = 0;
    cr_logreg_margins(all, (float *)tab, NF, 2);
    obj = cr_logreg_loss(all);
    for (int j = 0; j < NF; j++) obj += l1 * fabs(tab[j][0]);
    CR_CHECK(obj < 0.9 * m0);
    cr_logreg_destroy(&all), cr_logreg_destroy(&wk[0]), cr_logreg_destroy(&wk[1]);
    remove(path);
}

/* The KKT flag in a pulled row drops the key from the block's active list. */
static void test_block_drop(void) {
    const char *path = "/tmp/test_logreg_drop.svm";
    write_data(path, 4);
    cr_logreg_data *d = load(path, CR_LOGREG_ALL, 0, 0, 1);
    CR_CHECK(d);
    cr_logreg_blocks(d, 2, NF, NULL);
    int64_t n0 = d->nact[0];
    float rows[2 * NF] = {0};
    rows[1] = -1; /* the first active key is skipped */
    rows[3] = 0.25f; /* the second gets a trust radius */
    CR_CHECK(cr_logreg_block_update(d, 0, rows, 2) == 1);
    CR_CHECK(d->nact[0] == n0 - 1 && cr_logreg_skipped(d) == 1);
    CR_CHECK(d->trust[1] == 0.25f && d->trust[2] == 1);
    cr_logreg_destroy(&d);
    remove(path);
}

/* Balanced bounds: equal shares of the entries, every bound a new key. */
static void test_balanced(void) {
    const char *path = "/tmp/test_logreg_bal.svm";
    FILE *f = fopen(path, "w");
    /* feature 1 in every line (6 entries), 2..7 once each */
    fputs("+1 1:1 2:1\n-1 1:1 3:1\n+1 1:1 4:1\n-1 1:1 5:1\n+1 1:1 6:1\n-1 1:1 7:1\n", f);
    fclose(f);
    cr_logreg_data *d = load(path, CR_LOGREG_TEST, 0.5, 0, 1); /* counts cover every line, kept or not */
    CR_CHECK(d && d->features == 7);
    int64_t b[5];
    CR_CHECK(cr_logreg_balanced(d, 4, b) == 4);
    /* 12 entries, 3 a block; feature 1 alone holds 6: a block of its own */
    CR_CHECK(b[0] == 0 && b[1] == 1 && b[4] == 7);
    for (int i = 0; i < 4; i++) CR_CHECK(b[i] < b[i + 1]);
    CR_CHECK(b[2] == 2 && b[3] == 4); /* cum after key 1: 7 >= 6 (2 shares); after key 3: 9 >= 9 */
    cr_logreg_blocks(d, 4, 7, b);
    CR_CHECK(d->nblocks == 4 && d->bkey[1] == 1);
    cr_logreg_destroy(&d);
    /* declared features past the ids seen hold no entries: the last block */
    cr_logreg_load_opts o = {.features = 20, .split = CR_LOGREG_ALL, .parts = 1};
    cr_err e;
    d = cr_logreg_load(path, &o, &e);
    CR_CHECK(d && d->features == 20 && d->nfcount == 7);
    CR_CHECK(cr_logreg_balanced(d, 4, b) == 4 && b[3] == 4 && b[4] == 20);
    cr_logreg_destroy(&d);
    remove(path);
}

int main(void) {
    CR_RUN(test_gradients);
    CR_RUN(test_splits);
    CR_RUN(test_placement);
    CR_RUN(test_bad_input);
    CR_RUN(test_dbpg_reference);
    CR_RUN(test_block_drop);
    CR_RUN(test_balanced);
    CR_RUN(test_any_order);
    return cr_test_done();
}
