/* Shared corpus pieces: dictionary, tokenizer. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_utf8.h"
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

/* Unicode punctuation separates like its ASCII form; tokens stay UTF-8,
 * also when cut at 255 bytes. */
static void test_tokens_utf8(void) {
    char out[1024] = "";
    const char *s = "market\xe2\x80\x99s \xe2\x80\x9c" "fa\xc3\xa7" "ade\xe2\x80\x9d\xc2\xa0x\xc2\xb9y \xc2\xb5m \xc3\x89T\xc3\x89";
    CR_CHECK(cr_corpus_tokens(s, strlen(s), join, out) == 7);
    CR_CHECK_STR(out, "market s fa\xc3\xa7" "ade x y \xc2\xb5m \xc3\x89t\xc3\x89");
    char longw[400];
    longw[0] = 'a', longw[1] = 'b';
    for (int i = 2; i + 1 < 400; i += 2) longw[i] = '\xc3', longw[i + 1] = '\xa9'; /* ab, 199 e-acute */
    out[0] = '\0';
    CR_CHECK(cr_corpus_tokens(longw, 400, join, out) == 1);
    CR_CHECK(strlen(out) == 254); /* 2 + 126 * 2: the next character would pass 255 */
    CR_CHECK(cr_utf8_check(out, strlen(out)) == strlen(out));
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

int main(void) {
    CR_RUN(test_tokens);
    CR_RUN(test_tokens_utf8);
    CR_RUN(test_dict);
    return cr_test_done();
}
