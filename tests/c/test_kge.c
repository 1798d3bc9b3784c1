/* Knowledge-graph embedding kernels: finite-difference gradient check of
 * every model on batches with repeated rows, scoring against all entities
 * against the per-triple score, the loss's values and stability, checks of
 * bad batches, and SGD on a tiny separable problem. */
#include <math.h>
#include <stdlib.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "grad_util.h"
#include "kernels/cr_kge.h"

#define NE 6
#define NR 3
#define D 6
#define NB 40

static const cr_kge_model MODELS[] = {CR_KGE_COMPLEX, CR_KGE_DISTMULT, CR_KGE_TRANSE_L1, CR_KGE_TRANSE_L2,
                                      CR_KGE_RESCAL};
#define NMODELS 5

static float Ed[NE * D], Rd[NR * D * D];
static int64_t bs[NB], br[NB], bo[NB];
static float by[NB];

static int64_t rel_cols(cr_kge_model m) { return m == CR_KGE_RESCAL ? D * D : D; }

/* TransE L1's score has kinks where a coordinate of s + r - o is 0: keep
 * every coordinate at least `gap` away from them. */
static int far_from_kinks(int64_t rc, float gap) {
    for (int i = 0; i < NB; i++)
        for (int k = 0; k < D; k++) {
            float x = Ed[bs[i] * D + k] + Rd[br[i] * rc + k] - Ed[bo[i] * D + k];
            if (fabsf(x) < gap) return 0;
        }
    return 1;
}

/* Random rows and a batch of NB triples over NE entities: rows repeat
 * across triples, triple 0 is (x, r, x), labels are mixed. */
static void random_batch(cr_kge_model m, uint64_t seed) {
    cr_rng r;
    cr_rng_seed(&r, seed);
    int64_t rc = rel_cols(m);
    double scale = m == CR_KGE_RESCAL ? 0.3 : 0.6;
    for (int k = 0; k < NE * D; k++) Ed[k] = (float)(scale * cr_rng_normal(&r));
    for (int k = 0; k < NR * rc; k++) Rd[k] = (float)(scale * cr_rng_normal(&r));
    for (int i = 0; i < NB; i++) {
        bs[i] = (int64_t)cr_rng_below(&r, NE);
        br[i] = (int64_t)cr_rng_below(&r, NR);
        bo[i] = i == 0 ? bs[0] : (int64_t)cr_rng_below(&r, NE);
        by[i] = (float)(i % 3 == 0);
    }
}

static double loss_at(cr_kge_model m, const cr_kge_batch *b, float lambda) {
    cr_mat E = {NE, D, Ed}, R = {NR, rel_cols(m), Rd};
    cr_kge_stats st = {0, 0, 0};
    cr_kge_loss_grad(m, b, &E, &R, lambda, NULL, NULL, &st);
    return st.loss + st.reg;
}

typedef struct {
    cr_kge_model m;
    const cr_kge_batch *b;
    float lambda;
} fd_ctx;

static double fd_loss(void *ctx) {
    fd_ctx *c = ctx;
    return loss_at(c->m, c->b, c->lambda);
}

/* (L(p+h) - L(p-h)) / 2h against the analytic gradient, every parameter;
 * returns the worst relative error, and the gradient's L1 norm in *norm. */
static double gradient_error(cr_kge_model m, float lambda, double *norm) {
    int64_t rc = rel_cols(m);
    static float gE[NE * D], gR[NR * D * D];
    memset(gE, 0, sizeof gE);
    memset(gR, 0, sizeof gR);
    cr_mat E = {NE, D, Ed}, R = {NR, rc, Rd}, GE = {NE, D, gE}, GR = {NR, rc, gR};
    cr_kge_batch b = {NB, bs, br, bo, by};
    cr_kge_stats st = {0, 0, 0};
    cr_kge_loss_grad(m, &b, &E, &R, lambda, &GE, &GR, &st);
    fd_ctx c = {m, &b, lambda};
    *norm = 0;
    double we = fd_worst(Ed, gE, NE * D, 1e-2f, fd_loss, &c, norm);
    double wr = fd_worst(Rd, gR, NR * rc, 1e-2f, fd_loss, &c, norm);
    return fmax(we, wr);
}

static void test_gradient_check(void) {
    for (int mi = 0; mi < NMODELS; mi++) {
        cr_kge_model m = MODELS[mi];
        uint64_t seed = 7;
        random_batch(m, seed);
        while (m == CR_KGE_TRANSE_L1 && !far_from_kinks(D, 0.05f)) random_batch(m, ++seed);
        for (int withreg = 0; withreg < 2; withreg++) {
            double norm, err = gradient_error(m, withreg ? 0.1f : 0.0f, &norm);
            if (!(err < 2e-3)) printf("  model %d lambda %d: worst relative error %g\n", mi, withreg, err);
            CR_CHECK(err < 2e-3);
            CR_CHECK(norm > 1.0); /* not trivially zero */
        }
    }
}

/* The batcher's layout: each positive followed by 2 subject and 2 object
 * corruptions (runs sharing (r, o), then (s, r), which RESCAL scores one run
 * at a time), some corruptions equal to the kept side. */
static void grouped_batch(cr_kge_model m, uint64_t seed) {
    random_batch(m, seed);
    cr_rng r;
    cr_rng_seed(&r, seed + 100);
    for (int i = 0; i < NB; i++) {
        int p = i - i % 5, j = i % 5;
        if (j == 0) continue;
        bs[i] = j <= 2 ? (int64_t)cr_rng_below(&r, NE) : bs[p];
        br[i] = br[p];
        bo[i] = j <= 2 ? bo[p] : (int64_t)cr_rng_below(&r, NE);
        by[i] = 0;
    }
    by[0] = 1, by[5] = 1;
}

static void test_gradient_check_grouped(void) {
    for (int mi = 0; mi < NMODELS; mi++) {
        cr_kge_model m = MODELS[mi];
        uint64_t seed = 11;
        grouped_batch(m, seed);
        while (m == CR_KGE_TRANSE_L1 && !far_from_kinks(D, 0.05f)) grouped_batch(m, ++seed);
        double norm, err = gradient_error(m, 0.1f, &norm);
        if (!(err < 2e-3)) printf("  model %d grouped: worst relative error %g\n", mi, err);
        CR_CHECK(err < 2e-3);
        CR_CHECK(norm > 1.0);
    }
}

/* A row used twice in a batch gets the sum of its two triples' gradients
 * (the batch call adds; it does not overwrite). */
static void test_gradient_accumulates(void) {
    for (int mi = 0; mi < NMODELS; mi++) {
        cr_kge_model m = MODELS[mi];
        random_batch(m, 31);
        int64_t rc = rel_cols(m);
        static float g2[NE * D], g1[NE * D], r2[NR * D * D], r1[NR * D * D];
        memset(g2, 0, sizeof g2), memset(g1, 0, sizeof g1), memset(r2, 0, sizeof r2), memset(r1, 0, sizeof r1);
        cr_mat E = {NE, D, Ed}, R = {NR, rc, Rd};
        cr_mat G2 = {NE, D, g2}, G1 = {NE, D, g1}, R2 = {NR, rc, r2}, R1 = {NR, rc, r1};
        int64_t s[2] = {1, 1}, r[2] = {2, 2}, o[2] = {3, 4};
        float y[2] = {1, 0};
        cr_kge_stats st = {0, 0, 0};
        cr_kge_loss_grad(m, &(cr_kge_batch){2, s, r, o, y}, &E, &R, 0.05f, &G2, &R2, &st);
        for (int i = 0; i < 2; i++)
            cr_kge_loss_grad(m, &(cr_kge_batch){1, s + i, r + i, o + i, y + i}, &E, &R, 0.05f, &G1, &R1, &st);
        CR_CHECK(st.n == 4);
        for (int k = 0; k < NE * D; k++) CR_CHECK_NEAR(g2[k], g1[k], 1e-6);
        for (int k = 0; k < NR * rc; k++) CR_CHECK_NEAR(r2[k], r1[k], 1e-6);
        double sum = 0;
        for (int k = 0; k < D; k++) sum += fabs(g2[1 * D + k]);
        CR_CHECK(sum > 0);
    }
}

/* The split matrix [A; B] (rows 0..1 in A, 2..NE-1 in B) gives the same
 * loss and gradient as the whole E, and the check counts rows over both. */
static void test_split_matches_whole(void) {
    for (int mi = 0; mi < NMODELS; mi++) {
        cr_kge_model m = MODELS[mi];
        random_batch(m, 5);
        int64_t rc = rel_cols(m);
        static float gw[NE * D], gs[NE * D], rw[NR * D * D], rs[NR * D * D];
        memset(gw, 0, sizeof gw), memset(gs, 0, sizeof gs), memset(rw, 0, sizeof rw), memset(rs, 0, sizeof rs);
        cr_mat E = {NE, D, Ed}, R = {NR, rc, Rd}, GW = {NE, D, gw}, RW = {NR, rc, rw}, RS = {NR, rc, rs};
        cr_mat A = {2, D, Ed}, B = {NE - 2, D, Ed + 2 * D}, GA = {2, D, gs}, GB = {NE - 2, D, gs + 2 * D};
        cr_kge_batch b = {NB, bs, br, bo, by};
        cr_kge_stats sw = {0, 0, 0}, ss = {0, 0, 0};
        cr_err e;
        CR_CHECK(cr_kge_check_split(m, &b, &A, &B, &R, &e) == 0);
        cr_kge_loss_grad(m, &b, &E, &R, 0.05f, &GW, &RW, &sw);
        cr_kge_loss_grad_split(m, &b, &A, &B, &R, 0.05f, &GA, &GB, &RS, &ss);
        CR_CHECK_NEAR(sw.loss, ss.loss, 1e-9);
        CR_CHECK_NEAR(sw.reg, ss.reg, 1e-9);
        for (int k = 0; k < NE * D; k++) CR_CHECK_NEAR(gw[k], gs[k], 1e-7);
        for (int k = 0; k < NR * rc; k++) CR_CHECK_NEAR(rw[k], rs[k], 1e-7);
        B.rows = NE - 3; /* row NE - 1 is past [A; B] now */
        int64_t s1 = NE - 1, r1 = 0, o1 = 0;
        float y1 = 1;
        CR_CHECK(cr_kge_check_split(m, &(cr_kge_batch){1, &s1, &r1, &o1, &y1}, &A, &B, &R, &e) == -1);
        CR_CHECK_STR(e.msg, "triple 1: entity row 5 out of range [0, 5)");
    }
}

/* Pinned values: score 0 costs log 2 either way; a huge score costs about
 * itself when wrong and about nothing when right, without overflow. */
static void test_loss_values(void) {
    float s[D] = {0}, r[D] = {0}, o[D] = {0}, big[D], ones[D];
    for (int k = 0; k < D; k++) big[k] = 30.0f, ones[k] = 1.0f;
    int64_t i0 = 0, i1 = 1;
    float y1 = 1, y0 = 0;
    float Ebuf[2 * D], Rbuf[D];
    memcpy(Ebuf, s, sizeof s), memcpy(Ebuf + D, o, sizeof o), memcpy(Rbuf, r, sizeof r);
    cr_mat E = {2, D, Ebuf}, R = {1, D, Rbuf};
    int64_t r0 = 0;
    for (int y = 0; y < 2; y++) {
        cr_kge_stats st = {0, 0, 0};
        cr_kge_loss_grad(CR_KGE_DISTMULT, &(cr_kge_batch){1, &i0, &r0, &i1, y ? &y1 : &y0}, &E, &R, 0, NULL, NULL, &st);
        CR_CHECK_NEAR(st.loss, log(2.0), 1e-7);
    }
    memcpy(Ebuf, big, sizeof big), memcpy(Ebuf + D, big, sizeof big), memcpy(Rbuf, ones, sizeof ones);
    float f = cr_kge_score(CR_KGE_DISTMULT, Ebuf, Rbuf, Ebuf + D, D); /* 5400 */
    cr_kge_stats neg = {0, 0, 0}, pos = {0, 0, 0};
    cr_kge_loss_grad(CR_KGE_DISTMULT, &(cr_kge_batch){1, &i0, &r0, &i1, &y0}, &E, &R, 0, NULL, NULL, &neg);
    cr_kge_loss_grad(CR_KGE_DISTMULT, &(cr_kge_batch){1, &i0, &r0, &i1, &y1}, &E, &R, 0, NULL, NULL, &pos);
    CR_CHECK_NEAR(neg.loss, f, 1e-3);
    CR_CHECK(pos.loss >= 0 && pos.loss < 1e-30);
    float g[2 * D] = {0}, gr[D] = {0};
    cr_mat GE = {2, D, g}, GR = {1, D, gr};
    cr_kge_loss_grad(CR_KGE_DISTMULT, &(cr_kge_batch){1, &i0, &r0, &i1, &y0}, &E, &R, 0, &GE, &GR, &neg);
    for (int k = 0; k < 2 * D; k++) CR_CHECK(isfinite(g[k]) && fabsf(g[k] - 30.0f) < 1e-3f); /* sigmoid = 1 */
    for (int k = 0; k < D; k++) CR_CHECK(fabsf(gr[k] - 900.0f) < 1e-2f);
    /* the L2 term: lambda (|s|^2 + |r|^2 + |o|^2) */
    cr_kge_stats st = {0, 0, 0};
    cr_kge_loss_grad(CR_KGE_DISTMULT, &(cr_kge_batch){1, &i0, &r0, &i1, &y0}, &E, &R, 0.5f, NULL, NULL, &st);
    CR_CHECK_NEAR(st.reg, 0.5 * (2 * D * 900.0 + D), 1e-6);
}

/* Scores of (s, r, x) and (x, r, o) for every entity x = cr_kge_score of
 * each triple, for every model and both directions. */
static void test_score_all_matches_score(void) {
    enum { NQ = 5, BIG = 37 };
    static float Eb[BIG * D], Rb[NR * D * D], out[NQ * BIG];
    int64_t anchor[NQ] = {0, 36, 5, 5, 17}, rel[NQ] = {0, 1, 2, 0, 1};
    for (int mi = 0; mi < NMODELS; mi++) {
        cr_kge_model m = MODELS[mi];
        int64_t rc = rel_cols(m);
        cr_rng g;
        cr_rng_seed(&g, 100 + (uint64_t)mi);
        for (int k = 0; k < BIG * D; k++) Eb[k] = (float)cr_rng_normal(&g);
        for (int k = 0; k < NR * rc; k++) Rb[k] = (float)cr_rng_normal(&g);
        cr_mat E = {BIG, D, Eb}, R = {NR, rc, Rb};
        cr_err e;
        CR_CHECK(cr_kge_check_queries(m, &E, &R, anchor, rel, NQ, &e) == 0);
        for (int dir = 0; dir < 2; dir++) {
            for (int k = 0; k < NQ * BIG; k++) out[k] = NAN;
            cr_kge_score_all(m, (cr_kge_dir)dir, &E, &R, anchor, rel, NQ, out);
            for (int i = 0; i < NQ; i++)
                for (int x = 0; x < BIG; x++) {
                    const float *a = Eb + anchor[i] * D, *r = Rb + rel[i] * rc, *c = Eb + x * D;
                    float want = dir == CR_KGE_TAIL ? cr_kge_score(m, a, r, c, D) : cr_kge_score(m, c, r, a, D);
                    CR_CHECK_NEAR(out[i * BIG + x], want, 1e-4 * (1 + fabsf(want)));
                }
        }
    }
}

static void test_check_messages(void) {
    random_batch(CR_KGE_DISTMULT, 3);
    cr_mat E = {NE, D, Ed}, R = {NR, D, Rd}, R2 = {NR, D * D, Rd}, E5 = {NE, 5, Ed};
    cr_kge_batch b = {NB, bs, br, bo, by};
    cr_err e;
    CR_CHECK(cr_kge_check(CR_KGE_DISTMULT, &b, &E, &R, &e) == 0);
    CR_CHECK(cr_kge_check(CR_KGE_RESCAL, &b, &E, &R2, &e) == 0);
    CR_CHECK(cr_kge_check(CR_KGE_RESCAL, &b, &E, &R, &e) == -1);
    CR_CHECK(strstr(e.msg, "expected 36 (d*d for rescal)"));
    cr_mat R5 = {NR, 5, Rd};
    CR_CHECK(cr_kge_check(CR_KGE_COMPLEX, &b, &E5, &R5, &e) == -1 && strstr(e.msg, "odd"));
    int64_t keep = bo[4];
    bo[4] = NE;
    CR_CHECK(cr_kge_check(CR_KGE_DISTMULT, &b, &E, &R, &e) == -1);
    CR_CHECK_STR(e.msg, "triple 5: entity row 6 out of range [0, 6)");
    bo[4] = keep;
    br[2] = -1;
    CR_CHECK(cr_kge_check(CR_KGE_DISTMULT, &b, &E, &R, &e) == -1);
    CR_CHECK_STR(e.msg, "triple 3: relation row -1 out of range [0, 3)");
    br[2] = 0;
    by[7] = 2;
    CR_CHECK(cr_kge_check(CR_KGE_DISTMULT, &b, &E, &R, &e) == -1 && strstr(e.msg, "triple 8: label 2"));
    by[7] = NAN;
    CR_CHECK(cr_kge_check(CR_KGE_DISTMULT, &b, &E, &R, &e) == -1);
    int64_t a = NE, r = 0;
    CR_CHECK(cr_kge_check_queries(CR_KGE_DISTMULT, &E, &R, &a, &r, 1, &e) == -1);
    CR_CHECK_STR(e.msg, "query 1: entity row 6 out of range [0, 6)");
}

/* A tiny separable problem: a chain of 8 entities, relation 0 links i to
 * i+1 (positives), i to i+3 (mod 8) is false (negatives). Plain SGD on the
 * batch's gradient must lower the loss by a third (TransE's score is <= 0,
 * so a positive costs at least log 2: no model reaches 0) and rank every
 * positive above the negative of its subject. */
static void test_sgd_reduces_loss(void) {
    enum { N = 8, DD = 8, P = N - 1, T = 2 * P };
    static float E[N * DD], R[DD * DD], gE[N * DD], gR[DD * DD];
    int64_t s[T], r[T], o[T];
    float y[T];
    for (int i = 0; i < P; i++) {
        s[i] = s[P + i] = i, r[i] = r[P + i] = 0;
        o[i] = i + 1, o[P + i] = (i + 3) % N;
        y[i] = 1, y[P + i] = 0;
    }
    for (int mi = 0; mi < NMODELS; mi++) {
        cr_kge_model m = MODELS[mi];
        int64_t rc = m == CR_KGE_RESCAL ? DD * DD : DD;
        cr_rng g;
        cr_rng_seed(&g, 5);
        for (int k = 0; k < N * DD; k++) E[k] = (float)(0.3 * cr_rng_normal(&g));
        for (int k = 0; k < rc; k++) R[k] = (float)(0.3 * cr_rng_normal(&g));
        cr_mat Em = {N, DD, E}, Rm = {1, rc, R}, GE = {N, DD, gE}, GR = {1, rc, gR};
        cr_kge_batch b = {T, s, r, o, y};
        double first = 0, last = 0;
        for (int step = 0; step < 400; step++) {
            memset(gE, 0, sizeof gE), memset(gR, 0, sizeof gR);
            cr_kge_stats st = {0, 0, 0};
            cr_kge_loss_grad(m, &b, &Em, &Rm, 1e-4f, &GE, &GR, &st);
            if (step == 0) first = st.loss;
            last = st.loss;
            for (int k = 0; k < N * DD; k++) E[k] -= 0.05f * gE[k];
            for (int k = 0; k < rc; k++) R[k] -= 0.05f * gR[k];
        }
        if (!(last < first / 1.5)) printf("  model %d: loss %g -> %g\n", mi, first, last);
        CR_CHECK(last < first / 1.5);
        for (int i = 0; i < P; i++)
            CR_CHECK(cr_kge_score(m, E + s[i] * DD, R, E + o[i] * DD, DD) >
                     cr_kge_score(m, E + s[i] * DD, R, E + o[P + i] * DD, DD));
    }
}

int main(void) {
    CR_RUN(test_gradient_check);
    CR_RUN(test_gradient_check_grouped);
    CR_RUN(test_gradient_accumulates);
    CR_RUN(test_split_matches_whole);
    CR_RUN(test_loss_values);
    CR_RUN(test_score_all_matches_score);
    CR_RUN(test_check_messages);
    CR_RUN(test_sgd_reduces_loss);
    return cr_test_done();
}
