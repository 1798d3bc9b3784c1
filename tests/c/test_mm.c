/* MatrixMarket reader/writer/cache: round trip, every rejected input, cache
 * invalidation, and the zipf-mf generator's shape and determinism. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cr_test.h"
#include "data/cr_gen.h"
#include "data/cr_mm.h"

static char dir[64];

static const char *tmp(const char *name) {
    static char p[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

/* Load text as a file; return the error message ("" if it loaded). */
static const char *load_err(const char *text) {
    static cr_err e;
    const char *p = tmp("bad.mmc");
    put(p, text);
    cr_coo m;
    cr_err_clear(&e);
    if (cr_mm_load(p, CR_MM_NO_CACHE, NULL, NULL, &m, NULL, &e) == 0) cr_coo_free(&m);
    return e.msg;
}

#define HDR "%%MatrixMarket matrix coordinate real general\n"

static void test_round_trip(void) {
    int64_t r[] = {0, 2, 1, 2}, c[] = {1, 0, 3, 3};
    float v[] = {1.5f, -2.25f, 3e-7f, 123456.789f};
    cr_coo m = {3, 4, 4, r, c, v}, back;
    cr_err e;
    const char *p = tmp("rt.mmc");
    CR_CHECK(cr_mm_write(p, &m, 0, &e) == 0);
    CR_CHECK(cr_mm_load(p, CR_MM_NO_CACHE, NULL, NULL, &back, NULL, &e) == 0);
    CR_CHECK(back.rows == 3 && back.cols == 4 && back.nnz == 4);
    for (int i = 0; i < 4; i++) {
        CR_CHECK(back.row[i] == r[i] && back.col[i] == c[i]);
        CR_CHECK(back.val[i] == v[i]); /* %.9g round-trips float32 exactly */
    }
    cr_coo_free(&back);
}

static void test_pattern_comments_gzip(void) {
    const char *text = "%%MatrixMarket matrix coordinate pattern general\n% comment\n%\n2 2 2\n1 1\n\n2 2\n";
    const char *p = tmp("pat.mmc.gz");
    gzFile g = gzopen(p, "wb");
    gzputs(g, text);
    gzclose(g);
    cr_coo m;
    cr_err e;
    CR_CHECK(cr_mm_load(p, CR_MM_NO_CACHE, NULL, NULL, &m, NULL, &e) == 0);
    CR_CHECK(m.nnz == 2 && m.row[1] == 1 && m.col[1] == 1 && m.val[0] == 1.0f);
    cr_coo_free(&m);
}

static void test_errors(void) {
    char want[512];
    snprintf(want, sizeof want, "%s:1: not a MatrixMarket", tmp("bad.mmc"));
    CR_CHECK(!strncmp(load_err("1 2 3\n"), want, strlen(want)));
    CR_CHECK(strstr(load_err(""), "empty file"));
    CR_CHECK(strstr(load_err(HDR), ":2: missing size line"));
    CR_CHECK(strstr(load_err(HDR "2 x 1\n"), ":2: size line must be"));
    CR_CHECK(strstr(load_err("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 1\n"),
                    ":1: only 'general' symmetry"));
    CR_CHECK(strstr(load_err("%%MatrixMarket matrix array real general\n2 2\n"), ":1: only coordinate"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1 x 1\n"), ":3: column index is not an integer"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1 3 1\n"), ":3: column 3 out of range 1..2"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n0 1 1\n"), ":3: row 0 out of range 1..2"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n99999999999999999999 1 1\n"), ":3: row index beyond 64 bits"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1 1 nan\n"), ":3: value is NaN or infinite"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1 1 inf\n"), ":3: value is NaN or infinite"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1 1 abc\n"), ":3: value is not a number"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1 1\n"), ":3: missing value"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1\n"), ":3: missing column index"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1 1 1 1\n"), ":3: extra field"));
    CR_CHECK(strstr(load_err(HDR "2 2 1\n1 1 1\n2 2 2\n"), ":4: more entries than the 1 declared"));
    CR_CHECK(strstr(load_err(HDR "2 2 3\n1 1 1\n2 2 2\n"), ":4: file ends after 2 of 3 declared entries"));
    CR_CHECK(strstr(load_err(HDR "2 2 5\n"), "5 entries cannot fit a 2 x 2 matrix"));
    CR_CHECK(strstr(load_err(HDR "3000000000 2 1\n"), "beyond the supported"));
    /* a header claiming more entries than the file can hold fails before allocating them */
    CR_CHECK(strstr(load_err(HDR "100000 100000 2000000000\n1 1 1\n"), ":2: declares 2000000000 entries but the file has only"));
    {
        const char *p = tmp("nul.mmc");
        FILE *f = fopen(p, "wb");
        fwrite(HDR "2 2 1\n1 1 1\0junk\n", 1, sizeof HDR - 1 + 17, f);
        fclose(f);
        cr_coo m;
        cr_err e2;
        CR_CHECK(cr_mm_load(p, CR_MM_NO_CACHE, NULL, NULL, &m, NULL, &e2) == -1);
        CR_CHECK(strstr(e2.msg, "nul.mmc:3: NUL byte in line"));
    }
    cr_coo m;
    cr_err e;
    CR_CHECK(cr_mm_load(tmp("missing.mmc"), 0, NULL, NULL, &m, NULL, &e) == -1);
    CR_CHECK(strstr(e.msg, "missing.mmc: cannot open: No such file"));
}

/* Symmetric files only through cr_mm_open_flags(CR_MM_SYMMETRIC): entries
 * as stored, h.symmetric set; cr_mm_load still refuses them. */
static void test_symmetric(void) {
    const char *p = tmp("sym.mtx");
    put(p, "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 4\n3 1 -2\n");
    cr_mm_header h;
    cr_err e;
    cr_mm_reader *r = cr_mm_open_flags(p, CR_MM_SYMMETRIC, &h, &e);
    CR_CHECK(r && h.symmetric == 1 && h.rows == 3 && h.nnz == 2);
    int64_t row[4], col[4];
    float val[4];
    CR_CHECK(r && cr_mm_read(r, row, col, val, 4, &e) == 2 && row[1] == 2 && col[1] == 0 && val[1] == -2.0f);
    CR_CHECK(r && cr_mm_read(r, row, col, val, 4, &e) == 0);
    cr_mm_close(&r);
    put(p, "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n");
    r = cr_mm_open_flags(p, CR_MM_SYMMETRIC, &h, &e);
    CR_CHECK(r && h.symmetric == 1 && h.pattern == 1);
    cr_mm_close(&r);
    CR_CHECK(cr_mm_open(p, &h, &e) == NULL && strstr(e.msg, ":1: only 'general' symmetry is supported, not 'skew-symmetric'"));
    CR_CHECK(strstr(load_err("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 1\n"), ":1: only 'general'"));
    put(p, "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n");
    CR_CHECK(cr_mm_open_flags(p, CR_MM_SYMMETRIC, &h, &e) == NULL);
    CR_CHECK(strstr(e.msg, "sym.mtx:2: a symmetric matrix must be square, not 2 x 3"));
    put(p, "%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n1 1 1\n");
    CR_CHECK(cr_mm_open_flags(p, CR_MM_SYMMETRIC, &h, &e) == NULL && strstr(e.msg, "not 'hermitian'"));
}

static void test_truncated_gzip(void) {
    const char *p = tmp("trunc.mmc.gz");
    gzFile g = gzopen(p, "wb");
    gzputs(g, HDR "1000 1000 5000\n");
    for (int i = 0; i < 5000; i++) gzprintf(g, "%d %d %d.5\n", i % 1000 + 1, i / 5 + 1, i);
    gzclose(g);
    struct stat st;
    stat(p, &st);
    CR_CHECK(truncate(p, st.st_size / 2) == 0);
    cr_coo m;
    cr_err e;
    CR_CHECK(cr_mm_load(p, CR_MM_NO_CACHE, NULL, NULL, &m, NULL, &e) == -1);
    CR_CHECK(strstr(e.msg, "trunc.mmc.gz: truncated or corrupt gzip: ") != NULL);
}

static void test_cache(void) {
    const char *p = tmp("c.mmc");
    put(p, HDR "3 3 2\n1 1 1\n3 3 2\n");
    cr_coo m;
    cr_err e;
    int hit = -1;
    CR_CHECK(cr_mm_load(p, 0, NULL, NULL, &m, &hit, &e) == 0 && hit == 0);
    cr_coo_free(&m);
    CR_CHECK(cr_mm_load(p, 0, NULL, NULL, &m, &hit, &e) == 0 && hit == 1);
    CR_CHECK(m.nnz == 2 && m.row[1] == 2 && m.val[1] == 2.0f);
    cr_coo_free(&m);
    /* a changed source (different size) is re-parsed, never served stale */
    put(p, HDR "3 3 3\n1 1 1\n3 3 2\n2 1 7\n");
    CR_CHECK(cr_mm_load(p, 0, NULL, NULL, &m, &hit, &e) == 0 && hit == 0);
    CR_CHECK(m.nnz == 3 && m.val[2] == 7.0f);
    cr_coo_free(&m);
    /* a corrupt cache is ignored */
    char *cp = cr_mm_cache_path(p);
    FILE *f = fopen(cp, "r+b");
    fseek(f, -2, SEEK_END);
    fputc('X', f);
    fclose(f);
    free(cp);
    CR_CHECK(cr_mm_load(p, 0, NULL, NULL, &m, &hit, &e) == 0 && hit == 0 && m.val[2] == 7.0f);
    cr_coo_free(&m);
}

static void test_cache_dir(void) {
    const char *p = tmp("d.mmc");
    put(p, HDR "3 3 1\n2 2 5\n");
    char cdir[300];
    snprintf(cdir, sizeof cdir, "%s/cache", dir);
    mkdir(cdir, 0777);
    setenv("CRESCENT_CACHE_DIR", cdir, 1);
    char *cp = cr_mm_cache_path(p);
    CR_CHECK(!strncmp(cp, cdir, strlen(cdir)) && strstr(cp, "/d.mmc.") && strstr(cp, ".crbin"));
    cr_coo m;
    cr_err e;
    int hit;
    CR_CHECK(cr_mm_load(p, 0, NULL, NULL, &m, &hit, &e) == 0 && hit == 0);
    cr_coo_free(&m);
    CR_CHECK(access(cp, F_OK) == 0);
    CR_CHECK(cr_mm_load(p, 0, NULL, NULL, &m, &hit, &e) == 0 && hit == 1 && m.val[0] == 5.0f);
    cr_coo_free(&m);
    free(cp);
    /* an unwritable cache location only means no cache */
    setenv("CRESCENT_CACHE_DIR", "/proc/no-such-dir", 1);
    CR_CHECK(cr_mm_load(p, 0, NULL, NULL, &m, &hit, &e) == 0 && hit == 0 && m.nnz == 1);
    cr_coo_free(&m);
    unsetenv("CRESCENT_CACHE_DIR");
}

static void test_zipf_mf(void) {
    cr_zipf_mf_opts o = {500, 80, 4000, 4, 1.1, 0.1, 0.25, 7, tmp("zmf")};
    cr_gen_stats st;
    cr_err e;
    CR_CHECK(cr_gen_zipf_mf(&o, &st, &e) == 0);
    CR_CHECK(st.train == 3000 && st.test == 1000);
    cr_coo a, b;
    CR_CHECK(cr_mm_load(tmp("zmf/train.mmc"), CR_MM_NO_CACHE, NULL, NULL, &a, NULL, &e) == 0);
    CR_CHECK(cr_mm_load(tmp("zmf/test.mmc"), CR_MM_NO_CACHE, NULL, NULL, &b, NULL, &e) == 0);
    CR_CHECK(a.rows == 500 && a.cols == 80 && a.nnz == 3000 && b.nnz == 1000);
    /* cells are unique across both files, values have variance near 1 + noise^2 */
    char *seen = calloc(500 * 80, 1);
    double s2 = 0;
    int dup = 0;
    for (int64_t i = 0; i < a.nnz + b.nnz; i++) {
        cr_coo *m = i < a.nnz ? &a : &b;
        int64_t k = i < a.nnz ? i : i - a.nnz;
        dup += seen[m->row[k] * 80 + m->col[k]]++;
        s2 += (double)m->val[k] * m->val[k];
    }
    free(seen);
    CR_CHECK(dup == 0);
    CR_CHECK_NEAR(s2 / 4000, 1.01, 0.25);
    /* the same seed gives the same files */
    o.out_dir = tmp("zmf2");
    CR_CHECK(cr_gen_zipf_mf(&o, &st, &e) == 0);
    cr_coo c;
    CR_CHECK(cr_mm_load(tmp("zmf2/train.mmc"), CR_MM_NO_CACHE, NULL, NULL, &c, NULL, &e) == 0);
    CR_CHECK(c.nnz == a.nnz && !memcmp(c.row, a.row, 8 * (size_t)a.nnz) && !memcmp(c.val, a.val, 4 * (size_t)a.nnz));
    cr_coo_free(&a);
    cr_coo_free(&b);
    cr_coo_free(&c);
}

static void test_zipf_mf_impossible(void) {
    cr_err e;
    cr_gen_stats st;
    cr_zipf_mf_opts o = {10, 10, 101, 2, 1.1, 0.1, 0.1, 1, tmp("zx")};
    CR_CHECK(cr_gen_zipf_mf(&o, &st, &e) == -1 && strstr(e.msg, "more than rows x cols"));
    /* feasible in count but the zipf tail makes it impractical: must stop */
    cr_zipf_mf_opts q = {300, 300, 89000, 2, 3.0, 0.1, 0.1, 1, tmp("zy")};
    CR_CHECK(cr_gen_zipf_mf(&q, &st, &e) == -1 && strstr(e.msg, "gives only about"));
    CR_CHECK(access(tmp("zy/train.mmc"), F_OK) != 0); /* no partial output */
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/cr_test_mm.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    CR_RUN(test_round_trip);
    CR_RUN(test_pattern_comments_gzip);
    CR_RUN(test_errors);
    CR_RUN(test_symmetric);
    CR_RUN(test_truncated_gzip);
    CR_RUN(test_cache);
    CR_RUN(test_cache_dir);
    CR_RUN(test_zipf_mf);
    CR_RUN(test_zipf_mf_impossible);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    return cr_test_done();
}
