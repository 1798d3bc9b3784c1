/* UTF-8 validity (RFC 3629 edge cases) and the Windows-1252 fallback that
 * makes the text builders' output UTF-8. */
#include "base/cr_rng.h"
#include "base/cr_utf8.h"
#include "cr_test.h"

static void test_seq(void) {
    uint32_t cp = 0;
    CR_CHECK(cr_utf8_seq("a", 1, &cp) == 1 && cp == 'a');
    CR_CHECK(cr_utf8_seq("\xc3\xa9", 2, &cp) == 2 && cp == 0xE9);
    CR_CHECK(cr_utf8_seq("\xe2\x80\x99", 3, &cp) == 3 && cp == 0x2019);
    CR_CHECK(cr_utf8_seq("\xf0\x9f\x98\x80", 4, &cp) == 4 && cp == 0x1F600);
    CR_CHECK(cr_utf8_seq("\xf4\x8f\xbf\xbf", 4, &cp) == 4 && cp == 0x10FFFF);
    const char *bad[] = {"\x92", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                         "\xf5\x80\x80\x80", "\xc3", "\xe2\x80", "\xc3\x41", "\xff"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CR_CHECK(cr_utf8_seq(bad[i], strlen(bad[i]), NULL) == 0);
    CR_CHECK(cr_utf8_seq("", 0, NULL) == 0);
}

static void test_check(void) {
    const char *ok = "plain caf\xc3\xa9 \xe2\x80\x9cquoted\xe2\x80\x9d";
    CR_CHECK(cr_utf8_check(ok, strlen(ok)) == strlen(ok));
    const char *gcide = "The stock market\x92s drop";
    CR_CHECK(cr_utf8_check(gcide, strlen(gcide)) == 16);
    CR_CHECK(cr_utf8_check("ab\xc3", 3) == 2); /* cut in the middle of a character */
}

static void conv(const char *in, const char *want) {
    char out[256];
    size_t k = cr_utf8_from_cp1252(in, strlen(in), out);
    out[k] = '\0';
    CR_CHECK_STR(out, want);
}

static void test_from_cp1252(void) {
    conv("market\x92s", "market\xe2\x80\x99s");              /* the byte gensim stopped on */
    conv("fa\xe7" "ade", "fa\xc3\xa7" "ade");                /* Latin-1 range */
    conv("haven\xb9t", "haven\xc2\xb9t");                    /* GCIDE's third one: superscript one */
    conv("\x80 \x85 \x96\x97", "\xe2\x82\xac \xe2\x80\xa6 \xe2\x80\x93\xe2\x80\x94");
    conv("a\x81" "b\x9d", "a b ");                           /* unassigned: a space */
    conv("caf\xc3\xa9 \xe2\x80\x99", "caf\xc3\xa9 \xe2\x80\x99"); /* valid UTF-8 kept */
    conv("\xc3", "\xc3\x83");                                /* a lone lead byte is a character */
}

/* Whatever goes in, UTF-8 comes out. */
static void test_from_cp1252_random(void) {
    cr_rng r;
    cr_rng_seed(&r, 8);
    char in[512], out[3 * 512];
    for (int t = 0; t < 2000; t++) {
        size_t n = cr_rng_below(&r, sizeof in);
        for (size_t i = 0; i < n; i++) in[i] = (char)cr_rng_below(&r, 256);
        size_t k = cr_utf8_from_cp1252(in, n, out);
        CR_CHECK(k <= 3 * n);
        CR_CHECK(cr_utf8_check(out, k) == k);
    }
}

/* Text for a terminal: escapes, title and clear-screen sequences, CR, C1
 * controls and stray bytes come out as visible \xHH; printable UTF-8 and
 * tab as they are; newline kept only when asked. */
static void test_escape(void) {
    char out[256];
    const char *in = "a\x1b]0;title\x07 \x1b[2J\r\n\tz\x7f \xc3\xa9\xc2\x9b\x9b\x00!";
    size_t n = 29;
    size_t k = cr_utf8_escape(in, n, out, 0);
    CR_CHECK_STR(out, "a\\x1b]0;title\\x07 \\x1b[2J\\r\\n\tz\\x7f \xc3\xa9\\xc2\\x9b\\x9b\\x00!");
    CR_CHECK(k == strlen(out));
    cr_utf8_escape("one\ntwo\r", 8, out, 1);
    CR_CHECK_STR(out, "one\ntwo\\r");
    CR_CHECK(cr_utf8_escape("", 0, out, 0) == 0 && out[0] == '\0');
    char big[4 * 64 + 1]; /* the documented bound is enough for the worst case */
    char ctl[64];
    memset(ctl, 0x1b, sizeof ctl);
    CR_CHECK(cr_utf8_escape(ctl, sizeof ctl, big, 0) == 4 * sizeof ctl);
}

int main(void) {
    CR_RUN(test_seq);
    CR_RUN(test_check);
    CR_RUN(test_from_cp1252);
    CR_RUN(test_from_cp1252_random);
    CR_RUN(test_escape);
    return cr_test_done();
}
