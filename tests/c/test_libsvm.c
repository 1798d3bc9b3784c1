/* LIBSVM reader/writer: CSR contents, round trip, gzip, every rejected input. */
#include "cr_test.h"
#include "data/cr_libsvm.h"
#include "data_util.h"

static const char *err_of(const char *text, int64_t features) {
    static cr_err e;
    cr_csr m;
    cr_err_clear(&e);
    if (cr_libsvm_load(tput("bad.svm", text), features, &m, &e) == 0) cr_csr_free(&m);
    return e.msg;
}

static void test_read(void) {
    const char *p = tput("a.svm", "+1 qid:3 1:0.5 4:2 # comment\n# only a comment\n-1\n0 2:1e-3 7:-4\n");
    cr_csr m;
    cr_err e;
    CR_CHECK(cr_libsvm_load(p, 0, &m, &e) == 0);
    CR_CHECK(m.rows == 3 && m.cols == 7 && m.nnz == 4);
    CR_CHECK(m.ptr[0] == 0 && m.ptr[1] == 2 && m.ptr[2] == 2 && m.ptr[3] == 4);
    CR_CHECK(m.idx[0] == 0 && m.idx[1] == 3 && m.idx[2] == 1 && m.idx[3] == 6);
    CR_CHECK(m.val[1] == 2.0f && m.val[2] == 1e-3f && m.label[1] == -1.0f && m.label[2] == 0.0f);
    CR_CHECK(m.val[3] == -4.0f);
    /* round trip through the writer, also through gzip */
    CR_CHECK(cr_libsvm_write(tpath("b.svm"), &m, &e) == 0);
    cr_csr b;
    CR_CHECK(cr_libsvm_load(tpath("b.svm"), 10, &b, &e) == 0);
    CR_CHECK(b.rows == 3 && b.cols == 10 && b.nnz == 4);
    CR_CHECK(!memcmp(b.ptr, m.ptr, 4 * 8) && !memcmp(b.idx, m.idx, 4 * 8) && !memcmp(b.val, m.val, 4 * 4));
    CR_CHECK(!memcmp(b.label, m.label, 3 * 4));
    cr_csr_free(&b);
    gzFile g = gzopen(tpath("c.svm.gz"), "wb");
    gzputs(g, "1 3:1\n");
    gzclose(g);
    CR_CHECK(cr_libsvm_load(tpath("c.svm.gz"), 0, &b, &e) == 0 && b.rows == 1 && b.idx[0] == 2);
    cr_csr_free(&b);
    cr_csr_free(&m);
}

/* The integer fast path and strtof agree, including -0 and 9-digit values. */
static void test_numbers(void) {
    const char *p = tput("n.svm", "-0 1:-0 2:123456789 3:+7 4:1234567891 5:0.5 6:-12\n");
    cr_csr m;
    cr_err e;
    CR_CHECK(cr_libsvm_load(p, 0, &m, &e) == 0);
    CR_CHECK(signbit(m.label[0]) && signbit(m.val[0]) && m.val[0] == 0.0f);
    CR_CHECK(m.val[1] == strtof("123456789", NULL) && m.val[2] == 7.0f);
    CR_CHECK(m.val[3] == strtof("1234567891", NULL) && m.val[4] == 0.5f && m.val[5] == -12.0f);
    cr_csr_free(&m);
}

typedef struct seen {
    int64_t rows, nnz, idsum;
    float labels;
} seen;

static int count_row(void *ud, int64_t row, float label, const int64_t *idx, const float *val, int64_t n,
                     cr_err *e) {
    (void)val, (void)e;
    seen *s = ud;
    s->rows = row + 1;
    s->nnz += n;
    s->labels += label;
    for (int64_t k = 0; k < n; k++) s->idsum += idx[k];
    return 0;
}

/* The streaming form and its relaxations, each refused without its flag. */
static void test_scan_flags(void) {
    const char *p = tput("f.svm", "1,2 3:1 1:1 3:2\n\n-1\n");
    seen s = {0, 0, 0, 0};
    int64_t cols = 0;
    cr_err e;
    int all = CR_LIBSVM_ANY_ORDER | CR_LIBSVM_SKIP_BLANK | CR_LIBSVM_MULTILABEL;
    CR_CHECK(cr_libsvm_scan(p, 0, all, count_row, &s, &cols, &e) == 0);
    CR_CHECK(s.rows == 2 && s.nnz == 3 && s.idsum == 2 + 0 + 2 && s.labels == 0.0f && cols == 3);
    CR_CHECK(cr_libsvm_scan(p, 0, all & ~CR_LIBSVM_MULTILABEL, count_row, &s, NULL, &e) == -1);
    CR_CHECK(strstr(e.msg, "f.svm:1: label is not a number"));
    CR_CHECK(cr_libsvm_scan(p, 0, all & ~CR_LIBSVM_ANY_ORDER, count_row, &s, NULL, &e) == -1);
    CR_CHECK(strstr(e.msg, "f.svm:1: feature ids must increase (1 after 3)"));
    CR_CHECK(cr_libsvm_scan(p, 0, all & ~CR_LIBSVM_SKIP_BLANK, count_row, &s, NULL, &e) == -1);
    CR_CHECK(strstr(e.msg, "f.svm:2: empty line"));
    p = tput("g.svm", "1,x 1:1\n");
    CR_CHECK(cr_libsvm_scan(p, 0, all, count_row, &s, NULL, &e) == -1 && strstr(e.msg, ":1: label is not a number"));
    /* 18 digits take the integer fast path, 19 and more go through strtoll */
    p = tput("h.svm", "1 000000000000000003:1 0000000000000000004:1\n");
    s = (seen){0, 0, 0, 0};
    CR_CHECK(cr_libsvm_scan(p, 0, 0, count_row, &s, &cols, &e) == 0 && s.idsum == 2 + 3 && cols == 4);
}

static void test_errors(void) {
    CR_CHECK(strstr(err_of("1:1 2:1\n", 0), "bad.svm:1: missing label before features"));
    CR_CHECK(strstr(err_of("1 1:1\nx 2:1\n", 0), "bad.svm:2: label is not a number"));
    CR_CHECK(strstr(err_of("1 1:1\n\n1 2:1\n", 0), ":2: empty line"));
    CR_CHECK(strstr(err_of("1 a:1\n", 0), ":1: expected ID:VALUE"));
    CR_CHECK(strstr(err_of("1 3\n", 0), ":1: expected ID:VALUE"));
    CR_CHECK(strstr(err_of("1 0:1\n", 0), ":1: feature id 0:1 out of range"));
    CR_CHECK(strstr(err_of("1 3000000000:1\n", 0), ":1: feature id 3000000000:1 out of range"));
    CR_CHECK(strstr(err_of("1 99999999999999999999:1\n", 0), ":1: feature id"));
    CR_CHECK(strstr(err_of("1 5:1\n", 4), ":1: feature id 5 beyond the declared 4"));
    CR_CHECK(strstr(err_of("1 3:1 2:1\n", 0), ":1: feature ids must increase (2 after 3)"));
    CR_CHECK(strstr(err_of("1 3:1 3:1\n", 0), ":1: feature ids must increase"));
    CR_CHECK(strstr(err_of("1 3:nan\n", 0), ":1: value of feature 3 is NaN or infinite"));
    CR_CHECK(strstr(err_of("1 3:1e99\n", 0), ":1: value of feature 3 is NaN or infinite"));
    CR_CHECK(strstr(err_of("inf 3:1\n", 0), ":1: label is NaN or infinite"));
    CR_CHECK(strstr(err_of("1 3:\n", 0), ":1: value of feature 3 is not a number"));
    CR_CHECK(strstr(err_of("1 3:1x\n", 0), ":1: value of feature 3 is not a number"));
    CR_CHECK(strstr(err_of("", 0), "bad.svm: empty file"));
    CR_CHECK(strstr(err_of("# nothing\n", 0), "bad.svm: empty file"));
    cr_csr m;
    cr_err e;
    CR_CHECK(cr_libsvm_load(tpath("none.svm"), 0, &m, &e) == -1 && strstr(e.msg, "none.svm: cannot open: No such file"));
    const char *p = tput_truncated_gz("t.svm.gz", "1 %d:1 2000000:3\n", 20000);
    CR_CHECK(cr_libsvm_load(p, 0, &m, &e) == -1 && strstr(e.msg, "t.svm.gz"));
}

int main(void) {
    tdir_make();
    CR_RUN(test_read);
    CR_RUN(test_numbers);
    CR_RUN(test_scan_flags);
    CR_RUN(test_errors);
    tdir_remove();
    return cr_test_done();
}
