/* Generators: the zipf sampler's distribution, bipartite density and
 * determinism in both output formats, and option validation. */
#include "cr_test.h"
#include "data/cr_gen.h"
#include "data/cr_libsvm.h"
#include "data/cr_mm.h"
#include "data_util.h"

static void test_zipf_sampler(void) {
    cr_zipf z;
    cr_err e;
    CR_CHECK(cr_zipf_init(&z, 1000, 1.1, &e) == 0);
    cr_rng r;
    cr_rng_seed(&r, 9);
    static int n[1000];
    memset(n, 0, sizeof n);
    for (int i = 0; i < 400000; i++) n[cr_zipf_draw(&z, &r)]++;
    double h = 0;
    for (int k = 1; k <= 1000; k++) h += pow(k, -1.1);
    CR_CHECK_NEAR(n[0] / 400000.0, 1 / h, 0.01);
    CR_CHECK_NEAR((double)n[0] / n[1], pow(2, 1.1), 0.1);
    CR_CHECK_NEAR((double)n[0] / n[9], pow(10, 1.1), 1.5);
    CR_CHECK(n[999] > 0);
    cr_zipf_free(&z);
    CR_CHECK(cr_zipf_init(&z, 0, 1.1, &e) == -1);
    CR_CHECK(cr_zipf_init(&z, 10, -1, &e) == -1);
}

static void test_bipartite_uniform(void) {
    cr_bipartite_opts o = {400, 300, 0.05, 0, 4, tpath("u.svm")};
    cr_gen_stats st;
    cr_err e;
    CR_CHECK(cr_gen_bipartite(&o, &st, &e) == 0);
    /* Bernoulli(0.05) on 120000 cells: 6000 +- 75 (sd) */
    CR_CHECK(st.train > 5700 && st.train < 6300);
    cr_csr m;
    CR_CHECK(cr_libsvm_load(o.out, 300, &m, &e) == 0);
    CR_CHECK(m.rows == 400 && m.nnz == st.train && m.val[0] == 1.0f);
    cr_csr_free(&m);
    o.out = tpath("u.mtx");
    CR_CHECK(cr_gen_bipartite(&o, &st, &e) == 0);
    cr_coo c;
    CR_CHECK(cr_mm_load(o.out, CR_MM_NO_CACHE, NULL, NULL, &c, NULL, &e) == 0);
    CR_CHECK(c.nnz == st.train && c.rows == 400 && c.cols == 300);
    for (int64_t i = 1; i < c.nnz; i++) /* sorted, distinct */
        CR_CHECK(c.row[i] * 300 + c.col[i] > c.row[i - 1] * 300 + c.col[i - 1]);
    cr_coo_free(&c);
    o.density = 1;
    CR_CHECK(cr_gen_bipartite(&o, &st, &e) == 0 && st.train == 120000);
    o.density = 0;
    CR_CHECK(cr_gen_bipartite(&o, &st, &e) == -1 && strstr(e.msg, "density"));
}

static void test_bipartite_zipf(void) {
    cr_bipartite_opts o = {1000, 200, 0.02, 1.1, 4, tpath("z.mtx")};
    cr_gen_stats st;
    cr_err e;
    CR_CHECK(cr_gen_bipartite(&o, &st, &e) == 0 && st.train == 4000);
    cr_coo c;
    CR_CHECK(cr_mm_load(o.out, CR_MM_NO_CACHE, NULL, NULL, &c, NULL, &e) == 0);
    int deg[200] = {0};
    for (int64_t i = 0; i < c.nnz; i++) deg[c.col[i]]++;
    CR_CHECK(deg[0] > 5 * deg[100]); /* skewed column degrees */
    cr_coo_free(&c);
    o.density = 0.9;
    o.zipf = 2;
    CR_CHECK(cr_gen_bipartite(&o, &st, &e) == -1 && strstr(e.msg, "give only about"));
}

static void test_zipf_mf_options(void) {
    cr_gen_stats st;
    cr_err e;
    cr_zipf_mf_opts o = {100, 100, 50, 0, 1.1, 0.1, 0.1, 1, tpath("x")};
    CR_CHECK(cr_gen_zipf_mf(&o, &st, &e) == -1 && strstr(e.msg, "--rank"));
    o.rank = 2;
    o.test_fraction = 1;
    CR_CHECK(cr_gen_zipf_mf(&o, &st, &e) == -1 && strstr(e.msg, "--test-fraction"));
    o.test_fraction = 0;
    CR_CHECK(cr_gen_zipf_mf(&o, &st, &e) == 0 && st.train == 50 && st.test == 0);
    o.out_dir = "/proc/no/such/dir";
    CR_CHECK(cr_gen_zipf_mf(&o, &st, &e) == -1 && strstr(e.msg, "/proc/no: cannot create directory: "));
    cr_bipartite_opts b = {10, 10, 0.5, 0, 1, "/nonexistent/b.svm"};
    CR_CHECK(cr_gen_bipartite(&b, &st, &e) == -1);
    CR_CHECK_STR(e.msg, "/nonexistent/b.svm: cannot create: No such file or directory");
}

int main(void) {
    tdir_make();
    CR_RUN(test_zipf_sampler);
    CR_RUN(test_bipartite_uniform);
    CR_RUN(test_bipartite_zipf);
    CR_RUN(test_zipf_mf_options);
    tdir_remove();
    return cr_test_done();
}
