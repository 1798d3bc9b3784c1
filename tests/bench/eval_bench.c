/* Evaluator speed, batched BLAS path vs the straightforward per-item loop,
 * side by side in one process, medians of R runs each (alternating).
 *   eval_bench lp [R]                 filtered MRR, 5,000 test triples,
 *                                     40,000 entities, dim 100 (MODEL env:
 *                                     distmult (default), complex, transe_l2, ...)
 *   eval_bench analogy QUESTIONS [R]  all questions, dim 100, 30,000-word
 *                                     vocabulary covering the question words,
 *                                     random vectors with planted analogies
 * Both paths must give the same answer; the program exits 1 if not. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "base/cr_time.h"
#include "eval/cr_linkpred.h"
#include "eval/cr_wordvec.h"
#include "stat_util.h"

static int fail(const char *msg) {
    fprintf(stderr, "%s\n", msg);
    return 1;
}

static void report(const char *what, double *tb, double *tn, int runs) {
    double mb = st_median(tb, runs), mn = st_median(tn, runs);
    printf("%s: batched median %.3f s, naive median %.3f s (%d runs each): speedup %.1fx (target >= 5x: %s)\n",
           what, mb, mn, runs, mn / mb, mn / mb >= 5 ? "met" : "NOT met");
}

static int bench_lp(int runs) {
    enum { NE = 40000, NR = 200, D = 100, NT = 5000, NTRAIN = 200000 };
    const char *mname = getenv("MODEL") ? getenv("MODEL") : "distmult";
    cr_kge_model model;
    cr_err e;
    if (cr_kge_model_parse(mname, &model, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    cr_rng g;
    cr_rng_seed(&g, 42);
    int64_t rc = model == CR_KGE_RESCAL ? D * D : D;
    cr_mat E = {NE, D, cr_xmalloc(sizeof(float) * NE * D)}, R = {NR, rc, cr_xmalloc(sizeof(float) * NR * rc)};
    for (int64_t i = 0; i < NE * D; i++) E.data[i] = (float)(cr_rng_normal(&g) * 0.1);
    for (int64_t i = 0; i < NR * rc; i++) R.data[i] = (float)(cr_rng_normal(&g) * 0.1);
    int64_t *test = cr_xmalloc(sizeof(int64_t) * 3 * NT), *train = cr_xmalloc(sizeof(int64_t) * 3 * NTRAIN);
    for (int64_t i = 0; i < 3 * NT; i++) test[i] = (int64_t)cr_rng_below(&g, i % 3 == 1 ? NR : NE);
    for (int64_t i = 0; i < 3 * NTRAIN; i++) train[i] = (int64_t)cr_rng_below(&g, i % 3 == 1 ? NR : NE);
    cr_triples t = {test, NT}, f = {train, NTRAIN};
    double tb[16], tn[16];
    cr_lp_result rb, rn;
    for (int k = 0; k < runs; k++) {
        cr_lp_opts ob = {0, 0}, on = {1, 0};
        double t0 = cr_now();
        if (cr_linkpred_eval(model, &E, &R, &t, &f, 1, &ob, &rb, NULL, &e)) return fail(e.msg);
        double t1 = cr_now();
        if (cr_linkpred_eval(model, &E, &R, &t, &f, 1, &on, &rn, NULL, &e)) return fail(e.msg);
        tb[k] = t1 - t0;
        tn[k] = cr_now() - t1;
        printf("  run %d: batched %.3f s, naive %.3f s, MRR %.6f / %.6f\n", k + 1, tb[k], tn[k], rb.mrr, rn.mrr);
        fflush(stdout);
    }
    char what[160];
    snprintf(what, sizeof what, "link prediction (%s, %d test triples, %d entities, dim %d, %d filter triples)",
             mname, NT, NE, D, NTRAIN);
    report(what, tb, tn, runs);
    free(E.data), free(R.data), free(test), free(train);
    if (fabs(rb.mrr - rn.mrr) > 1e-4 * rb.mrr) return fail("MRR differs between the paths");
    return 0;
}

/* Give the random vectors some analogy structure so that both paths have
 * answers to agree on: per section a random offset r, and the first time a
 * word appears as b (or d) in "a b c d" its vector becomes a + r (c + r).
 * The question words are words[0..nq). */
static int plant(const char *questions, char **words, int64_t nq, cr_mat *V, cr_rng *g) {
    FILE *f = fopen(questions, "r");
    if (!f) return -1;
    int64_t d = V->cols, section = -1;
    float *r = cr_xmalloc(sizeof(float) * (size_t)d);
    char *planted = cr_xcalloc((size_t)nq, 1), line[512];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == ':') {
            section++;
            for (int64_t k = 0; k < d; k++) r[k] = (float)cr_rng_normal(g);
            continue;
        }
        int64_t id[4] = {-1, -1, -1, -1};
        int n = 0;
        for (char *save = NULL, *w = strtok_r(line, " \t\r\n", &save); w && n < 4;
             w = strtok_r(NULL, " \t\r\n", &save), n++) {
            for (char *p = w; *p; p++) *p = (char)tolower((unsigned char)*p);
            for (int64_t i = 0; i < nq && id[n] < 0; i++)
                if (strcmp(words[i], w) == 0) id[n] = i;
        }
        for (int pr = 0; pr < 4 && section >= 0; pr += 2) {
            int64_t from = id[pr], to = id[pr + 1];
            if (from < 0 || to < 0 || from == to || planted[to]) continue;
            for (int64_t k = 0; k < d; k++) V->data[to * d + k] = V->data[from * d + k] + r[k];
            planted[to] = 1;
        }
    }
    fclose(f);
    free(r);
    free(planted);
    return 0;
}

static int bench_analogy(const char *questions, int runs) {
    enum { NV = 30000, D = 100 };
    FILE *fq = fopen(questions, "r");
    if (!fq) return fail("cannot open the questions file");
    char **words = cr_xcalloc(NV, sizeof(char *));
    int64_t nw = 0;
    char line[512];
    while (fgets(line, sizeof line, fq)) { /* distinct question words (case-folded) */
        if (line[0] == ':') continue;
        for (char *save = NULL, *w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
            for (char *p = w; *p; p++) *p = (char)tolower((unsigned char)*p);
            int dup = 0;
            for (int64_t i = 0; i < nw && !dup; i++) dup = strcmp(words[i], w) == 0;
            if (!dup && nw < NV) words[nw++] = cr_xstrdup(w);
        }
    }
    fclose(fq);
    int64_t nq_words = nw;
    for (; nw < NV; nw++) {
        char buf[32];
        snprintf(buf, sizeof buf, "filler%lld", (long long)nw);
        words[nw] = cr_xstrdup(buf);
    }
    cr_rng g;
    cr_rng_seed(&g, 7);
    cr_mat V = {NV, D, cr_xmalloc(sizeof(float) * NV * D)};
    for (int64_t i = 0; i < NV * D; i++) V.data[i] = (float)cr_rng_normal(&g);
    if (plant(questions, words, nq_words, &V, &g)) return fail("cannot reread the questions file");
    for (int64_t i = NV - 1; i > 0; i--) { /* spread the question words over the vocabulary */
        int64_t j = (int64_t)cr_rng_below(&g, (uint64_t)i + 1);
        char *x = words[i];
        words[i] = words[j];
        words[j] = x;
        for (int64_t k = 0; k < D; k++) {
            float t = V.data[i * D + k];
            V.data[i * D + k] = V.data[j * D + k];
            V.data[j * D + k] = t;
        }
    }
    double tb[16], tn[16];
    cr_analogy_result rb, rn;
    cr_err e;
    for (int k = 0; k < runs; k++) {
        cr_analogy_opts ob = {NV, 0, 0}, on = {NV, 1, 0};
        double t0 = cr_now();
        if (cr_analogy_eval(&V, (const char *const *)words, NV, questions, &ob, &rb, &e))
            return fail(e.msg);
        double t1 = cr_now();
        if (cr_analogy_eval(&V, (const char *const *)words, NV, questions, &on, &rn, &e))
            return fail(e.msg);
        tb[k] = t1 - t0;
        tn[k] = cr_now() - t1;
        printf("  run %d: batched %.3f s, naive %.3f s, correct %lld / %lld of %lld seen\n", k + 1, tb[k], tn[k],
               (long long)(rb.sem_correct + rb.syn_correct), (long long)(rn.sem_correct + rn.syn_correct),
               (long long)(rb.sem_seen + rb.syn_seen));
        fflush(stdout);
    }
    char what[160];
    snprintf(what, sizeof what, "analogy (%lld questions, %d-word vocabulary with %lld question words, dim %d)",
             (long long)(rb.sem_total + rb.syn_total), NV, (long long)nq_words, D);
    report(what, tb, tn, runs);
    int same = rb.sem_correct + rb.syn_correct == rn.sem_correct + rn.syn_correct &&
               rb.sem_seen + rb.syn_seen == rn.sem_seen + rn.syn_seen;
    for (int64_t i = 0; i < NV; i++) free(words[i]);
    free(words), free(V.data);
    if (!same) return fail("results differ between the paths");
    return 0;
}

int main(int argc, char **argv) {
    int runs;
    if (argc >= 2 && strcmp(argv[1], "lp") == 0) {
        runs = argc > 2 ? atoi(argv[2]) : 3;
        return bench_lp(runs < 1 ? 1 : runs > 16 ? 16 : runs);
    }
    if (argc >= 3 && strcmp(argv[1], "analogy") == 0) {
        runs = argc > 3 ? atoi(argv[3]) : 3;
        return bench_analogy(argv[2], runs < 1 ? 1 : runs > 16 ? 16 : runs);
    }
    fprintf(stderr, "usage: eval_bench lp [RUNS] | eval_bench analogy QUESTIONS [RUNS]\n");
    return 2;
}
