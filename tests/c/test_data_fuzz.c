/* Mutation fuzzing of every reader: thousands of corrupted variants of a
 * valid file (bytes replaced by characters that matter to the parsers,
 * insertions, truncation). Each reader must either accept the input or
 * fail with a message that starts with the file name; never crash, hang or
 * read out of bounds (run under `make asan` for the last part). */
#include "base/cr_rng.h"
#include "cr_test.h"
#include "data/cr_graph.h"
#include "data/cr_libsvm.h"
#include "data/cr_mm.h"
#include "data/cr_text.h"
#include "data_util.h"
#include "partition/cr_bigraph.h"

typedef int (*reader)(const char *path, cr_err *e);

static int r_mm(const char *p, cr_err *e) {
    cr_coo m;
    int rc = cr_mm_load(p, CR_MM_NO_CACHE, NULL, NULL, &m, NULL, e);
    if (rc == 0) cr_coo_free(&m);
    return rc;
}
static int r_svm(const char *p, cr_err *e) {
    cr_csr m;
    int rc = cr_libsvm_load(p, 0, &m, e);
    if (rc == 0) cr_csr_free(&m);
    return rc;
}
static int r_edges(const char *p, cr_err *e) {
    cr_edges g;
    int rc = cr_edges_load(p, &g, e);
    if (rc == 0) cr_edges_free(&g);
    return rc;
}
static int r_del(const char *p, cr_err *e) {
    cr_triple_cols t;
    int rc = cr_triples_load_del(p, 0, 0, &t, e);
    if (rc == 0) cr_triples_free(&t);
    return rc;
}
static int r_names(const char *p, cr_err *e) {
    cr_dict a, b;
    cr_dict_init(&a);
    cr_dict_init(&b);
    cr_triple_cols t;
    int rc = cr_triples_load(p, &a, &b, 1, &t, e);
    if (rc == 0) cr_triples_free(&t);
    cr_dict_free(&a);
    cr_dict_free(&b);
    return rc;
}
static int r_text(const char *p, cr_err *e) {
    cr_dict v;
    cr_dict_init(&v);
    cr_corpus c;
    int rc = cr_text_load(p, &(cr_text_opts){2, 3, 0}, &c, &v, e);
    if (rc == 0) cr_corpus_free(&c);
    cr_dict_free(&v);
    return rc;
}
static int r_dict(const char *p, cr_err *e) {
    cr_dict d;
    cr_dict_init(&d);
    int rc = cr_dict_load(&d, p, e);
    cr_dict_free(&d);
    return rc;
}

/* The partition loader: the same readers with their relaxations on
 * (CR_LIBSVM_ANY_ORDER ..., CR_EDGES_EXTRA_FIELDS, CR_MM_SYMMETRIC). */
static int r_graph(const char *p, cr_bigraph_format fmt, cr_err *e) {
    cr_bigraph *g = cr_bigraph_load(p, fmt, e);
    int rc = g ? 0 : -1;
    cr_bigraph_destroy(&g);
    return rc;
}
static int r_graph_svm(const char *p, cr_err *e) { return r_graph(p, CR_BIGRAPH_LIBSVM, e); }
static int r_graph_mm(const char *p, cr_err *e) { return r_graph(p, CR_BIGRAPH_MM, e); }
static int r_graph_edges(const char *p, cr_err *e) { return r_graph(p, CR_BIGRAPH_EDGES, e); }

static const char alphabet[] = "0123456789 \t\n:-+.eE#%xnai\r\0";

/* n mutants of base through rd; counts accepted / rejected. */
static int fuzz(const char *name, const char *base, reader rd, long n, int *ok, int *bad) {
    cr_rng r;
    cr_rng_seed(&r, cr_test_fuzz_seed(77));
    size_t len = strlen(base);
    char *buf = malloc(len * 2 + 8);
    const char *p = tpath(name);
    for (long i = 0; i < n; i++) {
        memcpy(buf, base, len);
        size_t m = len;
        int edits = 1 + (int)cr_rng_below(&r, 4);
        for (int k = 0; k < edits; k++) {
            uint64_t how = cr_rng_below(&r, 10), at = cr_rng_below(&r, m + 1);
            char ch = alphabet[cr_rng_below(&r, sizeof alphabet)]; /* includes the final NUL */
            if (how < 6 && at < m) buf[at] = ch;
            else if (how < 8 && m < len * 2) { memmove(buf + at + 1, buf + at, m - at); buf[at] = ch; m++; }
            else if (how < 9 && at < m) { memmove(buf + at, buf + at + 1, m - at - 1); m--; }
            else m = at; /* truncate */
        }
        unlink(p); /* a fresh file: rewriting a truncated one makes ext4 flush on close */
        FILE *f = fopen(p, "wb");
        fwrite(buf, 1, m, f);
        fclose(f);
        cr_err e;
        e.msg[0] = '\0';
        int rc = rd(p, &e);
        if (rc == 0) (*ok)++;
        else if (rc == -1 && !strncmp(e.msg, p, strlen(p)) && e.msg[strlen(p)] == ':') (*bad)++;
        else {
            printf("  %s mutant %ld (seed %llu): rc %d, message '%s'\n", name, i, cr_test_fuzz_seed(77), rc, e.msg);
            free(buf);
            return -1;
        }
    }
    free(buf);
    return 0;
}

#define FUZZ(name, base, rd)                                          \
    do {                                                              \
        int ok = 0, bad = 0;                                          \
        CR_CHECK(rd(tput(name, base), NULL) == 0);                    \
        CR_CHECK(fuzz(name, base, rd, cr_test_fuzz_n(1500), &ok, &bad) == 0); \
        CR_CHECK(ok > 0 && bad > 0); /* the mutants exercise both */  \
    } while (0)

static void test_mm(void) {
    FUZZ("f.mmc", "%%MatrixMarket matrix coordinate real general\n% c\n4 5 4\n1 1 0.5\n2 5 -1e3\n4 2 7\n3 3 1\n", r_mm);
}
static void test_libsvm(void) { FUZZ("f.svm", "+1 1:0.5 3:2\n-1 qid:2 2:1e-2 # c\n0 4:4 5:5 9:1\n1\n", r_svm); }
static void test_edges(void) { FUZZ("f.edges", "# g\n0 1\n1 2\n2 0\n3 4 # x\n", r_edges); }
static void test_graph_formats(void) {
    FUZZ("g.svm", "1,2 3:1 1:0.5 3:2\n\n-1 qid:2 2:1e-2 # c\n0 4:4 5:5 9:1\n1\n", r_graph_svm);
    FUZZ("g.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% c\n4 4 4\n1 1 0.5\n4 2 -1e3\n3 2 7\n3 3 1\n",
         r_graph_mm);
    FUZZ("g.edges", "% konect\n0 1 0.5\n1 2\n2 0 3 1234\n3 4 # x\n", r_graph_edges);
}
static void test_del(void) { FUZZ("f.del", "0\t1\t2\n2\t0\t1\n1\t1\t1\n", r_del); }
static void test_names(void) { FUZZ("f.tsv", "a\tr\tb\nb\tq\tc\nc\tr\ta\n", r_names); }
static void test_text(void) { FUZZ("f.txt", "a b c a\nb a c\n\nc a b a b\n", r_text); }
static void test_dict(void) { FUZZ("f.map", "1\tb\n0\ta\n2\tc\n", r_dict); }

int main(void) {
    tdir_make();
    CR_RUN(test_mm);
    CR_RUN(test_libsvm);
    CR_RUN(test_edges);
    CR_RUN(test_graph_formats);
    CR_RUN(test_del);
    CR_RUN(test_names);
    CR_RUN(test_text);
    CR_RUN(test_dict);
    tdir_remove();
    return cr_test_done();
}
