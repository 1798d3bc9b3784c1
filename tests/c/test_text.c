/* Text corpus + vocabulary: counts, min_count, id order, sentences, the
 * unigram^0.75 table, subsampling probabilities, round trip, errors; and
 * the zipf-text generator feeding it. */
#include "cr_test.h"
#include "data/cr_gen.h"
#include "data/cr_text.h"
#include "data_util.h"

static void test_vocab(void) {
    const char *p = tput("t.txt", "the cat sat\n\n  rare the\tcat \r\nthe dog\nrare2\n");
    cr_corpus c;
    cr_dict v;
    cr_dict_init(&v);
    cr_err e;
    CR_CHECK(cr_text_load(p, &(cr_text_opts){2, 0, 0}, &c, &v, &e) == 0);
    /* counts: the 3, cat 2, others 1 -> vocab {the, cat} */
    CR_CHECK(v.n == 2 && c.count[0] == 3 && c.count[1] == 2);
    CR_CHECK_STR(cr_dict_name(&v, 0), "the");
    CR_CHECK_STR(cr_dict_name(&v, 1), "cat");
    CR_CHECK(c.raw == 9 && c.ntok == 5);
    /* sentences: [the cat] [the cat] [the]; "rare2" line vanished */
    CR_CHECK(c.nsent == 3 && c.sent[1] == 2 && c.sent[2] == 4 && c.sent[3] == 5);
    CR_CHECK(c.tok[0] == 0 && c.tok[1] == 1 && c.tok[2] == 0 && c.tok[4] == 0);
    /* round trip */
    CR_CHECK(cr_text_write(tpath("t2.txt"), &c, &v, &e) == 0);
    cr_corpus d;
    cr_dict w;
    cr_dict_init(&w);
    CR_CHECK(cr_text_load(tpath("t2.txt"), &(cr_text_opts){1, 0, 0}, &d, &w, &e) == 0);
    CR_CHECK(d.ntok == c.ntok && d.nsent == c.nsent && !memcmp(d.tok, c.tok, 5 * 8) && w.n == 2);
    cr_corpus_free(&d);
    cr_dict_free(&w);
    cr_corpus_free(&c);
    cr_dict_free(&v);
}

/* The shared vocabulary rule on its own: descending count, ties by first
 * appearance, min_count, the map of dropped words, the kept total. */
static void test_vocab_build(void) {
    cr_dict seen, v;
    cr_dict_init(&seen);
    cr_dict_init(&v);
    const char *w[] = {"x", "y", "z", "q"};
    for (int i = 0; i < 4; i++) cr_dict_add(&seen, w[i], 1, NULL);
    int64_t cnt[] = {2, 3, 2, 1}, count[4], map[4];
    CR_CHECK(cr_vocab_build(&seen, cnt, 2, &v, count, map) == 7);
    CR_CHECK(v.n == 3 && count[0] == 3 && count[1] == 2 && count[2] == 2);
    CR_CHECK_STR(cr_dict_name(&v, 0), "y");
    CR_CHECK_STR(cr_dict_name(&v, 1), "x"); /* x ties with z and came first */
    CR_CHECK_STR(cr_dict_name(&v, 2), "z");
    CR_CHECK(map[0] == 1 && map[1] == 0 && map[2] == 2 && map[3] == -1);
    cr_dict_free(&seen);
    cr_dict_free(&v);
}

static void test_fixed_vocab_and_split(void) {
    cr_corpus c, h;
    cr_dict v;
    cr_dict_init(&v);
    cr_err e;
    CR_CHECK(cr_text_load(tput("tr.txt", "a b c a b a\n"), &(cr_text_opts){1, 0, 0}, &c, &v, &e) == 0);
    CR_CHECK(v.n == 3 && c.nsent == 1);
    /* held-out text through the training vocabulary: unknown words dropped */
    CR_CHECK(cr_text_load(tput("ho.txt", "c zz a\nzz\nb b\n"), &(cr_text_opts){1, 0, 1}, &h, &v, &e) == 0);
    CR_CHECK(v.n == 3 && h.raw == 6 && h.ntok == 4 && h.nsent == 2);
    CR_CHECK(h.tok[0] == 2 && h.tok[1] == 0 && h.tok[2] == 1);
    CR_CHECK(h.count[0] == 1 && h.count[1] == 2 && h.count[2] == 1);
    cr_corpus_free(&h);
    /* long lines split into max_sentence pieces */
    cr_dict w;
    cr_dict_init(&w);
    CR_CHECK(cr_text_load(tpath("tr.txt"), &(cr_text_opts){1, 4, 0}, &h, &w, &e) == 0);
    CR_CHECK(h.nsent == 2 && h.sent[1] == 4 && h.sent[2] == 6);
    cr_corpus_free(&h);
    cr_corpus_free(&c);
    cr_dict_free(&w);
    cr_dict_free(&v);
}

static void test_tables(void) {
    int64_t count[3] = {81, 16, 1}; /* ^0.75: 27, 8, 1 of 36 */
    int64_t table[360];
    cr_vocab_unigram_table(count, 3, 0.75, table, 360);
    int n[3] = {0, 0, 0};
    for (int i = 0; i < 360; i++) n[table[i]]++;
    CR_CHECK(abs(n[0] - 270) <= 1 && abs(n[1] - 80) <= 1 && abs(n[2] - 10) <= 1);
    float keep[3];
    cr_vocab_keep_prob(count, 3, 98, 0.01, keep);
    /* word2vec: (sqrt(c/(t*T)) + 1) * t*T / c with t*T = 0.98 */
    CR_CHECK_NEAR(keep[0], (sqrt(81 / 0.98) + 1) * 0.98 / 81, 1e-6);
    CR_CHECK(keep[2] == 1.0f);
    cr_vocab_keep_prob(count, 3, 98, 0, keep);
    CR_CHECK(keep[0] == 1.0f);
}

static void test_errors(void) {
    cr_corpus c;
    cr_dict v;
    cr_dict_init(&v);
    cr_err e;
    CR_CHECK(cr_text_load(tput("e.txt", "\n \n"), &(cr_text_opts){1, 0, 0}, &c, &v, &e) == -1 && strstr(e.msg, "e.txt: empty file"));
    CR_CHECK(cr_text_load(tput("e.txt", "a b\n"), &(cr_text_opts){2, 0, 0}, &c, &v, &e) == -1 && strstr(e.msg, "no word occurs"));
    CR_CHECK(cr_text_load(tpath("none.txt"), &(cr_text_opts){1, 0, 0}, &c, &v, &e) == -1 && strstr(e.msg, "none.txt: cannot open: No such file"));
    const char *p = tput_truncated_gz("t.txt.gz", "w%d alpha beta gamma delta\n", 30000);
    CR_CHECK(cr_text_load(p, &(cr_text_opts){1, 0, 0}, &c, &v, &e) == -1 && strstr(e.msg, "t.txt.gz: truncated or corrupt gzip: "));
    cr_dict_free(&v);
}

static void test_zipf_text(void) {
    cr_zipf_text_opts o = {20000, 500, 1.0, 50, 3, tpath("z.txt")};
    cr_gen_stats st;
    cr_err e;
    CR_CHECK(cr_gen_zipf_text(&o, &st, &e) == 0);
    cr_corpus c;
    cr_dict v;
    cr_dict_init(&v);
    CR_CHECK(cr_text_load(o.out, &(cr_text_opts){1, 0, 0}, &c, &v, &e) == 0);
    CR_CHECK(c.ntok == 20000 && c.nsent == 400);
    /* zipf(1) over 500 words: P(w1) = 1/H_500 ~ 0.147 */
    CR_CHECK_STR(cr_dict_name(&v, 0), "w1");
    CR_CHECK_NEAR((double)c.count[0] / 20000, 0.147, 0.015);
    CR_CHECK_NEAR((double)c.count[0] / (double)c.count[1], 2.0, 0.3);
    cr_corpus_free(&c);
    cr_dict_free(&v);
}

int main(void) {
    tdir_make();
    CR_RUN(test_vocab);
    CR_RUN(test_vocab_build);
    CR_RUN(test_fixed_vocab_and_split);
    CR_RUN(test_tables);
    CR_RUN(test_errors);
    CR_RUN(test_zipf_text);
    tdir_remove();
    return cr_test_done();
}
