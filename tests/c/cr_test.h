#ifndef CR_TEST_H
#define CR_TEST_H
/* Minimal unit-test harness. A test file defines `static void test_x(void)`
 * functions and a main() that calls CR_RUN(test_x) for each, then returns
 * cr_test_done(). Each CR_RUN prints "ok NAME" or "FAIL NAME: file:line: expr";
 * the last line is "N passed, N failed" (tests/run.sh adds these up). */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cr_test_passed, cr_test_failed, cr_test_cur_failed;

#define CR_CHECK(expr)                                                              \
    do {                                                                            \
        if (!(expr)) {                                                              \
            printf("  check failed: %s:%d: %s\n", __FILE__, __LINE__, #expr);     \
            cr_test_cur_failed = 1;                                                 \
            return;                                                                 \
        }                                                                           \
    } while (0)

#define CR_CHECK_NEAR(a, b, tol)                                                    \
    do {                                                                            \
        double cr_a_ = (double)(a), cr_b_ = (double)(b);                            \
        if (!(fabs(cr_a_ - cr_b_) <= (tol))) {                                      \
            printf("  check failed: %s:%d: %s = %.9g, %s = %.9g (tol %g)\n",        \
                   __FILE__, __LINE__, #a, cr_a_, #b, cr_b_, (double)(tol));        \
            cr_test_cur_failed = 1;                                                 \
            return;                                                                 \
        }                                                                           \
    } while (0)

#define CR_CHECK_STR(a, b)                                                          \
    do {                                                                            \
        const char *cr_sa_ = (a), *cr_sb_ = (b);                                    \
        if (strcmp(cr_sa_, cr_sb_) != 0) {                                          \
            printf("  check failed: %s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                   cr_sa_, cr_sb_);                                                 \
            cr_test_cur_failed = 1;                                                 \
            return;                                                                 \
        }                                                                           \
    } while (0)

#define CR_RUN(fn)                                                                  \
    do {                                                                            \
        cr_test_cur_failed = 0;                                                     \
        fn();                                                                       \
        if (cr_test_cur_failed) {                                                   \
            cr_test_failed++;                                                       \
            printf("FAIL %s\n", #fn);                                               \
        } else {                                                                    \
            cr_test_passed++;                                                       \
            printf("ok %s\n", #fn);                                                 \
        }                                                                           \
        fflush(stdout);                                                             \
    } while (0)

/* Write text to a new temp file; returns its path (a static buffer, valid
 * until the next call; the caller unlinks it), or NULL. */
static inline char *cr_test_tmpfile(const char *text) {
    static char path[64];
    strcpy(path, "/tmp/cr_test_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* Mutation fuzzers: how many mutants per case and which seed. make test
 * uses the defaults; make fuzz sets CRESCENT_FUZZ_N (many more mutants) and
 * CRESCENT_FUZZ_SEED (a fresh seed each run, printed so a failure can be
 * replayed). */
static inline long cr_test_fuzz_n(long dflt) {
    const char *s = getenv("CRESCENT_FUZZ_N");
    long n = s ? strtol(s, NULL, 10) : 0;
    return n > 0 ? n : dflt;
}
static inline unsigned long long cr_test_fuzz_seed(unsigned long long dflt) {
    const char *s = getenv("CRESCENT_FUZZ_SEED");
    return s && *s ? strtoull(s, NULL, 10) : dflt;
}

static inline int cr_test_done(void) {
    printf("%d passed, %d failed\n", cr_test_passed, cr_test_failed);
    return cr_test_failed ? 1 : 0;
}

#endif
