#include "data/cr_text.h"

#include <math.h>
#include <string.h>

#include "data/cr_lines.h"
#include "data/cr_out.h"
#include "data/cr_vec.h"

void cr_corpus_free(cr_corpus *c) {
    free(c->tok);
    free(c->sent);
    free(c->count);
    memset(c, 0, sizeof *c);
}

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r'; }

typedef struct wc {
    int64_t count, id;
} wc;

/* Order for the final vocabulary: count descending, then first appearance. */
static int by_count(const void *a, const void *b) {
    const wc *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Pass over the file. Without a fixed vocabulary, provisional ids in order
 * of first appearance go into first; with one, ids are looked up (-1 =
 * unknown word, dropped later) and counted per vocabulary id. */
static int scan(const char *path, cr_dict *first, const cr_dict *fixed, cr_i64v *tok, cr_i64v *sent, cr_i64v *cnt,
                cr_err *e) {
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    char *s;
    size_t len;
    int rc;
    cr_i64v_push(sent, 0);
    while ((rc = cr_lines_next(in, &s, &len, e)) == 1) {
        char *p = s, *end = s + len;
        while (p < end) {
            while (p < end && is_space(*p)) p++;
            char *w = p;
            while (p < end && !is_space(*p)) p++;
            if (p == w) break;
            int64_t id;
            if (fixed) {
                id = cr_dict_find(fixed, w, (size_t)(p - w));
            } else {
                int added;
                id = cr_dict_add(first, w, (size_t)(p - w), &added);
                if (added) cr_i64v_push(cnt, 0);
            }
            if (id >= 0) cnt->a[id]++;
            cr_i64v_push(tok, id);
        }
        if (tok->n > sent->a[sent->n - 1]) cr_i64v_push(sent, tok->n);
    }
    cr_lines_close(&in);
    return rc;
}

int64_t cr_vocab_build(const cr_dict *seen, const int64_t *cnt, int64_t min_count, cr_dict *vocab, int64_t *count,
                       int64_t *map) {
    int64_t n = seen->n, kept = 0;
    wc *order = cr_xmalloc((size_t)n * sizeof *order);
    for (int64_t i = 0; i < n; i++) order[i] = (wc){cnt[i], i};
    qsort(order, (size_t)n, sizeof *order, by_count);
    if (map)
        for (int64_t i = 0; i < n; i++) map[i] = -1;
    for (int64_t k = 0; k < n && order[k].count >= min_count; k++) {
        const char *w = cr_dict_name(seen, order[k].id);
        int64_t id = cr_dict_add(vocab, w, strlen(w), NULL);
        if (map) map[order[k].id] = id;
        count[k] = order[k].count;
        kept += order[k].count;
    }
    free(order);
    return kept;
}

/* The final vocabulary from provisional counts: sorted, min_count applied.
 * Fills vocab and c->count, returns map (provisional id -> final id or -1). */
static int64_t *build_vocab(const cr_dict *first, const cr_i64v *cnt, int64_t min_count, cr_dict *vocab,
                            cr_corpus *c) {
    int64_t n = first->n;
    int64_t *map = cr_xmalloc((size_t)n * sizeof *map);
    c->count = cr_xmalloc((size_t)n * sizeof *c->count);
    cr_vocab_build(first, cnt->a, min_count, vocab, c->count, map);
    return map;
}

/* Remap tokens in place (map NULL: already final, -1 = drop), drop emptied
 * sentences, split sentences longer than max_sentence (> 0). */
static void compact(cr_i64v *tok, cr_i64v *sent, const int64_t *map, int64_t max_sentence, cr_corpus *c) {
    int64_t out = 0, ns = 0, begin = 0; /* sent->a is rewritten behind the reads */
    cr_i64v cuts = {0};
    for (int64_t k = 0; k + 1 < sent->n; k++) {
        int64_t start = out, end = sent->a[k + 1];
        for (int64_t i = begin; i < end; i++) {
            int64_t id = map ? map[tok->a[i]] : tok->a[i];
            if (id < 0) continue;
            tok->a[out++] = id;
            if (max_sentence > 0 && out - start == max_sentence) {
                cr_i64v_push(&cuts, out);
                start = out;
            }
        }
        if (out > start) cr_i64v_push(&cuts, out);
        begin = end;
    }
    /* cuts can outnumber the original sentences when splitting: own array */
    free(sent->a);
    sent->a = NULL;
    c->sent = cr_xmalloc((size_t)(cuts.n + 1) * sizeof *c->sent);
    c->sent[0] = 0;
    for (int64_t k = 0; k < cuts.n; k++) c->sent[++ns] = cuts.a[k];
    free(cuts.a);
    c->raw = tok->n;
    c->ntok = out;
    c->tok = tok->a;
    c->nsent = ns;
    tok->a = NULL;
}

int cr_text_load(const char *path, const cr_text_opts *o, cr_corpus *c, cr_dict *vocab, cr_err *e) {
    memset(c, 0, sizeof *c);
    if (o->min_count < 1) return cr_errf(e, "min_count must be >= 1");
    cr_dict first;
    cr_dict_init(&first);
    cr_i64v tok = {0}, sent = {0}, cnt = {0};
    if (o->fixed_vocab)
        for (int64_t i = 0; i < vocab->n; i++) cr_i64v_push(&cnt, 0);
    int rc = scan(path, &first, o->fixed_vocab ? vocab : NULL, &tok, &sent, &cnt, e);
    if (rc == 0 && tok.n == 0) rc = cr_errf(e, "%s: empty file (no words)", path);
    int64_t *map = NULL;
    if (rc == 0 && !o->fixed_vocab) {
        map = build_vocab(&first, &cnt, o->min_count, vocab, c);
        if (vocab->n == 0)
            rc = cr_errf(e, "%s: no word occurs min_count = %lld times", path, (long long)o->min_count);
    } else if (rc == 0) {
        c->count = cnt.a;
        cnt.a = NULL;
    }
    if (rc == 0) compact(&tok, &sent, map, o->max_sentence, c);
    if (rc != 0) {
        free(c->count);
        c->count = NULL;
    }
    free(map);
    free(tok.a);
    free(sent.a);
    free(cnt.a);
    cr_dict_free(&first);
    return rc == 0 ? 0 : -1;
}

int cr_text_write(const char *path, const cr_corpus *c, const cr_dict *vocab, cr_err *e) {
    cr_out o;
    if (cr_out_open(&o, path, e) != 0) return -1;
    for (int64_t k = 0; k < c->nsent; k++)
        for (int64_t i = c->sent[k]; i < c->sent[k + 1]; i++) {
            fputs(cr_dict_name(vocab, c->tok[i]), o.f);
            fputc(i + 1 == c->sent[k + 1] ? '\n' : ' ', o.f);
        }
    return cr_out_commit(&o, e);
}

void cr_vocab_unigram_table(const int64_t *count, int64_t nwords, double power, int64_t *table, int64_t size) {
    double norm = 0;
    for (int64_t w = 0; w < nwords; w++) norm += pow((double)count[w], power);
    int64_t w = 0;
    double acc = pow((double)count[0], power) / norm;
    for (int64_t a = 0; a < size; a++) {
        table[a] = w;
        if ((double)(a + 1) / (double)size > acc && w + 1 < nwords) {
            w++;
            acc += pow((double)count[w], power) / norm;
        }
    }
}

void cr_vocab_keep_prob(const int64_t *count, int64_t nwords, int64_t total, double t, float *keep) {
    for (int64_t w = 0; w < nwords; w++) {
        if (t <= 0) {
            keep[w] = 1;
            continue;
        }
        double th = t * (double)total, c = (double)count[w];
        double p = (sqrt(c / th) + 1) * th / c;
        keep[w] = (float)(p < 1 ? p : 1);
    }
}
