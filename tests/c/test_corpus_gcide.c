/* GCIDE builders on a small dictionary in the dictd layout written here:
 * a gzip'd text with entries, and an index with base64 offsets. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/cr_utf8.h"
#include "cr_test.h"
#include "data/cr_corpus.h"
#include "data/cr_corpus_gcide.h"

static char root[64];

static const char *preamble = "\n00-database-info\n   This file was converted from the original database.\n";
static const char *entries[] = {
    "Dog \\Dog\\ (d[add]g), n. [AS. docga; akin to D. dog\n   mastiff.]\n"
    "   1. (Zool.) A quadruped of the genus {Canis}; caf[e'] society.\n      [1913 Webster]\n\n"
    "   Syn: hound\n        [WordNet 1.5]\n",
    "Run \\Run\\, v. i. [imp. {Ran}]\n   To move swiftly; Sun\"dog`s [Obs.] [AE]sop.\n   (a) A run of [root]two.\n",
    "American Protective Association \\A*mer\"i*can Pro*tect\"ive\n   As*so`ci*a\"tion\\, n.\n   A society.\n",
    "\n\n      A stray quotation here.\n0 \\0\\ adj.\n   2. zero; a.\n",
};
static const char *expect_tokens[] = {
    "dog zool a quadruped of the genus canis cafe society hound",
    "run to move swiftly sundogs aesop a run of two",
    "american protective association a society",
    "0 zero a",
};
static const int expect_noun[] = {1, 0, 1, 0};
static const char *expect_head[] = {"Dog", "Run", "American Protective Association", "0"};

static void join(void *ctx, const char *t, size_t n) {
    char *out = ctx;
    if (*out) strcat(out, " ");
    strncat(out, t, n);
}

static void test_clean(void) {
    for (int i = 0; i < 4; i++) {
        size_t n = strlen(entries[i]);
        char *dst = malloc(n + 2), hw[64], toks[512] = "";
        int noun = -1;
        size_t k = cr_gcide_clean(entries[i], n, dst, hw, sizeof hw, &noun);
        CR_CHECK(k <= n + 1 && dst[k] == '\0');
        cr_corpus_tokens(dst, k, join, toks);
        free(dst);
        CR_CHECK_STR(toks, expect_tokens[i]);
        CR_CHECK_STR(hw, expect_head[i]);
        CR_CHECK(noun == expect_noun[i]);
    }
}

static void b64(uint64_t v, char *out) {
    static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char tmp[16];
    int n = 0;
    do tmp[n++] = d[v % 64], v /= 64;
    while (v);
    for (int i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    out[n] = '\0';
}

/* Writes root/NAME.dict.dz (gzip) and root/NAME.index; extra_index lines are
 * appended verbatim to the index (for malformed-line tests). */
static void write_dict(const char *name, const char *extra_index, uint64_t bogus_len) {
    char p[128], o[16], l[16];
    snprintf(p, sizeof p, "%s/%s.dict.dz", root, name);
    gzFile g = gzopen(p, "wb");
    snprintf(p, sizeof p, "%s/%s.index", root, name);
    FILE *ix = fopen(p, "w");
    uint64_t off = 0;
    gzputs(g, preamble);
    b64(1, o), b64(strlen(preamble) - 1, l);
    fprintf(ix, "00-database-info\t%s\t%s\n", o, l);
    off += strlen(preamble);
    for (int i = 0; i < 4; i++) {
        gzputs(g, "\n");
        off++;
        size_t n = strlen(entries[i]);
        gzputs(g, entries[i]);
        b64(off, o), b64(n, l);
        fprintf(ix, "%s\t%s\t%s\n", expect_head[i], o, l);
        if (i == 0) fprintf(ix, "hound\t%s\t%s\n", o, l); /* second headword for the same entry */
        off += n;
    }
    if (bogus_len) {
        b64(off + 1, o), b64(bogus_len, l);
        fprintf(ix, "zzz\t%s\t%s\n", o, l);
    }
    if (extra_index) fputs(extra_index, ix);
    gzclose(g);
    fclose(ix);
}

static int run_text(const char *name, char *out, size_t cap, cr_gcide_stats *st, cr_err *e) {
    char d[128], x[128];
    snprintf(d, sizeof d, "%s/%s.dict.dz", root, name);
    snprintf(x, sizeof x, "%s/%s.index", root, name);
    FILE *f = tmpfile();
    int rc = cr_gcide_write_text(d, x, f, st, e);
    rewind(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
    return rc;
}

static void test_text(void) {
    write_dict("ok", NULL, 0);
    char out[2048], want[2048] = "";
    cr_gcide_stats st;
    cr_err e;
    CR_CHECK(run_text("ok", out, sizeof out, &st, &e) == 0);
    for (int i = 0; i < 4; i++) strcat(strcat(want, expect_tokens[i]), "\n");
    CR_CHECK_STR(out, want);
    CR_CHECK(st.entries == 4 && st.tokens == 11 + 10 + 5 + 3);
    CR_CHECK(st.vocab == 23);
}

/* LIBSVM validity, and agreement with gcide-text: each document's counts are
 * the counts of its text line's tokens that made it into the vocabulary. */
static void test_docs(void) {
    write_dict("docs", NULL, 0);
    char d[128], x[128], out[128], voc[140];
    snprintf(d, sizeof d, "%s/docs.dict.dz", root);
    snprintf(x, sizeof x, "%s/docs.index", root);
    snprintf(out, sizeof out, "%s/docs.svm", root);
    snprintf(voc, sizeof voc, "%s/docs.svm.vocab", root);
    cr_gcide_stats st;
    cr_err e;
    CR_CHECK(cr_gcide_write_docs(d, x, out, 2, &st, &e) == 0);
    CR_CHECK(st.entries == 4 && st.nouns == 2);
    char words[64][32];
    unsigned long long cnt[64], prev = ~0ull;
    int nv = 0;
    FILE *f = fopen(voc, "r");
    CR_CHECK(f != NULL);
    while (nv < 64 && fscanf(f, "%31s\t%llu\n", words[nv], &cnt[nv]) == 2) {
        CR_CHECK(cnt[nv] >= 2 && cnt[nv] <= prev);
        prev = cnt[nv++];
    }
    fclose(f);
    CR_CHECK(nv == (int)st.features && nv == 4); /* a (4), then of, run, society (2 each) */
    CR_CHECK_STR(words[0], "a");
    f = fopen(out, "r");
    CR_CHECK(f != NULL);
    char line[1024];
    int doc = 0;
    unsigned long long nnz = 0;
    while (fgets(line, sizeof line, f)) {
        CR_CHECK(doc < 4);
        CR_CHECK(!strncmp(line, expect_noun[doc] ? "+1" : "-1", 2));
        int got[64] = {0}, want[64] = {0}, last = 0;
        char *p = line + 2;
        int id, c, used;
        while (sscanf(p, " %d:%d%n", &id, &c, &used) == 2) {
            CR_CHECK(id > last && id <= nv && c >= 1);
            got[id - 1] = c;
            last = id;
            p += used;
            nnz++;
        }
        CR_CHECK(*p == '\n');
        char toks[512];
        strcpy(toks, expect_tokens[doc]);
        for (char *t = strtok(toks, " "); t; t = strtok(NULL, " "))
            for (int v = 0; v < nv; v++)
                if (!strcmp(t, words[v])) want[v]++;
        CR_CHECK(memcmp(got, want, sizeof got) == 0);
        doc++;
    }
    fclose(f);
    CR_CHECK(doc == 4 && nnz == st.nonzeros);
}

static void test_bad_index(void) {
    char out[2048], want[256];
    cr_err e;
    write_dict("bad1", "broken line without tabs\n", 0);
    CR_CHECK(run_text("bad1", out, sizeof out, NULL, &e) == -1);
    snprintf(want, sizeof want, "%s/bad1.index:7: expected 'headword TAB offset TAB length'", root);
    CR_CHECK_STR(e.msg, want);
    write_dict("bad2", "Cat\tA!\tB\n", 0);
    CR_CHECK(run_text("bad2", out, sizeof out, NULL, &e) == -1);
    snprintf(want, sizeof want, "%s/bad2.index:7: offset/length is not dictd base64", root);
    CR_CHECK_STR(e.msg, want);
    write_dict("bad3", NULL, 50); /* an entry past the end: truncated dictionary */
    CR_CHECK(run_text("bad3", out, sizeof out, NULL, &e) == -1);
    CR_CHECK(strstr(e.msg, "bad3.dict.dz: entry at offset") && strstr(e.msg, "past the end of the text"));
    write_dict("bad4", "Dog2\tB\tBZ\n", 0); /* overlaps the preamble and the first entry */
    CR_CHECK(run_text("bad4", out, sizeof out, NULL, &e) == -1);
    CR_CHECK(strstr(e.msg, "bad4.index: entries at offsets") && strstr(e.msg, "overlap"));
    CR_CHECK(run_text("missing", out, sizeof out, NULL, &e) == -1);
    CR_CHECK(strstr(e.msg, "missing.index: cannot open") != NULL);
}

/* GCIDE's raw Windows-1252 bytes (0x92 in "market\x92s", 0xe7 in
 * "fa\xe7ade", 0xb9 in "haven\xb9t") come out as UTF-8: gcide-text is valid
 * UTF-8, the apostrophes split words as "'" does, the cedilla stays. */
static void test_text_cp1252(void) {
    const char *entry = "Fall \\Fall\\, n.\n   The stock market\x92s fall; the fa\xe7" "ade; haven\xb9t.\n";
    char d[128], x[128], o[16], l[16];
    snprintf(d, sizeof d, "%s/w1252.dict", root);
    snprintf(x, sizeof x, "%s/w1252.index", root);
    FILE *f = fopen(d, "w"), *ix = fopen(x, "w");
    CR_CHECK(f && ix);
    fputs(entry, f);
    b64(0, o), b64(strlen(entry), l);
    fprintf(ix, "Fall\t%s\t%s\n", o, l);
    fclose(f);
    fclose(ix);
    char out[512];
    cr_gcide_stats st;
    cr_err e;
    FILE *t = tmpfile();
    CR_CHECK(cr_gcide_write_text(d, x, t, &st, &e) == 0);
    rewind(t);
    size_t n = fread(out, 1, sizeof out - 1, t);
    fclose(t);
    out[n] = '\0';
    CR_CHECK(cr_utf8_check(out, n) == n);
    CR_CHECK_STR(out, "fall the stock market s fall the fa\xc3\xa7" "ade haven t\n");
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/cr_test_gcide_XXXXXX");
    if (!mkdtemp(root)) return 1;
    CR_RUN(test_clean);
    CR_RUN(test_text);
    CR_RUN(test_text_cp1252);
    CR_RUN(test_docs);
    CR_RUN(test_bad_index);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) printf("could not remove %s\n", root);
    return cr_test_done();
}
