/* The streamed word2vec corpus (cr_w2v_corpus) and the word2vec text vector
 * format (cr_w2v_io): vocabulary order and min_count, its text round trip,
 * workers' shares of the lines (every line read by exactly one part), batch
 * boundaries at line ends and the sentence cut, subsampling against the
 * keep probability, the pool mapped onto a batch's rows, and vectors written
 * and read back, with bad files reported by line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cr_test.h"
#include "data/cr_text.h"
#include "kernels/cr_w2v.h"
#include "kernels/cr_w2v_corpus.h"
#include "kernels/cr_w2v_io.h"

static const char *text =
    "a b c a\n"
    "b a d\n"
    "\n"
    "e a b c d\n"
    "a f\n";

static void test_vocab(void) {
    char *p = cr_test_tmpfile(text);
    cr_w2v_vocab v;
    cr_err e;
    CR_CHECK(cr_w2v_vocab_count(p, 2, &v, &e) == 0);
    /* counts: a 5, b 3, c 2, d 2, e 1, f 1; ties by first appearance */
    CR_CHECK(v.words.n == 4);
    CR_CHECK_STR(cr_dict_name(&v.words, 0), "a");
    CR_CHECK_STR(cr_dict_name(&v.words, 1), "b");
    CR_CHECK_STR(cr_dict_name(&v.words, 2), "c");
    CR_CHECK_STR(cr_dict_name(&v.words, 3), "d");
    CR_CHECK(v.count[0] == 5 && v.count[3] == 2);
    CR_CHECK(v.raw == 14 && v.kept == 12 && v.lines == 5);
    size_t len;
    char *t = cr_w2v_vocab_text(&v, &len);
    CR_CHECK(len == strlen("a 5\nb 3\nc 2\nd 2\n") && strncmp(t, "a 5\nb 3\nc 2\nd 2\n", len) == 0);
    cr_w2v_vocab w;
    CR_CHECK(cr_w2v_vocab_parse(t, len, &w, &e) == 0);
    CR_CHECK(w.words.n == 4 && w.kept == 12 && w.count[1] == 3);
    CR_CHECK(cr_dict_find(&w.words, "d", 1) == 3);
    cr_w2v_vocab_free(&w);
    CR_CHECK(cr_w2v_vocab_parse("a 1\nb x\n", 8, &w, &e) == -1);
    CR_CHECK_STR(e.msg, "vocab:2: expected \"word count\"");
    cr_w2v_vocab_free(&w);
    CR_CHECK(cr_w2v_vocab_parse("a 1\na 2\n", 8, &w, &e) == -1);
    CR_CHECK_STR(e.msg, "vocab:2: word 'a' given twice");
    cr_w2v_vocab_free(&w);
    free(t);
    cr_w2v_vocab_free(&v);
    CR_CHECK(cr_w2v_vocab_count(p, 9, &v, &e) == -1);
    CR_CHECK(strstr(e.msg, "no word occurs min_count = 9 times") != NULL);
    cr_w2v_vocab_free(&v);
    unlink(p);
    p = cr_test_tmpfile(" \n\t\n");
    CR_CHECK(cr_w2v_vocab_count(p, 1, &v, &e) == -1);
    CR_CHECK(strstr(e.msg, ": empty corpus (no words)") != NULL);
    cr_w2v_vocab_free(&v);
    unlink(p);
    CR_CHECK(cr_w2v_vocab_count("/nonexistent/x.txt", 1, &v, &e) == -1);
    CR_CHECK(strstr(e.msg, "/nonexistent/x.txt: cannot open") != NULL);
    cr_w2v_vocab_free(&v);
}

/* Words of every batch of a reader, as text "w w w|w w|..." (| = sentence end). */
static void read_all(cr_w2v_reader *r, const cr_w2v_vocab *v, char *out, int64_t *batches, int64_t *raw) {
    cr_w2v_rbatch b;
    cr_err e;
    *out = '\0';
    *batches = *raw = 0;
    while (cr_w2v_reader_next(r, &b, &e) == 1) {
        (*batches)++;
        *raw += b.raw;
        for (int64_t s = 0; s < b.nsent; s++) {
            for (int64_t i = b.sent[s]; i < b.sent[s + 1]; i++) {
                strcat(out, cr_dict_name(&v->words, b.keys[b.row[i]]));
                strcat(out, i + 1 < b.sent[s + 1] ? " " : "|");
            }
        }
    }
}

/* The streamed vocabulary and the in-memory text reader (cr_text_load) give
 * every word the same id and count: one rule, one builder. */
static void test_vocab_as_text(void) {
    char *p = cr_test_tmpfile(text);
    cr_w2v_vocab v;
    cr_err e;
    CR_CHECK(cr_w2v_vocab_count(p, 2, &v, &e) == 0);
    cr_corpus c;
    cr_dict d;
    cr_dict_init(&d);
    CR_CHECK(cr_text_load(p, &(cr_text_opts){2, 0, 0}, &c, &d, &e) == 0);
    CR_CHECK(d.n == v.words.n);
    for (int64_t i = 0; i < d.n && i < v.words.n; i++) {
        CR_CHECK_STR(cr_dict_name(&d, i), cr_dict_name(&v.words, i));
        CR_CHECK(c.count[i] == v.count[i]);
    }
    cr_corpus_free(&c);
    cr_dict_free(&d);
    cr_w2v_vocab_free(&v);
    unlink(p);
}

static void test_parts_and_batches(void) {
    char *p = cr_test_tmpfile(text);
    char path[64];
    strcpy(path, p);
    cr_w2v_vocab v;
    cr_err e;
    CR_CHECK(cr_w2v_vocab_count(path, 2, &v, &e) == 0);
    char out[256], all[512] = "";
    int64_t nb, raw, total = 0;
    for (int part = 0; part < 2; part++) { /* lines 1, 3, 5 and lines 2, 4 */
        cr_w2v_reader_opts o = {part, 2, 1, 1000, 0};
        cr_w2v_reader *r = cr_w2v_reader_open(path, &v, &o, 1, &e);
        CR_CHECK(r != NULL);
        read_all(r, &v, out, &nb, &raw);
        CR_CHECK_STR(out, part == 0 ? "a b c a|a|" : "b a d|a b c d|");
        CR_CHECK(nb == (part == 0 ? 2 : 2)); /* batch = 1 word: one line per batch; the empty line reads nothing */
        total += raw;
        strcat(all, out);
        cr_w2v_reader_close(&r);
    }
    CR_CHECK(total == 14);
    /* one part, batches of at least 6 words, sentences cut at 2 kept words */
    cr_w2v_reader_opts o = {0, 1, 6, 2, 0};
    cr_w2v_reader *r = cr_w2v_reader_open(path, &v, &o, 1, &e);
    read_all(r, &v, out, &nb, &raw);
    CR_CHECK_STR(out, "a b|c a|b a|d|a b|c d|a|");
    /* a full batch ends at a cut: "a b c a" "b a" | "d" "e a b c d" | "a f" */
    CR_CHECK(nb == 3 && raw == 14);
    CR_CHECK(cr_w2v_reader_rewind(r, 1, &e) == 0);
    read_all(r, &v, out, &nb, &raw);
    CR_CHECK(nb == 3 && raw == 14);
    cr_w2v_reader_close(&r);
    /* one long line comes in batches, cut at sentence ends */
    char *q = cr_test_tmpfile("a b c d a b c d a b\n");
    char path2[64];
    strcpy(path2, q);
    cr_w2v_reader_opts o2 = {0, 1, 4, 3, 0};
    r = cr_w2v_reader_open(path2, &v, &o2, 1, &e);
    cr_w2v_rbatch b;
    CR_CHECK(cr_w2v_reader_next(r, &b, &e) == 1);
    CR_CHECK(b.raw == 6 && b.n == 6 && b.nsent == 2); /* "a b c" "d a b", then full */
    CR_CHECK(cr_w2v_reader_next(r, &b, &e) == 1);
    CR_CHECK(b.raw == 4 && b.n == 4 && b.nsent == 2); /* "c d a" "b" */
    CR_CHECK(b.keys[b.row[0]] == 2 && b.keys[b.row[3]] == 1);
    CR_CHECK(cr_w2v_reader_next(r, &b, &e) == 0);
    cr_w2v_reader_close(&r);
    unlink(path2);
    o.part = 2;
    CR_CHECK(cr_w2v_reader_open(path, &v, &o, 1, &e) == NULL);
    cr_w2v_vocab_free(&v);
    unlink(path);
}

/* The batch's keys are its distinct words in order of first appearance, and
 * rows index them. */
static void test_batch_keys(void) {
    char *p = cr_test_tmpfile("x y x z y x\n");
    char path[64];
    strcpy(path, p);
    cr_w2v_vocab v;
    cr_err e;
    CR_CHECK(cr_w2v_vocab_count(path, 1, &v, &e) == 0); /* x 0, y 1, z 2 */
    cr_w2v_reader_opts o = {0, 1, 100, 1000, 0};
    cr_w2v_reader *r = cr_w2v_reader_open(path, &v, &o, 1, &e);
    cr_w2v_rbatch b;
    CR_CHECK(cr_w2v_reader_next(r, &b, &e) == 1);
    CR_CHECK(b.n == 6 && b.nkeys == 3 && b.nsent == 1 && b.words == 6);
    CR_CHECK(b.keys[0] == 0 && b.keys[1] == 1 && b.keys[2] == 2);
    int32_t want[] = {0, 1, 0, 2, 1, 0};
    for (int i = 0; i < 6; i++) CR_CHECK(b.row[i] == want[i]);
    /* a pool of batch words only: y, x, y, z -> rows 1, 0, 1, 2, nothing extra */
    int64_t pool[] = {1, 0, 1, 2};
    CR_CHECK(cr_w2v_reader_pool(r, &b, pool, 4, &e) == 0);
    CR_CHECK(b.nextra == 0 && b.nnegs == 4);
    CR_CHECK(b.negs[0] == 1 && b.negs[1] == 0 && b.negs[3] == 2);
    int64_t bad[] = {1, 3};
    CR_CHECK(cr_w2v_reader_pool(r, &b, bad, 2, &e) == -1);
    CR_CHECK_STR(e.msg, "pool entry 2 is 3, not a word id");
    CR_CHECK(cr_w2v_reader_next(r, &b, &e) == 0);
    cr_w2v_reader_close(&r);
    cr_w2v_vocab_free(&v);
    unlink(path);
}

/* Pool words outside the batch get rows after the batch's words, once each,
 * with the first pool position holding them; a second pool replaces the
 * first; the next batch starts clean. */
static void test_pool_extra(void) {
    char *p = cr_test_tmpfile("a a a a b b b c c d\nb\nc\n");
    char path[64];
    strcpy(path, p);
    cr_w2v_vocab v;
    cr_err e;
    CR_CHECK(cr_w2v_vocab_count(path, 1, &v, &e) == 0); /* a 0, b 1, c 2, d 3 */
    cr_w2v_reader_opts o = {0, 1, 1, 1000, 0};
    cr_w2v_reader *r = cr_w2v_reader_open(path, &v, &o, 1, &e);
    cr_w2v_rbatch b;
    CR_CHECK(cr_w2v_reader_next(r, &b, &e) == 1); /* line 1 */
    CR_CHECK(cr_w2v_reader_next(r, &b, &e) == 1); /* line 2: "b" */
    CR_CHECK(b.nkeys == 1 && b.keys[0] == 1);
    int64_t pool[] = {3, 1, 0, 3, 2, 0};
    CR_CHECK(cr_w2v_reader_pool(r, &b, pool, 6, &e) == 0);
    CR_CHECK(b.nextra == 3);
    CR_CHECK(b.keys[1] == 3 && b.keys[2] == 0 && b.keys[3] == 2);
    CR_CHECK(b.extra_src[0] == 0 && b.extra_src[1] == 2 && b.extra_src[2] == 4);
    int32_t want[] = {1, 0, 2, 1, 3, 2};
    for (int j = 0; j < 6; j++) CR_CHECK(b.negs[j] == want[j]);
    for (int j = 0; j < 6; j++) CR_CHECK(b.keys[b.negs[j]] == pool[j]);
    int64_t pool2[] = {2, 2};
    CR_CHECK(cr_w2v_reader_pool(r, &b, pool2, 2, &e) == 0);
    CR_CHECK(b.nextra == 1 && b.keys[1] == 2 && b.negs[0] == 1 && b.negs[1] == 1);
    CR_CHECK(cr_w2v_reader_next(r, &b, &e) == 1); /* line 3: "c", no stale rows */
    CR_CHECK(b.nkeys == 1 && b.keys[0] == 2 && b.row[0] == 0 && b.nextra == 0);
    cr_w2v_reader_close(&r);
    cr_w2v_vocab_free(&v);
    unlink(path);
}

/* Subsampling keeps each word about as often as cr_w2v_keep_prob says. */
static void test_subsampling(void) {
    char *p = cr_test_tmpfile("");
    char path[64];
    strcpy(path, p);
    FILE *f = fopen(path, "w");
    for (int l = 0; l < 2000; l++) fputs("the the the the the the the the cat dog\n", f);
    fclose(f);
    cr_w2v_vocab v;
    cr_err e;
    CR_CHECK(cr_w2v_vocab_count(path, 1, &v, &e) == 0);
    const double t = 1e-2;
    cr_w2v_reader_opts o = {0, 1, 1000, 1000, t};
    cr_w2v_reader *r = cr_w2v_reader_open(path, &v, &o, 3, &e);
    cr_w2v_rbatch b;
    int64_t kept[3] = {0, 0, 0}, words = 0;
    while (cr_w2v_reader_next(r, &b, &e) == 1) {
        words += b.words;
        for (int64_t i = 0; i < b.n; i++) kept[b.keys[b.row[i]]]++;
    }
    CR_CHECK(words == 20000);
    double p0 = cr_w2v_keep_prob(16000, 20000, t), p1 = cr_w2v_keep_prob(2000, 20000, t);
    CR_CHECK(p0 < 0.2 && p1 > 0.3 && p1 < 0.6); /* both subsampled, at different rates */
    CR_CHECK(fabs(kept[0] - 16000 * p0) < 4 * sqrt(16000 * p0 * (1 - p0)));
    CR_CHECK(fabs(kept[1] - 2000 * p1) < 4 * sqrt(2000 * p1 * (1 - p1)) + 1);
    cr_w2v_reader_close(&r);
    cr_w2v_vocab_free(&v);
    unlink(path);
}

static void test_vectors_round_trip(void) {
    char path[64];
    strcpy(path, cr_test_tmpfile(""));
    float data[] = {0.5f, -1.25f, 3e-7f, 1, 2, 3};
    cr_mat m = {2, 3, data}, back;
    const char *words[] = {"caf\xc3\xa9", "b"};
    cr_err e;
    CR_CHECK(cr_w2v_write_vectors(path, &m, words, &e) == 0);
    cr_dict d;
    CR_CHECK(cr_w2v_read_vectors(path, &back, &d, &e) == 0);
    CR_CHECK(back.rows == 2 && back.cols == 3 && d.n == 2);
    CR_CHECK_STR(cr_dict_name(&d, 0), "caf\xc3\xa9");
    for (int k = 0; k < 6; k++) CR_CHECK_NEAR(back.data[k], data[k], 1e-6 * fabs(data[k]));
    free(back.data);
    cr_dict_free(&d);
    const char *bad_word[] = {"a b", "c"};
    CR_CHECK(cr_w2v_write_vectors(path, &m, bad_word, &e) == -1);
    CR_CHECK(strstr(e.msg, "word 1 ('a b') is empty or holds whitespace") != NULL);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "empty file"},
        {"2\n", ":1: expected a header"},
        {"2 2\na 1 2\nb 1\n", ":3: value 2: missing (too few values)"},
        {"2 2\na 1 2\nb 1 x\n", ":3: value 2: not a finite number"},
        {"2 2\na 1 2\nb 1 2 3\n", ":3: more than 2 values"},
        {"2 2\na 1 2\na 1 2\n", ":3: word 'a' appears twice"},
        {"3 2\na 1 2\nb 1 2\n", ": 2 word lines, the header says 3"},
        {"1 2\na 1 2\nb 1 2\n", ":3: more word lines than the header's 1"},
        {"1 2\na 1 nan\n", ":2: value 2: not a finite number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i].text, f);
        fclose(f);
        CR_CHECK(cr_w2v_read_vectors(path, &back, &d, &e) == -1);
        if (!strstr(e.msg, bad[i].msg)) printf("  case %zu: got '%s'\n", i, e.msg);
        CR_CHECK(strstr(e.msg, bad[i].msg) != NULL);
        CR_CHECK(back.data == NULL && d.n == 0);
    }
    {
        FILE *f = fopen(path, "w");
        fputs("1 2\na 1 2\n\n", f); /* a blank last line is fine */
        fclose(f);
        CR_CHECK(cr_w2v_read_vectors(path, &back, &d, &e) == 0);
        free(back.data);
        cr_dict_free(&d);
    }
    unlink(path);
}

/* Text of the current batch b, "w w|w|" (| = sentence end). */
static void batch_text(const cr_w2v_rbatch *b, const cr_w2v_vocab *v, char *out) {
    *out = '\0';
    for (int64_t s = 0; s < b->nsent; s++)
        for (int64_t i = b->sent[s]; i < b->sent[s + 1]; i++) {
            strcat(out, cr_dict_name(&v->words, b->keys[b->row[i]]));
            strcat(out, i + 1 < b->sent[s + 1] ? " " : "|");
        }
}

/* R:peek reads the batch after the current one: the batches (and the
 * subsampling draws) are the same as without it, the current batch stays
 * as it was, a pool still maps onto the current batch, and peeking twice
 * gives one batch. */
static void test_peek(void) {
    char buf[4096] = "";
    for (int i = 0; i < 60; i++) strcat(buf, i % 3 ? "a b c d e a b\n" : "c d a f e b a c\n");
    char *p = cr_test_tmpfile(buf);
    char path[64];
    strcpy(path, p);
    cr_w2v_vocab v;
    cr_err e;
    CR_CHECK(cr_w2v_vocab_count(path, 1, &v, &e) == 0);
    cr_w2v_reader_opts o = {1, 2, 9, 4, 0.05};
    cr_w2v_reader *r = cr_w2v_reader_open(path, &v, &o, 7, &e);
    static char plain[8192], ahead[8192];
    char cur[512], after[512], pk[512];
    int64_t nb, raw;
    read_all(r, &v, plain, &nb, &raw);
    CR_CHECK(nb > 5);
    CR_CHECK(cr_w2v_reader_rewind(r, 0, &e) == 0);
    ahead[0] = '\0';
    cr_w2v_rbatch b, nx;
    int64_t n = 0, peeked_keys = -1, peeked_first = -1;
    while (cr_w2v_reader_next(r, &b, &e) == 1) {
        n++;
        if (peeked_keys >= 0) CR_CHECK(b.nkeys == peeked_keys && b.keys[0] == peeked_first);
        batch_text(&b, &v, cur);
        int rc = cr_w2v_reader_peek(r, &nx, &e);
        CR_CHECK(rc >= 0);
        peeked_keys = rc == 1 ? nx.nkeys : -1;
        peeked_first = rc == 1 && nx.nkeys ? nx.keys[0] : -1;
        CR_CHECK(cr_w2v_reader_peek(r, &nx, &e) == rc); /* twice: the same batch */
        if (rc == 1) CR_CHECK(nx.nkeys == peeked_keys);
        batch_text(&b, &v, after);
        CR_CHECK_STR(after, cur);
        /* a pool of every word maps onto the current batch's rows */
        int64_t pool[6] = {0, 1, 2, 3, 4, 5};
        CR_CHECK(cr_w2v_reader_pool(r, &b, pool, 6, &e) == 0);
        for (int j = 0; j < 6; j++) CR_CHECK(b.keys[b.negs[j]] == pool[j]);
        if (rc == 1) {
            batch_text(&nx, &v, pk);
            CR_CHECK(strlen(pk) > 0 || nx.n == 0);
        }
        strcat(ahead, cur);
    }
    CR_CHECK(n == nb);
    CR_CHECK_STR(ahead, plain);
    cr_w2v_reader_close(&r);
    cr_w2v_vocab_free(&v);
    unlink(path);
}

int main(void) {
    CR_RUN(test_vocab);
    CR_RUN(test_vocab_as_text);
    CR_RUN(test_parts_and_batches);
    CR_RUN(test_batch_keys);
    CR_RUN(test_pool_extra);
    CR_RUN(test_subsampling);
    CR_RUN(test_vectors_round_trip);
    CR_RUN(test_peek);
    return cr_test_done();
}
