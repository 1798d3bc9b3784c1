/* Word analogy and synonym tests: hand-built vectors with known answers,
 * batched == naive == a double-precision reference on random inputs, and
 * file errors naming path:line. Question files go to a mkdtemp directory. */
#include <stdlib.h>
#include <unistd.h>

#include "base/cr_rng.h"
#include "cr_test.h"
#include "eval/cr_wordvec.h"

static char tmpdir[64];

static const char *write_file(const char *name, const char *text) {
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* a, b, c unit axes; d = 2 (b - a + c), so b - a + c points exactly at d;
 * x another axis, y = a + b. */
static const char *hw[6] = {"a", "b", "c", "d", "x", "y"};
static float hv[6 * 4] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 0, 0};

static void test_analogy_known(void) {
    const char *p = write_file("q.txt", ": capital-test\n"
                                        "A B C D\n"       /* right, case-insensitive */
                                        "a b c x\n"       /* wrong: d wins */
                                        "a b c zzz\n"     /* unknown word: not seen */
                                        ": gram1-test\r\n"
                                        "b a d c\r\n"     /* a - b + d is closest to c */
                                        "\n"
                                        "a  b\tc d\n");
    cr_mat V = {6, 4, hv};
    cr_analogy_result r;
    cr_err e;
    for (int naive = 0; naive <= 1; naive++) {
        cr_analogy_opts o = {0, naive, 0};
        CR_CHECK(cr_analogy_eval(&V, hw, 6, p, &o, &r, &e) == 0);
        CR_CHECK(r.sem_total == 3 && r.sem_seen == 2 && r.sem_correct == 1);
        CR_CHECK(r.syn_total == 2 && r.syn_seen == 2 && r.syn_correct == 2);
        CR_CHECK_NEAR(r.sem_acc, 0.5, 0);
        CR_CHECK_NEAR(r.syn_acc, 1, 0);
        CR_CHECK_NEAR(r.acc, 0.75, 0);
        CR_CHECK_NEAR(r.coverage, 0.8, 1e-15);
    }
    cr_analogy_opts o4 = {4, 0, 0}; /* only a, b, c, d known: "a b c x" unseen too */
    CR_CHECK(cr_analogy_eval(&V, hw, 6, p, &o4, &r, &e) == 0);
    CR_CHECK(r.sem_seen == 1 && r.sem_correct == 1 && r.syn_seen == 2);
}

static void test_analogy_random(void) {
    enum { NW = 300, D = 10, NQ = 600 };
    static char names[NW][16];
    static const char *w[NW];
    static float v[NW * D];
    cr_rng g;
    cr_rng_seed(&g, 11);
    for (int i = 0; i < NW; i++) {
        snprintf(names[i], sizeof names[i], "w%d", i);
        w[i] = names[i];
    }
    for (int i = 0; i < NW * D; i++) v[i] = (float)cr_rng_normal(&g);
    char path[128];
    snprintf(path, sizeof path, "%s/rand.txt", tmpdir);
    FILE *f = fopen(path, "w");
    int q[NQ][4];
    for (int i = 0; i < NQ; i++) {
        if (i % 100 == 0) fprintf(f, ": %s%d\n", i < 300 ? "sem" : "gram", i);
        for (int k = 0; k < 4; k++) q[i][k] = (int)cr_rng_below(&g, NW + 20); /* >= NW: unknown */
        fprintf(f, "w%d w%d w%d w%d\n", q[i][0], q[i][1], q[i][2], q[i][3]);
    }
    fclose(f);
    /* reference: double precision, restricted to the first 250 words */
    const int R = 250;
    int64_t seen = 0, right = 0;
    for (int i = 0; i < NQ; i++) {
        if (q[i][0] >= R || q[i][1] >= R || q[i][2] >= R || q[i][3] >= R) continue;
        seen++;
        double qv[D], best = -INFINITY;
        int arg = -1;
        for (int k = 0; k < D; k++) {
            double n[3] = {0, 0, 0};
            for (int m = 0; m < 3; m++)
                for (int kk = 0; kk < D; kk++) n[m] += (double)v[q[i][m] * D + kk] * v[q[i][m] * D + kk];
            qv[k] = v[q[i][1] * D + k] / sqrt(n[1]) - v[q[i][0] * D + k] / sqrt(n[0]) + v[q[i][2] * D + k] / sqrt(n[2]);
        }
        for (int j = 0; j < R; j++) {
            if (j == q[i][0] || j == q[i][1] || j == q[i][2]) continue;
            double dot = 0, nn = 0;
            for (int k = 0; k < D; k++) {
                dot += qv[k] * v[j * D + k];
                nn += (double)v[j * D + k] * v[j * D + k];
            }
            if (dot / sqrt(nn) > best) best = dot / sqrt(nn), arg = j;
        }
        right += arg == q[i][3];
    }
    cr_mat V = {NW, D, v};
    cr_err e;
    cr_analogy_result rb, rn, r7;
    cr_analogy_opts ob = {R, 0, 0}, on = {R, 1, 0}, o7 = {R, 0, 7};
    CR_CHECK(cr_analogy_eval(&V, w, NW, path, &ob, &rb, &e) == 0);
    CR_CHECK(cr_analogy_eval(&V, w, NW, path, &on, &rn, &e) == 0);
    CR_CHECK(cr_analogy_eval(&V, w, NW, path, &o7, &r7, &e) == 0);
    CR_CHECK(seen > 100 && right > 0);
    CR_CHECK(rb.sem_seen + rb.syn_seen == seen);
    CR_CHECK(rb.sem_correct + rb.syn_correct == right);
    CR_CHECK(rn.sem_correct == rb.sem_correct && rn.syn_correct == rb.syn_correct);
    CR_CHECK(r7.sem_correct == rb.sem_correct && r7.syn_correct == rb.syn_correct);
    CR_CHECK(rb.sem_total == 300 && rb.syn_total == 300);
}

static void test_analogy_errors(void) {
    cr_mat V = {6, 4, hv};
    cr_analogy_result r;
    cr_err e;
    char want[256];
    const char *p = write_file("bad.txt", ": capital\na b c d\na b c\n");
    CR_CHECK(cr_analogy_eval(&V, hw, 6, p, NULL, &r, &e) == -1);
    snprintf(want, sizeof want, "%s:3: expected 4 words, got 3", p);
    CR_CHECK_STR(e.msg, want);
    p = write_file("nohdr.txt", "a b c d\n");
    CR_CHECK(cr_analogy_eval(&V, hw, 6, p, NULL, &r, &e) == -1);
    snprintf(want, sizeof want, "%s:1: question before the first ': section' header", p);
    CR_CHECK_STR(e.msg, want);
    CR_CHECK(cr_analogy_eval(&V, hw, 5, p, NULL, &r, &e) == -1);
    CR_CHECK_STR(e.msg, "vectors have 6 rows but there are 5 words");
    snprintf(want, sizeof want, "%s/missing.txt", tmpdir);
    CR_CHECK(cr_analogy_eval(&V, hw, 6, want, NULL, &r, &e) == -1);
    CR_CHECK(strstr(e.msg, "missing.txt: cannot open: No such file or directory") != NULL);
}

static void test_synonyms(void) {
    /* big ~ large (same direction); small opposite; red, cat orthogonal */
    const char *w[6] = {"big", "large", "small", "red", "cat", "zero"};
    float v[6 * 3] = {1, 0.1f, 0, 2, 0.3f, 0, -1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    cr_mat V = {6, 3, v};
    const char *p = write_file("syn.txt", "big\tsmall\tlarge\tred\tcat\t2\n"      /* right */
                                          "big\tlarge\tsmall\tred\tcat\t3\n"      /* wrong */
                                          "\n"
                                          "big\tlarge\tsmall\tred\tdog\t1\n"      /* not covered */
                                          "zero\tred\tcat\tlarge\tsmall\t1\n");   /* zero vector: all 0, first wins */
    cr_synonym_result r;
    cr_err e;
    CR_CHECK(cr_synonyms_eval(&V, w, 6, p, 0, &r, &e) == 0);
    CR_CHECK(r.total == 4 && r.covered == 3 && r.correct == 2);
    CR_CHECK_NEAR(r.accuracy, 2.0 / 3, 1e-15);
    CR_CHECK_NEAR(r.coverage, 0.75, 0);
    CR_CHECK(cr_synonyms_eval(&V, w, 6, p, 4, &r, &e) == 0); /* cat, zero unknown */
    CR_CHECK(r.covered == 0 && r.accuracy == 0);
    char want[256];
    p = write_file("syn_bad.txt", "big\tsmall\tlarge\tred\tcat\t2\nbig small large red cat 2\n");
    CR_CHECK(cr_synonyms_eval(&V, w, 6, p, 0, &r, &e) == -1);
    snprintf(want, sizeof want, "%s:2: expected 6 TAB-separated fields (target, 4 choices, answer), got 1", p);
    CR_CHECK_STR(e.msg, want);
    p = write_file("syn_bad2.txt", "big\tsmall\tlarge\tred\tcat\t5\n");
    CR_CHECK(cr_synonyms_eval(&V, w, 6, p, 0, &r, &e) == -1);
    snprintf(want, sizeof want, "%s:1: answer '5' is not a choice number 1-4", p);
    CR_CHECK_STR(e.msg, want);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cr_eval_wv_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    CR_RUN(test_analogy_known);
    CR_RUN(test_analogy_random);
    CR_RUN(test_analogy_errors);
    CR_RUN(test_synonyms);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return cr_test_done();
}
