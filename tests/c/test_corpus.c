/* Shared corpus pieces: dictionary, tokenizer, all-or-nothing outputs. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cr_test.h"
#include "data/cr_corpus.h"

static void join(void *ctx, const char *t, size_t n) {
    char *out = ctx;
    if (*out) strcat(out, " ");
    strncat(out, t, n);
}

static void test_tokens(void) {
    char out[256] = "";
    const char *s = "Don't STOP-me, caf\xc3\xa9! C12H25OH  (a.k.a.)\n";
    CR_CHECK(cr_corpus_tokens(s, strlen(s), join, out) == 9);
    CR_CHECK_STR(out, "don t stop me caf\xc3\xa9 c12h25oh a k a");
    out[0] = '\0';
    CR_CHECK(cr_corpus_tokens(" ,.;-- ", 7, join, out) == 0);
    CR_CHECK_STR(out, "");
}

static void test_dict(void) {
    cr_cdict *d = cr_cdict_new();
    char w[32];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(w, sizeof w, "w%d", i);
        CR_CHECK(cr_cdict_intern(d, w, (size_t)n) == (uint32_t)i);
        cr_cdict_counts(d)[i] += (uint64_t)i;
    }
    CR_CHECK(cr_cdict_size(d) == 20000);
    CR_CHECK(cr_cdict_intern(d, "w123", 4) == 123);
    CR_CHECK(cr_cdict_find(d, "w1234", 5) == 1234);
    CR_CHECK(cr_cdict_find(d, "w12345", 6) == 12345);
    CR_CHECK(cr_cdict_find(d, "w1234", 4) == 123); /* length-limited key "w123" */
    CR_CHECK(cr_cdict_find(d, "nope", 4) == UINT32_MAX);
    CR_CHECK_STR(cr_cdict_str(d, 19999), "w19999");
    CR_CHECK(cr_cdict_counts(d)[777] == 777);
    cr_cdict_destroy(&d);
    CR_CHECK(d == NULL);
    cr_cdict_destroy(&d); /* idempotent */
}

static void test_out(void) {
    char dir[] = "/tmp/cr_test_corpus_XXXXXX", path[128], tmp[140];
    CR_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cr_err e;
    cr_corpus_out o;
    CR_CHECK(cr_corpus_out_open(&o, path, &e) == 0);
    fputs("hello\n", o.f);
    CR_CHECK(access(path, F_OK) != 0); /* not visible before close */
    CR_CHECK(cr_corpus_out_close(&o, &e) == 0);
    CR_CHECK(access(path, F_OK) == 0 && access(tmp, F_OK) != 0);
    unlink(path);
    CR_CHECK(cr_corpus_out_open(&o, path, &e) == 0);
    fputs("partial\n", o.f);
    cr_corpus_out_abort(&o);
    CR_CHECK(access(path, F_OK) != 0 && access(tmp, F_OK) != 0);
    snprintf(path, sizeof path, "%s/missing/out.txt", dir);
    CR_CHECK(cr_corpus_out_open(&o, path, &e) == -1);
    CR_CHECK(strstr(e.msg, "/missing/out.txt.tmp: cannot write") != NULL);
    CR_CHECK(rmdir(dir) == 0);
}

int main(void) {
    CR_RUN(test_tokens);
    CR_RUN(test_dict);
    CR_RUN(test_out);
    return cr_test_done();
}
