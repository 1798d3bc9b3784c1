/* word2vec kernels: finite-difference gradient checks of the skip-gram and
 * CBOW losses, one SGD step against the gradient, the window shrink and the
 * subsampling against their definitions, and a tiny corpus on which training
 * pulls related words together. */
#include <math.h>
#include <stdlib.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "grad_util.h"
#include "kernels/cr_w2v.h"

#define V 7  /* rows of syn0 and syn1 */
#define D 5
#define NT 12 /* tokens */
#define NP 40 /* negative pool */

static float s0[V * D], s1[V * D];
static int pick_mode; /* 1: negatives picked at random from the pool (cr_w2v_negs.pick) */
static int32_t tin[NT], tout[NT], pool[NP];
static int64_t sent[] = {0, 5, 12};

static void random_setup(uint64_t seed) {
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (int k = 0; k < V * D; k++) s0[k] = (float)(0.6 * cr_rng_normal(&r));
    for (int k = 0; k < V * D; k++) s1[k] = (float)(0.6 * cr_rng_normal(&r));
    for (int i = 0; i < NT; i++) tin[i] = tout[i] = (int32_t)cr_rng_below(&r, V);
    for (int i = 0; i < NP; i++) pool[i] = (int32_t)cr_rng_below(&r, V);
}

typedef double (*loss_grad_fn)(const cr_w2v_batch *, const cr_w2v_params *, cr_w2v_negs *, cr_rng *, const cr_mat *,
                               const cr_mat *, cr_mat *, cr_mat *);

/* Loss (and gradient into g0, g1) with a fresh walk: same windows, same negatives. */
static double loss_at(loss_grad_fn fn, float *g0d, float *g1d) {
    static float z0[V * D], z1[V * D];
    cr_mat S0 = {V, D, s0}, S1 = {V, D, s1}, G0 = {V, D, g0d ? g0d : z0}, G1 = {V, D, g1d ? g1d : z1};
    cr_w2v_batch b = {NT, tin, tout, sent, 2};
    cr_w2v_params p = {3, 0.0f, 1, 1};
    cr_w2v_negs ng = {3, pool, NP, 0, 0, NULL, NULL, pick_mode};
    cr_rng r;
    cr_rng_seed(&r, 99);
    return fn(&b, &p, &ng, &r, &S0, &S1, &G0, &G1);
}

static double fd_loss(void *ctx) { return loss_at(*(loss_grad_fn *)ctx, NULL, NULL); }

/* (L(p+h) - L(p-h)) / 2h against the analytic gradient, every parameter;
 * returns the worst relative error, or -1 if the gradient is all zero. */
static double grad_error(loss_grad_fn fn) {
    static float g0[V * D], g1[V * D];
    memset(g0, 0, sizeof g0);
    memset(g1, 0, sizeof g1);
    loss_at(fn, g0, g1);
    double norm = 0;
    double w0 = fd_worst(s0, g0, V * D, 1e-2f, fd_loss, (void *)&fn, &norm);
    double w1 = fd_worst(s1, g1, V * D, 1e-2f, fd_loss, (void *)&fn, &norm);
    return norm > 0 ? fmax(w0, w1) : -1;
}

static void test_sgns_gradient(void) {
    random_setup(7);
    double err = grad_error(cr_w2v_sgns_loss_grad);
    CR_CHECK(err >= 0);
    CR_CHECK(err < 2e-3);
}

static void test_cbow_gradient(void) {
    random_setup(8);
    double err = grad_error(cr_w2v_cbow_loss_grad);
    CR_CHECK(err >= 0);
    CR_CHECK(err < 2e-3);
}

typedef void (*train_fn)(const cr_w2v_batch *, const cr_w2v_params *, cr_w2v_negs *, cr_rng *, cr_mat *, cr_mat *,
                         cr_w2v_stats *);

/* With a tiny alpha and the exact sigmoid, one training call moves every
 * parameter by -alpha * gradient (to first order) and reports the loss.
 * Sentences of two tokens and window 1: each CBOW context has one word, so
 * the tool's CBOW update is the gradient too. */
static void step_matches_gradient(train_fn train, loss_grad_fn lg) {
    random_setup(11);
    for (int k = 0; k < V * D; k++) s0[k] *= 0.5f, s1[k] *= 0.5f;
    static int64_t pairs2[] = {0, 2, 4, 6, 8, 10, 12};
    static float g0[V * D], g1[V * D], o0[V * D], o1[V * D];
    memset(g0, 0, sizeof g0);
    memset(g1, 0, sizeof g1);
    memcpy(o0, s0, sizeof s0);
    memcpy(o1, s1, sizeof s1);
    cr_mat S0 = {V, D, s0}, S1 = {V, D, s1}, G0 = {V, D, g0}, G1 = {V, D, g1};
    cr_w2v_batch b = {NT, tin, tout, pairs2, 6};
    const float alpha = 1e-4f;
    cr_w2v_params p = {1, alpha, 1, 1};
    cr_w2v_negs ng = {2, pool, NP, 0, 0, NULL, NULL, pick_mode};
    cr_rng r;
    cr_rng_seed(&r, 5);
    double l0 = lg(&b, &p, &ng, &r, &S0, &S1, &G0, &G1);
    cr_w2v_stats st = {0, 0};
    ng.pos = 0;
    cr_rng_seed(&r, 5);
    train(&b, &p, &ng, &r, &S0, &S1, &st);
    CR_CHECK(st.pairs > 0);
    CR_CHECK(ng.pos == (pick_mode ? 0 : (st.pairs * 2) % NP));
    CR_CHECK_NEAR(st.loss, l0, 1e-3 * l0);
    double worst = 0, gmax = 0;
    for (int k = 0; k < V * D; k++) {
        worst = fmax(worst, fabs((s0[k] - o0[k]) + alpha * g0[k]));
        worst = fmax(worst, fabs((s1[k] - o1[k]) + alpha * g1[k]));
        gmax = fmax(gmax, fmax(fabs(g0[k]), fabs(g1[k])));
    }
    CR_CHECK(gmax > 0.1);
    CR_CHECK(worst < 1e-3 * alpha * gmax);
}

static void test_sgns_step(void) { step_matches_gradient(cr_w2v_sgns, cr_w2v_sgns_loss_grad); }
static void test_cbow_step(void) { step_matches_gradient(cr_w2v_cbow, cr_w2v_cbow_loss_grad); }

/* Picked negatives (the model's pool mode): the same gradient checks, the
 * training step replays the loss's picks from the same rng state, and only
 * rows of the pool get a negative's gradient. */
static void test_pick(void) {
    pick_mode = 1;
    random_setup(21);
    double err = grad_error(cr_w2v_sgns_loss_grad);
    CR_CHECK(err >= 0 && err < 2e-3);
    random_setup(22);
    err = grad_error(cr_w2v_cbow_loss_grad);
    CR_CHECK(err >= 0 && err < 2e-3);
    step_matches_gradient(cr_w2v_sgns, cr_w2v_sgns_loss_grad);
    step_matches_gradient(cr_w2v_cbow, cr_w2v_cbow_loss_grad);
    random_setup(23);
    for (int i = 0; i < NT; i++) tout[i] = 0; /* every positive is row 0 */
    for (int i = 0; i < NP; i++) pool[i] = 1 + i % 2; /* negatives: rows 1 and 2 only */
    static float g0[V * D], g1[V * D];
    memset(g0, 0, sizeof g0);
    memset(g1, 0, sizeof g1);
    loss_at(cr_w2v_sgns_loss_grad, g0, g1);
    double other = 0, used = 0;
    for (int k = 0; k < V * D; k++) {
        if (k / D <= 2) used += fabs(g1[k]);
        else other += fabs(g1[k]);
    }
    CR_CHECK(used > 0 && other == 0);
    pick_mode = 0;
}

/* The table is the tool's: within its step of the exact value, clipped. */
static void test_sigmoid(void) {
    for (float f = -5.99f; f < 6.0f; f += 0.01f) {
        double ex = 1.0 / (1.0 + exp(-(double)f));
        /* the tool indexes with (f + 6) * 83 (integer 1000 / 6 / 2) into a table of step 0.012: the point read lies
         * up to 0.06 below f, and the slope is at most 1/4 */
        CR_CHECK_NEAR(cr_w2v_sigmoid(f, 0), ex, 0.016);
        CR_CHECK_NEAR(cr_w2v_sigmoid(f, 1), ex, 1e-6);
    }
    CR_CHECK(cr_w2v_sigmoid(6.5f, 0) == 1.0f && cr_w2v_sigmoid(6.5f, 1) == 1.0f);
    CR_CHECK(cr_w2v_sigmoid(-7.0f, 0) == 0.0f && cr_w2v_sigmoid(-7.0f, 1) == 0.0f);
    CR_CHECK_NEAR(cr_w2v_sigmoid(0.0f, 0), 1.0 / (1.0 + exp(0.024)), 1e-6); /* entry 498 */
}

/* Skip-gram pairs per center are min(i - lo, w - b) + min(hi - 1 - i, w - b)
 * with b = rand % w drawn per center from the same generator: replayed
 * exactly; on a long sentence the mean is w + 1 pairs per center. */
static void test_window_shrink(void) {
    enum { N = 20000, W = 5 };
    static int32_t zeros[N];
    static int64_t offs[] = {0, 3, 10, 10, 400, N};
    float a[2 * D] = {0}, c[2 * D] = {0};
    cr_mat S0 = {2, D, a}, S1 = {2, D, c};
    cr_w2v_batch b = {N, zeros, zeros, offs, 5};
    cr_w2v_params p = {W, 0.0f, 0, 0};
    cr_w2v_negs ng = {0, NULL, 0, 0, 0, NULL, NULL, 0};
    cr_rng r, replay;
    cr_rng_seed(&r, 42);
    cr_rng_seed(&replay, 42);
    cr_w2v_stats st = {0, 0};
    cr_w2v_sgns(&b, &p, &ng, &r, &S0, &S1, &st);
    int64_t want = 0;
    for (int s = 0; s < 5; s++)
        for (int64_t i = offs[s]; i < offs[s + 1]; i++) {
            int64_t w = W - (int64_t)cr_rng_below(&replay, W);
            want += (i - offs[s] < w ? i - offs[s] : w) + (offs[s + 1] - 1 - i < w ? offs[s + 1] - 1 - i : w);
        }
    CR_CHECK(st.pairs == want);
    CR_CHECK(cr_rng_u64(&r) == cr_rng_u64(&replay)); /* one draw per center, no more */
    /* CBOW: one update per center that has a context (every sentence here has two tokens or none) */
    cr_w2v_stats cs = {0, 0};
    cr_w2v_cbow(&b, &p, &ng, &r, &S0, &S1, &cs);
    CR_CHECK(cs.pairs == N);
    /* statistically, one long sentence: the effective window is uniform in 1..w, so about w + 1 pairs per
     * center (edges cost w (w + 1) / 3 pairs; the standard error is about 2.8 / sqrt(N)) */
    cr_w2v_stats one = {0, 0};
    b.sent = NULL;
    cr_w2v_sgns(&b, &p, &ng, &r, &S0, &S1, &one);
    CR_CHECK_NEAR((double)one.pairs / N, W + 1, 0.06);
    CR_CHECK(fabs((double)one.pairs / N - W) > 0.5); /* not a fixed window of w (2 w pairs) nor w/2 */
}

/* Keep probability is the tool's formula; the kept fraction of a frequent
 * word matches it (binomial, 5 sigma); rare words are always kept. */
static void test_subsample(void) {
    CR_CHECK_NEAR(cr_w2v_keep_prob(1000, 1000000, 1e-4), (sqrt(1000.0 / 100) + 1) * 100 / 1000, 1e-12);
    CR_CHECK(cr_w2v_keep_prob(10, 1000000, 1e-4) == 1.0);
    CR_CHECK(cr_w2v_keep_prob(1000, 1000000, 0) == 1.0);
    enum { N = 200000 };
    static int32_t w[N], kept[N], kept2[N];
    uint64_t counts[3] = {150000, 49000, 1000};
    for (int i = 0; i < N; i++) w[i] = i % 200 < 150 ? 0 : i % 200 < 199 ? 1 : 2;
    cr_rng r;
    cr_rng_seed(&r, 3);
    int64_t m = cr_w2v_subsample(w, N, counts, N, 1e-2, &r, kept);
    int64_t n[3] = {0, 0, 0};
    for (int64_t i = 0; i < m; i++) n[kept[i]]++;
    for (int k = 0; k < 3; k++) {
        double p = cr_w2v_keep_prob(counts[k], N, 1e-2), tot = (double)counts[k];
        CR_CHECK(fabs(n[k] - p * tot) <= 5 * sqrt(tot * p * (1 - p)) + 1e-9);
    }
    CR_CHECK(n[2] == 1000);
    CR_CHECK(n[0] < 25000); /* the frequent word is mostly dropped */
    cr_rng_seed(&r, 3);
    CR_CHECK(cr_w2v_subsample(w, N, counts, N, 1e-2, &r, kept2) == m);
    CR_CHECK(memcmp(kept, kept2, (size_t)m * sizeof *kept) == 0);
    /* in place */
    cr_rng_seed(&r, 3);
    CR_CHECK(cr_w2v_subsample(w, N, counts, N, 1e-2, &r, w) == m && memcmp(w, kept, (size_t)m * sizeof *w) == 0);
}

static void test_init(void) {
    static float a[50 * 8], c[50 * 8];
    for (int k = 0; k < 400; k++) c[k] = 1;
    cr_mat A = {50, 8, a}, C = {50, 8, c};
    cr_rng r;
    cr_rng_seed(&r, 1);
    cr_w2v_init(&A, &C, &r);
    double lo = 1, hi = -1;
    for (int k = 0; k < 400; k++) {
        lo = fmin(lo, a[k]);
        hi = fmax(hi, a[k]);
        CR_CHECK(c[k] == 0.0f);
    }
    CR_CHECK(lo >= -0.5 / 8 && hi < 0.5 / 8);
    CR_CHECK(lo < -0.4 / 8 && hi > 0.4 / 8);
}

static void test_check(void) {
    random_setup(1);
    cr_w2v_batch b = {NT, tin, tout, sent, 2};
    cr_w2v_negs ng = {3, pool, NP, 0, 0, NULL, NULL, 0};
    const char *why;
    CR_CHECK(cr_w2v_check(&b, &ng, V, V, &why) == 0);
    pool[3] = V;
    CR_CHECK(cr_w2v_check(&b, &ng, V, V, &why) == -1);
    CR_CHECK_STR(why, "a negative row is out of range");
    pool[3] = 0;
    ng.per_position = 1;
    CR_CHECK(cr_w2v_check(&b, &ng, V, V, &why) == 0); /* 40 >= 12 * 3 */
    ng.k = 4;
    CR_CHECK(cr_w2v_check(&b, &ng, V, V, &why) == -1);
    CR_CHECK_STR(why, "fewer negatives than tokens * k");
    ng = (cr_w2v_negs){3, pool, NP, 0, 0, NULL, NULL, 0};
    int64_t bad[] = {0, 7, 5};
    b.sent = bad;
    CR_CHECK(cr_w2v_check(&b, &ng, V, V, &why) == -1);
    tin[0] = -1;
    b.sent = sent;
    CR_CHECK(cr_w2v_check(&b, &ng, V, V, &why) == -1);
    CR_CHECK_STR(why, "an input row is out of range");
}

/* ---- tiny corpus: two topics of five words each ---- */

static int32_t draw_uniform(void *ctx) { return (int32_t)cr_rng_below(ctx, 10); }

/* Mean cosine within the topics minus across them, of syn0's 10 rows. */
static double topic_gap(const float *x, int d) {
    double in = 0, out = 0;
    int nin = 0, nout = 0;
    for (int i = 0; i < 10; i++)
        for (int j = i + 1; j < 10; j++) {
            const float *a = x + i * d, *c = x + j * d;
            double ab = 0, aa = 0, cc = 0;
            for (int k = 0; k < d; k++) ab += a[k] * c[k], aa += a[k] * a[k], cc += c[k] * c[k];
            double cs = ab / sqrt(aa * cc + 1e-30);
            if ((i < 5) == (j < 5)) in += cs, nin++;
            else out += cs, nout++;
        }
    return in / nin - out / nout;
}

static double train_topics(train_fn train) {
    enum { D2 = 10, S = 400, L = 8 };
    static float a[10 * D2], c[10 * D2];
    static int32_t toks[S * L];
    static int64_t offs[S + 1];
    cr_mat A = {10, D2, a}, C = {10, D2, c};
    cr_rng r, nr;
    cr_rng_seed(&r, 17);
    cr_rng_seed(&nr, 18);
    cr_w2v_init(&A, &C, &r);
    for (int s = 0; s < S; s++) {
        offs[s] = s * L;
        for (int i = 0; i < L; i++) toks[s * L + i] = (int32_t)((s % 2) * 5 + cr_rng_below(&r, 5));
    }
    offs[S] = S * L;
    cr_w2v_batch b = {S * L, toks, toks, offs, S};
    cr_w2v_negs ng = {3, NULL, 0, 0, 0, draw_uniform, &nr, 0};
    cr_w2v_stats st = {0, 0}, first = {0, 0};
    for (int ep = 0; ep < 20; ep++) {
        cr_w2v_params p = {2, 0.025f * (1.0f - ep / 20.0f), 0, 1};
        cr_w2v_stats e = {0, 0};
        train(&b, &p, &ng, &r, &A, &C, &e);
        if (ep == 0) first = e;
        st = e;
    }
    if (!(st.loss / st.pairs < first.loss / first.pairs)) return -1;
    return topic_gap(a, D2);
}

static void test_sgns_topics(void) { CR_CHECK(train_topics(cr_w2v_sgns) > 0.5); }
static void test_cbow_topics(void) { CR_CHECK(train_topics(cr_w2v_cbow) > 0.5); }

int main(void) {
    CR_RUN(test_sgns_gradient);
    CR_RUN(test_cbow_gradient);
    CR_RUN(test_sgns_step);
    CR_RUN(test_cbow_step);
    CR_RUN(test_pick);
    CR_RUN(test_sigmoid);
    CR_RUN(test_window_shrink);
    CR_RUN(test_subsample);
    CR_RUN(test_init);
    CR_RUN(test_check);
    CR_RUN(test_sgns_topics);
    CR_RUN(test_cbow_topics);
    return cr_test_done();
}
