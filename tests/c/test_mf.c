/* Matrix factorization kernels (finite-difference gradient check, SGD
 * semantics) and the cell loader/batcher (partitioning, batches, bad input). */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "grad_util.h"
#include "kernels/cr_mf.h"
#include "kernels/cr_mfcells.h"

#define NW 5
#define NH 4
#define D 6
#define NC 24

static float Wd[NW * D], Hd[NH * D];
static int32_t wi[NC], hj[NC];
static float xv[NC];

static void random_batch(uint64_t seed) {
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (int k = 0; k < NW * D; k++) Wd[k] = (float)(0.5 * cr_rng_normal(&r));
    for (int k = 0; k < NH * D; k++) Hd[k] = (float)(0.5 * cr_rng_normal(&r));
    for (int c = 0; c < NC; c++) {
        wi[c] = (int32_t)cr_rng_below(&r, NW);
        hj[c] = (int32_t)cr_rng_below(&r, NH);
        xv[c] = (float)cr_rng_normal(&r);
    }
}

static double loss_at(const cr_mf_batch *b, cr_mat *W, cr_mat *H, float lambda) {
    float gw[NW * D], gh[NH * D];
    cr_mat gW = {NW, D, gw}, gH = {NH, D, gh};
    return cr_mf_loss_grad(b, W, H, lambda, &gW, &gH);
}

typedef struct {
    const cr_mf_batch *b;
    cr_mat *W, *H;
    float lambda;
} fd_ctx;

static double fd_loss(void *ctx) {
    fd_ctx *c = ctx;
    return loss_at(c->b, c->W, c->H, c->lambda);
}

/* (L(p+h) - L(p-h)) / 2h against the analytic gradient, every parameter. */
static void test_gradient_check(void) {
    random_batch(7);
    cr_mat W = {NW, D, Wd}, H = {NH, D, Hd};
    cr_mf_batch b = {NC, wi, hj, xv};
    float lambda = 0.3f, gw[NW * D] = {0}, gh[NH * D] = {0};
    cr_mat gW = {NW, D, gw}, gH = {NH, D, gh};
    cr_mf_loss_grad(&b, &W, &H, lambda, &gW, &gH);
    fd_ctx c = {&b, &W, &H, lambda};
    double worst = fmax(fd_worst(Wd, gw, NW * D, 1e-2f, fd_loss, &c, NULL),
                        fd_worst(Hd, gh, NH * D, 1e-2f, fd_loss, &c, NULL));
    CR_CHECK(worst < 2e-3);
    /* and the gradient is not trivially zero */
    double norm = 0;
    for (int k = 0; k < NW * D; k++) norm += fabs(gw[k]);
    CR_CHECK(norm > 1.0);
}

/* One cell: SGD moves exactly by -lr * gradient; reported loss is before. */
static void test_sgd_one_cell_matches_gradient(void) {
    random_batch(11);
    float w0[NW * D], h0[NH * D];
    memcpy(w0, Wd, sizeof w0);
    memcpy(h0, Hd, sizeof h0);
    cr_mat W = {NW, D, Wd}, H = {NH, D, Hd};
    cr_mf_batch b = {1, wi, hj, xv};
    float gw[NW * D] = {0}, gh[NH * D] = {0};
    cr_mat gW = {NW, D, gw}, gH = {NH, D, gh};
    double l0 = cr_mf_loss_grad(&b, &W, &H, 0.1f, &gW, &gH);
    cr_mf_stats st = {0, 0, 0};
    cr_mf_sgd(&b, &W, &H, 0.05f, 0.1f, &st);
    CR_CHECK(st.n == 1);
    CR_CHECK_NEAR(st.sse + st.reg, l0, 1e-5);
    for (int k = 0; k < NW * D; k++) CR_CHECK_NEAR(Wd[k], w0[k] - 0.05f * gw[k], 1e-6);
    for (int k = 0; k < NH * D; k++) CR_CHECK_NEAR(Hd[k], h0[k] - 0.05f * gh[k], 1e-6);
}

/* Many cells: sequential (later cells see earlier updates) = cell by cell. */
static void test_sgd_sequential(void) {
    random_batch(13);
    float w1[NW * D], h1[NH * D];
    memcpy(w1, Wd, sizeof w1);
    memcpy(h1, Hd, sizeof h1);
    cr_mat W = {NW, D, Wd}, H = {NH, D, Hd}, W1 = {NW, D, w1}, H1 = {NH, D, h1};
    cr_mf_stats all = {0, 0, 0}, one = {0, 0, 0};
    cr_mf_sgd(&(cr_mf_batch){NC, wi, hj, xv}, &W, &H, 0.03f, 0.05f, &all);
    for (int c = 0; c < NC; c++)
        cr_mf_sgd(&(cr_mf_batch){1, wi + c, hj + c, xv + c}, &W1, &H1, 0.03f, 0.05f, &one);
    CR_CHECK(all.n == NC && one.n == NC);
    CR_CHECK_NEAR(all.sse, one.sse, 1e-6);
    for (int k = 0; k < NW * D; k++) CR_CHECK(Wd[k] == w1[k]);
    for (int k = 0; k < NH * D; k++) CR_CHECK(Hd[k] == h1[k]);
}

/* The pushed gradient reproduces the local change under w -= lr g. */
static void test_delta_to_grad(void) {
    random_batch(17);
    float orig[NW * D], hcopy[NH * D];
    memcpy(orig, Wd, sizeof orig);
    memcpy(hcopy, Hd, sizeof hcopy);
    cr_mat W = {NW, D, Wd}, H = {NH, D, Hd};
    cr_mf_stats st = {0, 0, 0};
    cr_mf_sgd(&(cr_mf_batch){NC, wi, hj, xv}, &W, &H, 0.02f, 0.1f, &st);
    float updated[NW * D];
    memcpy(updated, Wd, sizeof updated);
    cr_mf_delta_to_grad(&W, orig, 0.02f);
    for (int k = 0; k < NW * D; k++) CR_CHECK_NEAR(orig[k] - 0.02f * Wd[k], updated[k], 1e-6);
    cr_mf_delta_to_grad(&H, hcopy, 0.0f);
    for (int k = 0; k < NH * D; k++) CR_CHECK(Hd[k] == 0.0f);
}

/* Probe defect 7: a denormal learning rate (where a bold driver that keeps
 * halving ends up; 1/lr overflows float) gives finite gradients, and the
 * owner's w -= lr g then leaves the rows finite. */
static void test_delta_to_grad_denormal_lr(void) {
    const float lrs[] = {1e-39f, 1e-45f, 3e-38f};
    for (int i = 0; i < 3; i++) {
        random_batch(23 + (uint64_t)i);
        float orig[NW * D];
        memcpy(orig, Wd, sizeof orig);
        cr_mat W = {NW, D, Wd}, H = {NH, D, Hd};
        cr_mf_stats st = {0, 0, 0};
        cr_mf_sgd(&(cr_mf_batch){NC, wi, hj, xv}, &W, &H, lrs[i], 0.1f, &st);
        cr_mf_delta_to_grad(&W, orig, lrs[i]);
        int finite = 1;
        for (int k = 0; k < NW * D; k++) {
            float w = orig[k] - lrs[i] * Wd[k];
            if (!isfinite(Wd[k]) || !isfinite(w) || fabsf(w - orig[k]) > 1e-6f) finite = 0;
        }
        CR_CHECK(finite);
    }
}

/* SGD recovers a rank-2 matrix: the loss drops by 20x. */
static void test_sgd_converges(void) {
    enum { R = 30, C = 20, K = 2 };
    static float tw[R * K], th[C * K], W[R * K], H[C * K];
    static int32_t bi[R * C], bj[R * C];
    static float bx[R * C];
    cr_rng r;
    cr_rng_seed(&r, 3);
    for (int k = 0; k < R * K; k++) tw[k] = (float)cr_rng_normal(&r), W[k] = (float)(0.1 * cr_rng_normal(&r));
    for (int k = 0; k < C * K; k++) th[k] = (float)cr_rng_normal(&r), H[k] = (float)(0.1 * cr_rng_normal(&r));
    int n = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            if (cr_rng_uniform(&r) < 0.4) continue;
            bi[n] = i, bj[n] = j, bx[n] = tw[i * K] * th[j * K] + tw[i * K + 1] * th[j * K + 1];
            n++;
        }
    cr_mat Wm = {R, K, W}, Hm = {C, K, H};
    cr_mf_batch b = {n, bi, bj, bx};
    cr_mf_stats first = {0, 0, 0}, last = {0, 0, 0};
    cr_mf_eval(&b, &Wm, &Hm, &first);
    for (int ep = 0; ep < 300; ep++) {
        cr_mf_stats st = {0, 0, 0};
        cr_mf_sgd(&b, &Wm, &Hm, 0.02f, 0.001f, &st);
    }
    cr_mf_eval(&b, &Wm, &Hm, &last);
    CR_CHECK(first.n == n && last.n == n);
    CR_CHECK(last.sse < first.sse / 20);
}

/* 6 x 5 matrix; cells (1-based): rows 1..6, every column used. */
static const char *SMALL = "%%MatrixMarket matrix coordinate real general\n"
                           "% a comment\n"
                           "6 5 12\n"
                           "1 1 1.0\n2 1 2.0\n3 2 3.0\n4 2 4.0\n5 3 5.0\n6 3 6.0\n"
                           "1 4 7.0\n2 4 8.0\n3 4 9.0\n4 5 10.0\n6 5 11.0\n5 1 12.0\n";

static void test_cells_partition_and_batches(void) {
    char *path = cr_test_tmpfile(SMALL);
    CR_CHECK(path);
    cr_err e;
    cr_mf_shape h;
    CR_CHECK(cr_mfcells_read_header(path, &h, &e) == 0);
    CR_CHECK(h.rows == 6 && h.cols == 5 && h.nnz == 12);
    /* node owns rows [1, 5) (0-based), two workers */
    int colseen[5] = {0};
    int64_t total = 0;
    double valsum = 0;
    for (int part = 0; part < 2; part++) {
        cr_mfcells *c = cr_mfcells_load(path, &(cr_mfcells_opts){1, 5, part, 2, 2, 9, 0, 0}, &e);
        CR_CHECK(c);
        total += cr_mfcells_count(c);
        cr_mfcells_shuffle(c, 42 + (uint64_t)part);
        int64_t pos = 0, walked = 0;
        cr_mfcells_batch b;
        while (cr_mfcells_next(c, &pos, &b)) {
            cr_mf_batch cells = cr_mfcells_gather(c, &b);
            CR_CHECK(cells.n == b.n && cr_mf_check_batch(&cells, b.nw, b.nh) == 0);
            int64_t percol = 0;
            for (int64_t k = 0; k < b.nh; k++) { /* columns in walk order = the gathered cells */
                cr_mf_batch col = cr_mfcells_column(c, &b, k);
                for (int64_t s = 0; s < col.n; s++, percol++)
                    CR_CHECK(col.wi[s] == cells.wi[percol] && col.hj[s] == cells.hj[percol] && col.x[s] == cells.x[percol]);
            }
            CR_CHECK(percol == b.n);
            for (int64_t k = 0; k < b.nw; k++) {
                CR_CHECK(b.wkeys[k] >= 1 && b.wkeys[k] < 5);
                for (int64_t m = 0; m < k; m++) CR_CHECK(b.wkeys[m] != b.wkeys[k]);
            }
            for (int64_t k = 0; k < b.nh; k++) colseen[b.hkeys[k]] += 1 + part * 10;
            for (int64_t s = 0; s < cells.n; s++) {
                /* value encodes the cell: check row and column through the keys */
                int64_t row = b.wkeys[cells.wi[s]], col = b.hkeys[cells.hj[s]];
                float x = cells.x[s];
                int found = 0;
                const char *p = strstr(SMALL, "\n6 5 12\n") + 8;
                long a, bb;
                double v;
                int used;
                while (sscanf(p, "%ld %ld %lf\n%n", &a, &bb, &v, &used) == 3) {
                    if (a - 1 == row && bb - 1 == col && (float)v == x) found = 1;
                    p += used;
                }
                CR_CHECK(found);
                valsum += x;
            }
            walked += b.n;
        }
        CR_CHECK(walked == cr_mfcells_count(c));
        cr_mfcells_destroy(&c);
        CR_CHECK(c == NULL);
    }
    /* rows 2..5 (1-based) hold 8 cells, values 2 3 4 5 8 9 10 12 */
    CR_CHECK(total == 8);
    CR_CHECK_NEAR(valsum, 53, 1e-6);
    for (int j = 0; j < 5; j++) CR_CHECK(colseen[j] == 1 || colseen[j] == 11); /* one worker each */
    unlink(path);
}

/* Same seed, same walk; the walk covers every cell once; seeds differ. */
static void test_cells_shuffle_deterministic(void) {
    char *path = cr_test_tmpfile(SMALL);
    cr_err e;
    cr_mfcells_opts o = {0, -1, 0, 1, 1, 3, 0, 0}; /* one column per batch */
    cr_mfcells *a = cr_mfcells_load(path, &o, &e), *b = cr_mfcells_load(path, &o, &e);
    CR_CHECK(a && b && cr_mfcells_count(a) == 12 && cr_mfcells_columns(a) == 5);
    CR_CHECK(cr_mfcells_batches(a) == 5);
    int differs = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        cr_mfcells_shuffle(a, seed);
        cr_mfcells_shuffle(b, seed);
        int64_t pa = 0, pb = 0, cells = 0;
        cr_mfcells_batch ba, bb;
        int64_t first = -1;
        while (cr_mfcells_next(a, &pa, &ba)) {
            CR_CHECK(cr_mfcells_next(b, &pb, &bb));
            CR_CHECK(ba.nh == 1 && ba.hkeys[0] == bb.hkeys[0] && ba.n == bb.n);
            if (first < 0) first = ba.hkeys[0];
            cells += ba.n;
        }
        CR_CHECK(!cr_mfcells_next(b, &pb, &bb));
        CR_CHECK(cells == 12);
        static int64_t first1 = -1;
        if (seed == 1) first1 = first;
        else differs |= first != first1;
    }
    CR_CHECK(differs);
    cr_mfcells_destroy(&a);
    cr_mfcells_destroy(&b);
    unlink(path);
}

/* The walk of shuffle(seed) does not depend on earlier shuffles: a job
 * resumed at epoch N (fresh load, one shuffle) walks as the run that saved. */
static void test_cells_shuffle_no_history(void) {
    char *path = cr_test_tmpfile(SMALL);
    cr_err e;
    cr_mfcells_opts o = {0, -1, 0, 1, 1, 3, 0, 0};
    cr_mfcells *a = cr_mfcells_load(path, &o, &e), *b = cr_mfcells_load(path, &o, &e);
    CR_CHECK(a && b);
    for (uint64_t seed = 11; seed <= 14; seed++) cr_mfcells_shuffle(a, seed);
    cr_mfcells_shuffle(b, 14);
    int64_t pa = 0, pb = 0;
    cr_mfcells_batch ba, bb;
    while (cr_mfcells_next(a, &pa, &ba)) {
        CR_CHECK(cr_mfcells_next(b, &pb, &bb));
        CR_CHECK(ba.id == bb.id && ba.hkeys[0] == bb.hkeys[0]);
    }
    CR_CHECK(!cr_mfcells_next(b, &pb, &bb));
    cr_mfcells_destroy(&a);
    cr_mfcells_destroy(&b);
    unlink(path);
}

/* Batches are whole columns, about `batch` cells each, none left tiny. */
static void test_cells_batch_size(void) {
    char *path = cr_test_tmpfile(SMALL);
    cr_err e;
    cr_mfcells *c = cr_mfcells_load(path, &(cr_mfcells_opts){0, -1, 0, 1, 4, 1, 0, 0}, &e);
    CR_CHECK(c);
    int64_t pos = 0, total = 0, small = 0;
    cr_mfcells_batch b;
    while (cr_mfcells_next(c, &pos, &b)) {
        total += b.n;
        small += b.n < 2; /* below half the batch size */
    }
    CR_CHECK(total == 12 && small == 0 && cr_mfcells_batches(c) >= 2 && cr_mfcells_batches(c) <= 3);
    cr_mfcells_destroy(&c);
    CR_CHECK(cr_mfcells_load(path, &(cr_mfcells_opts){0, -1, 0, 1, 0, 1, 0, 0}, &e) == NULL);
    CR_CHECK(strstr(e.msg, "batch size 0 must be >= 1") != NULL);
    unlink(path);
}

/* Probe defect 10: a cell whose row (or column) is past the tables' keys is
 * an error naming its line, whichever node's rows are loaded, not a cell
 * that every node drops. */
static void test_cells_past_table_keys(void) {
    char *path = cr_test_tmpfile(SMALL); /* 6 x 5; rows 5 and 6 have cells */
    cr_err e = {{0}};
    /* the last node of a 4-key W: rows [2, 4) */
    CR_CHECK(cr_mfcells_load(path, &(cr_mfcells_opts){2, 4, 0, 1, 4, 1, 4, 5}, &e) == NULL);
    CR_CHECK(strstr(e.msg, path) == e.msg && strstr(e.msg, "row 5 out of range 1..4 (past the keys") != NULL);
    /* the first node too: the row is nobody's */
    CR_CHECK(cr_mfcells_load(path, &(cr_mfcells_opts){0, 2, 0, 1, 4, 1, 4, 5}, &e) == NULL);
    CR_CHECK(cr_mfcells_load(path, &(cr_mfcells_opts){0, -1, 0, 1, 4, 1, 6, 3}, &e) == NULL);
    CR_CHECK(strstr(e.msg, "column 4 out of range 1..3 (past the keys") != NULL);
    cr_mfcells *c = cr_mfcells_load(path, &(cr_mfcells_opts){0, -1, 0, 1, 4, 1, 6, 5}, &e);
    CR_CHECK(c && cr_mfcells_count(c) == 12);
    cr_mfcells_destroy(&c);
    unlink(path);
}

/* Loading text fails with "PATH<want>...": the place (":line: ") and the
 * start of the reason; the reader's exact wording is its own business. */
static void expect_error(const char *text, const char *want) {
    char *path = cr_test_tmpfile(text);
    cr_err e = {{0}};
    cr_mfcells *c = cr_mfcells_load(path, NULL, &e);
    size_t pl = strlen(path);
    int ok = c == NULL && strncmp(e.msg, path, pl) == 0 && strncmp(e.msg + pl, want, strlen(want)) == 0;
    if (!ok) printf("  want '%s%s...', got '%s'\n", path, want, e.msg);
    cr_mfcells_destroy(&c);
    unlink(path);
    cr_test_cur_failed |= !ok;
}

#define BANNER "%%MatrixMarket matrix coordinate real general\n"
/* The reader (src/data/cr_mm) names file and line; the loader passes that on. */
static void test_cells_bad_input(void) {
    expect_error("hello\n", ":1: ");
    expect_error(BANNER "3 3 2\n1 1 1\n4 1 2\n", ":4: row 4 out of range");
    expect_error(BANNER "3 3 2\n1 1 1\n1 0 2\n", ":4: column 0 out of range");
    expect_error(BANNER "3 3 2\n1 1 nan\n", ":3: ");
    expect_error(BANNER "3 3 2\n1 1 abc\n", ":3: ");
    expect_error(BANNER "3 3 2\n1 1 1\n", ":3: ");
    cr_err e;
    CR_CHECK(cr_mfcells_load("/nonexistent/x.mmc", NULL, &e) == NULL);
    CR_CHECK(strstr(e.msg, "/nonexistent/x.mmc: cannot open: No such file") == e.msg);
}

int main(void) {
    CR_RUN(test_gradient_check);
    CR_RUN(test_sgd_one_cell_matches_gradient);
    CR_RUN(test_sgd_sequential);
    CR_RUN(test_delta_to_grad);
    CR_RUN(test_delta_to_grad_denormal_lr);
    CR_RUN(test_cells_past_table_keys);
    CR_RUN(test_sgd_converges);
    CR_RUN(test_cells_partition_and_batches);
    CR_RUN(test_cells_shuffle_deterministic);
    CR_RUN(test_cells_shuffle_no_history);
    CR_RUN(test_cells_batch_size);
    CR_RUN(test_cells_bad_input);
    return cr_test_done();
}
