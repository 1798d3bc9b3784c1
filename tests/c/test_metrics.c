/* Metrics against a brute-force recomputation from the definitions, the
 * random baseline, the method table and the graph loader. */
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "base/cr_rng.h"
#include "partition/cr_partition.h"

#include "cr_test.h"

static cr_bigraph *random_graph(cr_rng *r, uint32_t nu, uint32_t nv, uint64_t ne) {
    uint32_t *u = malloc(ne * sizeof *u), *v = malloc(ne * sizeof *v);
    for (uint64_t i = 0; i < ne; i++) u[i] = (uint32_t)cr_rng_below(r, nu), v[i] = (uint32_t)cr_rng_below(r, nv);
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(u, v, ne, nu, nv, &e);
    free(u), free(v);
    return g;
}

/* need[i][v] = 1 iff some example of machine i has v: sets straight from the
 * definition, then M_i, T_i by counting. */
static int brute_ok(const cr_bigraph *g, const cr_assign *p, const cr_part_metrics *m) {
    uint32_t k = p->k;
    char *need = calloc((size_t)k * g->nv + 1, 1);
    for (uint32_t u = 0; u < g->nu; u++)
        for (uint64_t j = g->u_off[u]; j < g->u_off[u + 1]; j++) need[(size_t)p->u_part[u] * g->nv + g->u_adj[j]] = 1;
    uint64_t tmax = 0, tsum = 0, mmax = 0, load = 0;
    int ok = 1;
    for (uint32_t i = 0; i < k; i++) {
        uint64_t mi = 0, pulls = 0, serves = 0, cnt = 0;
        for (uint32_t v = 0; v < g->nv; v++) {
            if (need[(size_t)i * g->nv + v]) {
                mi++;
                if (p->v_part[v] != i) pulls++;
            }
            if (p->v_part[v] == i)
                for (uint32_t j = 0; j < k; j++) serves += j != i && need[(size_t)j * g->nv + v];
        }
        for (uint32_t u = 0; u < g->nu; u++) cnt += p->u_part[u] == i;
        if (m->m[i] != mi || m->t[i] != pulls + serves || m->u_count[i] != cnt) ok = 0;
        mmax = mi > mmax ? mi : mmax, tmax = pulls + serves > tmax ? pulls + serves : tmax, tsum += pulls + serves;
        load = cnt > load ? cnt : load;
    }
    free(need);
    return ok && m->m_max == mmax && m->t_max == tmax && m->t_sum == tsum && m->load == load &&
           m->product == (double)load * (double)tmax;
}

static void test_metrics_brute_force(void) {
    cr_rng r;
    cr_rng_seed(&r, 7);
    for (int rep = 0; rep < 50; rep++) {
        uint32_t nu = 1 + (uint32_t)cr_rng_below(&r, 30), nv = 1 + (uint32_t)cr_rng_below(&r, 30);
        uint32_t k = 1 + (uint32_t)cr_rng_below(&r, 6);
        cr_bigraph *g = random_graph(&r, nu, nv, cr_rng_below(&r, 120));
        cr_assign *p = cr_assign_new(k, nu, nv);
        cr_part_opts o;
        cr_part_opts_default(&o);
        o.seed = (uint64_t)rep;
        cr_err e;
        CR_CHECK(cr_part_random(g, k, &o, p, &e) == 0);
        cr_part_metrics m;
        CR_CHECK(cr_part_metrics_compute(g, p, &m, &e) == 0);
        CR_CHECK(brute_ok(g, p, &m));
        cr_part_metrics_free(&m);
        cr_assign_destroy(&p);
        cr_bigraph_destroy(&g);
    }
}

static void test_metrics_rejects_bad_placement(void) {
    uint32_t u[] = {0, 1}, v[] = {0, 1};
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(u, v, 2, 0, 0, &e);
    cr_assign *p = cr_assign_new(2, 2, 2);
    p->u_part[0] = 0, p->u_part[1] = 5, p->v_part[0] = p->v_part[1] = 0;
    cr_part_metrics m;
    int rc = cr_part_metrics_compute(g, p, &m, &e);
    cr_assign_destroy(&p);
    cr_bigraph_destroy(&g);
    CR_CHECK(rc == -1);
    CR_CHECK_STR(e.msg, "example 1 assigned to machine 5 >= k = 2");
}

static void test_random_seeded(void) {
    cr_rng r;
    cr_rng_seed(&r, 3);
    cr_bigraph *g = random_graph(&r, 100, 80, 400);
    cr_assign *a = cr_assign_new(4, 100, 80), *b = cr_assign_new(4, 100, 80);
    cr_part_opts o;
    cr_part_opts_default(&o);
    cr_err e;
    CR_CHECK(cr_part_random(g, 4, &o, a, &e) == 0 && cr_part_random(g, 4, &o, b, &e) == 0);
    int same = !memcmp(a->u_part, b->u_part, 100 * 4) && !memcmp(a->v_part, b->v_part, 80 * 4);
    int used[4] = {0};
    for (int u = 0; u < 100; u++) used[a->u_part[u]] = 1;
    cr_assign_destroy(&a), cr_assign_destroy(&b), cr_bigraph_destroy(&g);
    CR_CHECK(same);
    CR_CHECK(used[0] && used[1] && used[2] && used[3]);
}

static void test_method_table(void) {
    int avail = -1;
    CR_CHECK(cr_part_method("random", &avail) == cr_part_random && avail == 1);
    CR_CHECK(cr_part_method("parsa", &avail) == cr_part_parsa && avail == 1);
    CR_CHECK(cr_part_method("tsh2", NULL) == cr_part_tsh2);
    CR_CHECK(cr_part_method("mbp", NULL) == cr_part_mbp && cr_part_method("dppa", NULL) == cr_part_dppa);
    CR_CHECK(cr_part_method("metis", &avail) == cr_part_metis && avail == cr_metis_available());
    CR_CHECK(cr_part_method("nope", &avail) == NULL && avail == 0);
    CR_CHECK_STR(cr_part_method_name(0), "random");
}

/* Load text written to a temp file as fmt; NULL (e filled) on error. The
 * file's name is kept in last_path for the expected error texts. */
static char last_path[64];

static cr_bigraph *load_text(const char *text, cr_bigraph_format fmt, cr_err *e) {
    snprintf(last_path, sizeof last_path, "%s", cr_test_tmpfile(text));
    cr_bigraph *g = cr_bigraph_load(last_path, fmt, e);
    unlink(last_path);
    return g;
}

/* Is g (destroyed here) a graph of nu x nv with ne edges? */
static int shape_is(cr_bigraph *g, uint32_t nu, uint32_t nv, uint64_t ne) {
    int ok = g && g->nu == nu && g->nv == nv && g->ne == ne;
    cr_bigraph_destroy(&g);
    return ok;
}

static void test_load_libsvm(void) {
    cr_err e;
    cr_bigraph *g = load_text("1 3:0.5 1:1\n# comment\n-1\n+1 2:1e-3 3:2 3:1\n", CR_BIGRAPH_LIBSVM, &e);
    /* feature ids are 1-based in the file (as cr.data.libsvm reads them): 3 keys */
    CR_CHECK(g && g->u_off[2] == g->u_off[1] && g->u_adj[0] == 0);
    CR_CHECK(shape_is(g, 3, 3, 4));
}

static void test_load_mm_and_edges(void) {
    cr_err e;
    cr_bigraph *g = load_text("%%MatrixMarket matrix coordinate real general\n% c\n3 4 3\n1 1 1.0\n3 4 2\n1 1 5\n",
                              CR_BIGRAPH_MM, &e);
    CR_CHECK(shape_is(g, 3, 4, 2));
    g = load_text("# graph\n0 1\n1 2\n2 2\n", CR_BIGRAPH_EDGES, &e);
    CR_CHECK(shape_is(g, 3, 3, 5)); /* 0-1, 1-0, 1-2, 2-1, 2-2 */
}

/* What the data readers accept for the partitioner: LIBSVM blank lines,
 * multi-labels, qid, unsorted and repeated ids; symmetric MatrixMarket;
 * weighted edge lists with KONECT '%' headers. */
static void test_load_relaxed_formats(void) {
    cr_err e;
    cr_bigraph *g = load_text("1 1:1\n\n2,3 qid:1 4:1 2:1 4:2\n0\n", CR_BIGRAPH_LIBSVM, &e);
    CR_CHECK(g && g->u_off[3] == g->u_off[2]); /* the label-only last line is an example */
    CR_CHECK(shape_is(g, 3, 4, 3));
    g = load_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n", CR_BIGRAPH_MM, &e);
    CR_CHECK(g && g->u_off[1] == 2); /* row 1: columns 1 and 2 */
    CR_CHECK(shape_is(g, 3, 3, 5));
    g = load_text("% sym unweighted\n0 1 0.5 1234\n2 1\t3\n", CR_BIGRAPH_EDGES, &e);
    CR_CHECK(shape_is(g, 3, 3, 4));
    /* gzip input, as every src/data reader takes it */
    char gz[] = "/tmp/cr_test_gz_XXXXXX";
    int fd = mkstemp(gz);
    gzFile z = fd >= 0 ? gzdopen(fd, "wb") : NULL;
    CR_CHECK(z != NULL);
    if (!z) return;
    gzputs(z, "1 2:1 5:1\n-1 1:1\n");
    gzclose(z);
    g = cr_bigraph_load(gz, CR_BIGRAPH_LIBSVM, &e);
    unlink(gz);
    CR_CHECK(shape_is(g, 2, 5, 3));
}

static void expect_error(const char *text, cr_bigraph_format fmt, const char *want_suffix) {
    cr_err e;
    CR_CHECK(load_text(text, fmt, &e) == NULL);
    char want[256];
    snprintf(want, sizeof want, "%s%s", last_path, want_suffix);
    CR_CHECK_STR(e.msg, want);
}

static void test_load_errors(void) {
    expect_error("1 1:1\n1 0:1\n", CR_BIGRAPH_LIBSVM, ":2: feature id 0:1 out of range 1..2147483647");
    expect_error("1 1:1\n1 x:2\n", CR_BIGRAPH_LIBSVM, ":2: expected ID:VALUE, got 'x:2'");
    expect_error("1 1:1\n1 4:abc\n", CR_BIGRAPH_LIBSVM, ":2: value of feature 4 is not a number");
    expect_error("1:1 2:1\n", CR_BIGRAPH_LIBSVM, ":1: missing label before features");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", CR_BIGRAPH_MM,
                 ":3: row 3 out of range 1..2");
    expect_error("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", CR_BIGRAPH_MM,
                 ":3: file ends after 1 of 2 declared entries");
    expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", CR_BIGRAPH_MM,
                 ":2: a symmetric matrix must be square, not 2 x 3");
    expect_error("# nothing\n\n", CR_BIGRAPH_LIBSVM, ": empty file (no samples)");
    expect_error("0 1\n1 -2\n", CR_BIGRAPH_EDGES, ":2: target id -2 out of range 0..2147483647");
    cr_err e;
    CR_CHECK(cr_bigraph_load("/nonexistent/g.txt", CR_BIGRAPH_LIBSVM, &e) == NULL);
    CR_CHECK_STR(e.msg, "/nonexistent/g.txt: cannot open: No such file or directory");
}

int main(void) {
    CR_RUN(test_metrics_brute_force);
    CR_RUN(test_metrics_rejects_bad_placement);
    CR_RUN(test_random_seeded);
    CR_RUN(test_method_table);
    CR_RUN(test_load_libsvm);
    CR_RUN(test_load_mm_and_edges);
    CR_RUN(test_load_relaxed_formats);
    CR_RUN(test_load_errors);
    return cr_test_done();
}
