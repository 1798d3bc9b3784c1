/* Link prediction: blocked BLAS path == naive loop == an independent
 * reference written here (double precision, complex.h for ComplEx, a linear
 * scan for filtering), plus hand-built cases with known ranks. */
#include <complex.h>
#include <stdlib.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "eval/cr_linkpred.h"

static double ref_score(cr_kge_model m, const cr_mat *E, const cr_mat *R, int64_t s, int64_t r, int64_t o) {
    int64_t d = E->cols;
    const float *es = cr_mat_row(E, s), *w = cr_mat_row(R, r), *eo = cr_mat_row(E, o);
    double acc = 0;
    if (m == CR_KGE_COMPLEX) {
        double complex z = 0;
        for (int64_t k = 0; k < d / 2; k++)
            z += (es[k] + I * es[d / 2 + k]) * (w[k] + I * w[d / 2 + k]) * conj(eo[k] + I * eo[d / 2 + k]);
        return creal(z);
    }
    if (m == CR_KGE_RESCAL) {
        for (int64_t i = 0; i < d; i++)
            for (int64_t j = 0; j < d; j++) acc += (double)es[i] * w[i * d + j] * eo[j];
        return acc;
    }
    for (int64_t k = 0; k < d; k++) {
        double x = (double)es[k] + w[k] - eo[k];
        if (m == CR_KGE_DISTMULT) acc += (double)es[k] * w[k] * eo[k];
        else if (m == CR_KGE_TRANSE_L1) acc += fabs(x);
        else acc += x * x;
    }
    return m == CR_KGE_DISTMULT ? acc : m == CR_KGE_TRANSE_L1 ? -acc : -sqrt(acc);
}

static int known(const cr_triples *lists, int nl, int64_t s, int64_t r, int64_t o) {
    for (int l = 0; l < nl; l++)
        for (int64_t i = 0; i < lists[l].n; i++) {
            const int64_t *x = lists[l].spo + 3 * i;
            if (x[0] == s && x[1] == r && x[2] == o) return 1;
        }
    return 0;
}

/* lists[0] is the test set, the rest filters. */
static double ref_rank(cr_kge_model m, const cr_mat *E, const cr_mat *R, const cr_triples *lists, int nl,
                       const int64_t *t, int head) {
    double st = ref_score(m, E, R, t[0], t[1], t[2]), rank = 1;
    for (int64_t x = 0; x < E->rows; x++) {
        int64_t s = head ? x : t[0], o = head ? t[2] : x;
        if (x == (head ? t[0] : t[2]) || known(lists, nl, s, t[1], o)) continue;
        double sc = ref_score(m, E, R, s, t[1], o);
        rank += sc > st ? 1 : sc == st ? 0.5 : 0;
    }
    return rank;
}

static void fill(cr_rng *g, cr_mat *m) {
    for (int64_t i = 0; i < m->rows * m->cols; i++) m->data[i] = (float)cr_rng_normal(g);
}

static void random_triples(cr_rng *g, int64_t *spo, int64_t n, int64_t ne, int64_t nr) {
    for (int64_t i = 0; i < n; i++) {
        spo[3 * i] = (int64_t)cr_rng_below(g, (uint64_t)ne);
        spo[3 * i + 1] = (int64_t)cr_rng_below(g, (uint64_t)nr);
        spo[3 * i + 2] = (int64_t)cr_rng_below(g, (uint64_t)ne);
    }
}

static void check_model(cr_kge_model m) {
    enum { NE = 57, NR = 4, D = 6, NT = 30, NF = 400 };
    cr_rng g;
    cr_rng_seed(&g, 7 + (uint64_t)m);
    int64_t rc = m == CR_KGE_RESCAL ? D * D : D;
    float ed[NE * D], rd[NR * D * D];
    cr_mat E = {NE, D, ed}, R = {NR, rc, rd};
    fill(&g, &E);
    fill(&g, &R);
    int64_t test[3 * NT], train[3 * NF];
    random_triples(&g, test, NT, NE, NR);
    random_triples(&g, train, NF, NE, NR);
    memcpy(train, test, 3 * sizeof(int64_t) * 5); /* a filter list may repeat test triples */
    cr_triples lists[2] = {{test, NT}, {train, NF}};
    double rb[2 * NT], rn[2 * NT], rb7[2 * NT];
    cr_lp_result res_b, res_n, res_7;
    cr_err e;
    cr_lp_opts naive = {1, 0}, blocked = {0, 0}, b7 = {0, 7};
    CR_CHECK(cr_linkpred_eval(m, &E, &R, &lists[0], &lists[1], 1, &blocked, &res_b, rb, &e) == 0);
    CR_CHECK(cr_linkpred_eval(m, &E, &R, &lists[0], &lists[1], 1, &naive, &res_n, rn, &e) == 0);
    CR_CHECK(cr_linkpred_eval(m, &E, &R, &lists[0], &lists[1], 1, &b7, &res_7, rb7, &e) == 0);
    for (int i = 0; i < NT; i++) {
        double want_t = ref_rank(m, &E, &R, lists, 2, test + 3 * i, 0);
        double want_h = ref_rank(m, &E, &R, lists, 2, test + 3 * i, 1);
        CR_CHECK_NEAR(rn[i], want_t, 0);
        CR_CHECK_NEAR(rn[NT + i], want_h, 0);
        CR_CHECK_NEAR(rb[i], want_t, 0);
        CR_CHECK_NEAR(rb[NT + i], want_h, 0);
        CR_CHECK_NEAR(rb7[i], want_t, 0);
        CR_CHECK_NEAR(rb7[NT + i], want_h, 0);
    }
    CR_CHECK_NEAR(res_b.mrr, res_n.mrr, 1e-12);
    CR_CHECK_NEAR(res_b.hits10, res_n.hits10, 1e-12);
    CR_CHECK(res_b.queries == 2 * NT);
    CR_CHECK(res_b.mrr > 0 && res_b.mrr <= 1);
}

static void test_complex_random(void) { check_model(CR_KGE_COMPLEX); }
static void test_distmult_random(void) { check_model(CR_KGE_DISTMULT); }
static void test_transe_l1_random(void) { check_model(CR_KGE_TRANSE_L1); }
static void test_transe_l2_random(void) { check_model(CR_KGE_TRANSE_L2); }
static void test_rescal_random(void) { check_model(CR_KGE_RESCAL); }

/* DistMult, d = 1, e_x = x + 1, w = 1: score(s, r, o) = (s+1)(o+1). Test
 * triple (0, 0, 2) among 6 entities: the tail query scores o+1 = 1..6, the
 * target has 3, entities 3, 4, 5 are higher -> rank 4; the head query scores
 * 3(s+1), the target s=0 is last -> rank 6. Filtering (0,0,4) and (3,0,2)
 * removes one higher candidate from each; making entity 5 equal to entity 2
 * turns a higher candidate of the tail query into a tie (half a rank). */
static void test_known_ranks(void) {
    float ed[6] = {1, 2, 3, 4, 5, 6}, rd[1] = {1};
    cr_mat E = {6, 1, ed}, R = {1, 1, rd};
    int64_t t[3] = {0, 0, 2}, f[6] = {0, 0, 4, 3, 0, 2};
    cr_triples test = {t, 1}, filt = {f, 2};
    double r[2];
    cr_lp_result res;
    cr_err e;
    for (int naive = 0; naive <= 1; naive++) {
        cr_lp_opts o = {naive, 0};
        ed[5] = 6;
        CR_CHECK(cr_linkpred_eval(CR_KGE_DISTMULT, &E, &R, &test, NULL, 0, &o, &res, r, &e) == 0);
        CR_CHECK_NEAR(r[0], 4, 0);
        CR_CHECK_NEAR(r[1], 6, 0);
        CR_CHECK_NEAR(res.mrr, (1.0 / 4 + 1.0 / 6) / 2, 1e-12);
        CR_CHECK_NEAR(res.hits3, 0, 0);
        CR_CHECK_NEAR(res.hits10, 1, 0);
        CR_CHECK(cr_linkpred_eval(CR_KGE_DISTMULT, &E, &R, &test, &filt, 1, &o, &res, r, &e) == 0);
        CR_CHECK_NEAR(r[0], 3, 0);
        CR_CHECK_NEAR(r[1], 5, 0);
        CR_CHECK_NEAR(res.hits3, 0.5, 0);
        ed[5] = 3; /* entity 5 ties with the target of the tail query */
        CR_CHECK(cr_linkpred_eval(CR_KGE_DISTMULT, &E, &R, &test, &filt, 1, &o, &res, r, &e) == 0);
        CR_CHECK_NEAR(r[0], 2.5, 0);
        CR_CHECK_NEAR(res.mrr_tail, 1 / 2.5, 1e-12);
    }
}

/* TransE with o = s + r exactly: the true entity is at distance 0, rank 1. */
static void test_transe_exact(void) {
    float ed[8] = {0, 0, 1, 0, 5, 5, -3, 2}, rd[2] = {1, 0};
    cr_mat E = {4, 2, ed}, R = {1, 2, rd};
    int64_t t[3] = {0, 0, 1};
    cr_triples test = {t, 1};
    double r[2];
    cr_lp_result res;
    cr_err e;
    CR_CHECK(cr_linkpred_eval(CR_KGE_TRANSE_L2, &E, &R, &test, NULL, 0, NULL, &res, r, &e) == 0);
    CR_CHECK_NEAR(res.mrr, 1, 0);
    CR_CHECK_NEAR(res.hits1, 1, 0);
    CR_CHECK(cr_linkpred_eval(CR_KGE_TRANSE_L1, &E, &R, &test, NULL, 0, NULL, &res, r, &e) == 0);
    CR_CHECK_NEAR(res.mr, 1, 0);
}

static void test_errors(void) {
    float ed[6] = {0}, rd[4] = {0};
    cr_mat E = {3, 2, ed}, R = {2, 2, rd}, R3 = {1, 3, rd};
    int64_t bad_e[3] = {0, 0, 3}, bad_r[3] = {0, 2, 1}, ok[3] = {0, 1, 2};
    cr_triples t1 = {bad_e, 1}, t2 = {bad_r, 1}, t3 = {ok, 1}, none = {ok, 0};
    cr_lp_result res;
    cr_err e;
    CR_CHECK(cr_linkpred_eval(CR_KGE_DISTMULT, &E, &R, &t1, NULL, 0, NULL, &res, NULL, &e) == -1);
    CR_CHECK_STR(e.msg, "test triple 1: entity id 3 out of range [0, 3)");
    CR_CHECK(cr_linkpred_eval(CR_KGE_DISTMULT, &E, &R, &t3, &t2, 1, NULL, &res, NULL, &e) == -1);
    CR_CHECK_STR(e.msg, "filter list 1 triple 1: relation id 2 out of range [0, 2)");
    CR_CHECK(cr_linkpred_eval(CR_KGE_DISTMULT, &E, &R3, &t3, NULL, 0, NULL, &res, NULL, &e) == -1);
    CR_CHECK_STR(e.msg, "relation matrix has 3 columns, expected 2 (the entity dimension)");
    CR_CHECK(cr_linkpred_eval(CR_KGE_RESCAL, &E, &R, &t3, NULL, 0, NULL, &res, NULL, &e) == -1);
    CR_CHECK_STR(e.msg, "relation matrix has 2 columns, expected 4 (d*d for rescal)");
    CR_CHECK(cr_linkpred_eval(CR_KGE_DISTMULT, &E, &R, &none, NULL, 0, NULL, &res, NULL, &e) == -1);
    CR_CHECK_STR(e.msg, "no test triples");
    cr_kge_model m;
    CR_CHECK(cr_kge_model_parse("transe_l2", &m, &e) == 0 && m == CR_KGE_TRANSE_L2);
    CR_CHECK(cr_kge_model_parse("hole", &m, &e) == -1);
    CR_CHECK_STR(e.msg, "unknown model 'hole' (complex, distmult, transe_l1, transe_l2, rescal)");
}

int main(void) {
    CR_RUN(test_complex_random);
    CR_RUN(test_distmult_random);
    CR_RUN(test_transe_l1_random);
    CR_RUN(test_transe_l2_random);
    CR_RUN(test_rescal_random);
    CR_RUN(test_known_ranks);
    CR_RUN(test_transe_exact);
    CR_RUN(test_errors);
    return cr_test_done();
}
