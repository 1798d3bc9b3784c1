/* LDA corpus: streaming load of one worker's documents, topic init,
 * chunking. See cr_lda_corpus.h. */
#include "kernels/cr_lda_corpus.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "data/cr_lines.h"
#include "data/cr_vec.h"

/* Growable int32 token array. */
typedef struct { int32_t *a; int64_t n, cap; } i32v;

static void i32v_push(i32v *v, int32_t x) {
    if (v->n == v->cap) v->a = cr_xrealloc(v->a, (size_t)(v->cap = v->cap ? v->cap * 2 : 4096) * sizeof *v->a);
    v->a[v->n++] = x;
}

/* The loader's state: where it is in the file and what it keeps. */
typedef struct ld {
    const cr_lda_load_opts *o;
    const char *path;
    long line;
    i32v words;
    cr_i64v off;
    int64_t maxw; /* largest word id seen (-1: none) */
} ld;

/* Append word w (checked against V when V is known). */
static int add_word(ld *s, int64_t w, int64_t count, cr_err *e) {
    if (s->o->V > 0 && w >= s->o->V) {
        if (s->o->format == CR_LDA_LIBSVM) /* say it in the file's terms: ids from 1 */
            return cr_errf_at(e, s->path, s->line, "feature id %lld out of range [1, %lld] (a vocabulary of %lld words)",
                              (long long)w + 1, (long long)s->o->V, (long long)s->o->V);
        return cr_errf_at(e, s->path, s->line, "word id %lld out of range [0, %lld)", (long long)w,
                          (long long)s->o->V);
    }
    if (w > INT32_MAX - 1) return cr_errf_at(e, s->path, s->line, "word id %lld too large", (long long)w);
    if (w > s->maxw) s->maxw = w;
    for (int64_t k = 0; k < count; k++) i32v_push(&s->words, (int32_t)w);
    return 0;
}

/* One LIBSVM line "label id:count id:count ...": the label is skipped (a
 * first field with a ':' is taken as a feature). */
static int parse_libsvm(ld *s, char *p, cr_err *e) {
    p = cr_skip_ws(p);
    char *first = p;
    while (!cr_field_end(*p) && *p != ':') p++;
    if (*p != ':') first = NULL;
    if (!first) {
        while (!cr_field_end(*p)) p++;
    } else {
        p = first;
    }
    for (p = cr_skip_ws(p); *p; p = cr_skip_ws(p)) {
        char *tok = p;
        int64_t id, cnt;
        if (cr_parse_i64(&p, &id) != 0 || *p != ':' || (p++, cr_parse_i64(&p, &cnt)) != 0 || !cr_field_end(*p)) {
            char *end = tok;
            while (!cr_field_end(*end)) end++;
            *end = '\0';
            return cr_errf_at(e, s->path, s->line, "bad feature '%.40s' (expected id:count)", tok);
        }
        if (id < 1) return cr_errf_at(e, s->path, s->line, "feature id %lld must be >= 1", (long long)id);
        if (cnt < 1)
            return cr_errf_at(e, s->path, s->line, "count %lld of feature %lld must be >= 1", (long long)cnt,
                              (long long)id);
        if (add_word(s, id - 1, cnt, e)) return -1;
    }
    return 0;
}

/* One text line: blank-separated words through the vocabulary. */
static int parse_text(ld *s, char *p, cr_err *e) {
    for (p = cr_skip_ws(p); *p; p = cr_skip_ws(p)) {
        char *w = p;
        while (!cr_field_end(*p)) p++;
        int64_t id = cr_dict_find(s->o->vocab, w, (size_t)(p - w));
        if (id >= 0 && add_word(s, id, 1, e)) return -1;
    }
    return 0;
}

/* Is document n of the file (0-based) one of this part's? j counts the
 * documents of the split seen so far. */
static int keep_doc(const cr_lda_load_opts *o, int64_t n, int64_t *j) {
    int held = o->heldout_every > 0 && n % o->heldout_every == o->heldout_every - 1;
    if (held != (o->test != 0)) return 0;
    return (*j)++ % o->parts == o->part;
}

static int check_load_opts(const cr_lda_load_opts *o, cr_err *e) {
    if (o->parts < 1 || o->part < 0 || o->part >= o->parts)
        return cr_errf(e, "part %lld is not in [0, parts = %lld)", (long long)o->part, (long long)o->parts);
    if (o->V < 0) return cr_errf(e, "V must be >= 0");
    if (o->heldout_every < 0) return cr_errf(e, "heldout_every must be >= 0");
    if (o->format == CR_LDA_TEXT && !o->vocab) return cr_errf(e, "the text format needs a vocabulary");
    return 0;
}

/* Read every line; keep this part's documents. */
static int read_docs(ld *s, cr_lines *r, cr_err *e) {
    char *line;
    size_t len;
    int rc;
    int64_t n = 0, j = 0;
    cr_i64v_push(&s->off, 0);
    while ((rc = cr_lines_next(r, &line, &len, e)) == 1) {
        s->line = cr_lines_lineno(r);
        if (!keep_doc(s->o, n++, &j)) continue;
        if ((s->o->format == CR_LDA_TEXT ? parse_text : parse_libsvm)(s, line, e)) return -1;
        cr_i64v_push(&s->off, s->words.n);
    }
    return rc;
}

cr_lda_corpus *cr_lda_corpus_load(const char *path, const cr_lda_load_opts *o, cr_err *e) {
    if (check_load_opts(o, e)) return NULL;
    cr_lines *r = cr_lines_open(path, e);
    if (!r) return NULL;
    ld s = {o, path, 0, {NULL, 0, 0}, {NULL, 0, 0}, -1};
    int rc = read_docs(&s, r, e);
    cr_lines_close(&r);
    if (rc != 0) {
        free(s.words.a);
        free(s.off.a);
        return NULL;
    }
    cr_lda_corpus *c = cr_xcalloc(1, sizeof *c);
    c->ndocs = s.off.n - 1;
    c->ntokens = s.words.n;
    c->doc_off = s.off.a;
    c->word = s.words.a ? s.words.a : cr_xmalloc(sizeof(int32_t));
    c->V = o->V > 0 ? o->V : o->format == CR_LDA_TEXT ? o->vocab->n : s.maxw + 1;
    for (int64_t d = 0; d < c->ndocs; d++)
        if (c->doc_off[d + 1] - c->doc_off[d] > c->maxlen) c->maxlen = c->doc_off[d + 1] - c->doc_off[d];
    return c;
}

void cr_lda_corpus_destroy(cr_lda_corpus **cp) {
    if (!cp || !*cp) return;
    cr_lda_corpus *c = *cp;
    free(c->doc_off);
    free(c->word);
    free(c->z);
    free(c->chunk_doc);
    free(c->key_off);
    free(c->key);
    free(c->row);
    free(c->ws);
    free(c->arena);
    free(c);
    *cp = NULL;
}

int cr_lda_corpus_init(cr_lda_corpus *c, int K, uint64_t seed, cr_err *e) {
    if (K < 2) return cr_errf(e, "K must be >= 2");
    free(c->z);
    c->z = cr_xmalloc((size_t)(c->ntokens ? c->ntokens : 1) * sizeof *c->z);
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (int64_t i = 0; i < c->ntokens; i++) c->z[i] = (int32_t)cr_rng_below(&r, (uint64_t)K);
    c->K = K;
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Keys and token rows of the chunk of documents [d0, d1); appends the keys
 * to *keys. map is V entries of -1 and is left that way. */
static void chunk_keys(cr_lda_corpus *c, int64_t d0, int64_t d1, int32_t *map, cr_i64v *keys) {
    int64_t t0 = c->doc_off[d0], t1 = c->doc_off[d1], k0 = keys->n;
    for (int64_t i = t0; i < t1; i++)
        if (map[c->word[i]] < 0) {
            map[c->word[i]] = 0;
            cr_i64v_push(keys, c->word[i]);
        }
    if (keys->n > k0) qsort(keys->a + k0, (size_t)(keys->n - k0), sizeof *keys->a, cmp_i64);
    for (int64_t k = k0; k < keys->n; k++) map[keys->a[k]] = (int32_t)(k - k0);
    for (int64_t i = t0; i < t1; i++) c->row[i] = map[c->word[i]];
    for (int64_t k = k0; k < keys->n; k++) map[keys->a[k]] = -1;
}

int cr_lda_corpus_chunks(cr_lda_corpus *c, int64_t tokens_per_chunk, cr_err *e) {
    if (tokens_per_chunk < 1) return cr_errf(e, "tokens per chunk must be >= 1");
    cr_i64v docs = {NULL, 0, 0}, koff = {NULL, 0, 0}, keys = {NULL, 0, 0};
    cr_i64v_push(&docs, 0);
    for (int64_t d = 0; d < c->ndocs; d++)
        if (c->doc_off[d + 1] - c->doc_off[docs.a[docs.n - 1]] >= tokens_per_chunk || d + 1 == c->ndocs)
            cr_i64v_push(&docs, d + 1);
    if (docs.n == 1) cr_i64v_push(&docs, 0);
    free(c->row);
    c->row = cr_xmalloc((size_t)(c->ntokens ? c->ntokens : 1) * sizeof *c->row);
    int32_t *map = cr_xmalloc((size_t)(c->V ? c->V : 1) * sizeof *map);
    memset(map, 0xff, (size_t)c->V * sizeof *map);
    cr_i64v_push(&koff, 0);
    for (int64_t ch = 0; ch + 1 < docs.n; ch++) {
        chunk_keys(c, docs.a[ch], docs.a[ch + 1], map, &keys);
        cr_i64v_push(&koff, keys.n);
    }
    free(map);
    free(c->chunk_doc);
    free(c->key_off);
    free(c->key);
    c->nchunks = docs.n - 1;
    c->chunk_doc = docs.a;
    c->key_off = koff.a;
    c->key = keys.a ? keys.a : cr_xmalloc(sizeof(int64_t));
    return 0;
}

void cr_lda_chunk_counts(const cr_lda_corpus *c, int64_t ch, int32_t *dwk, int32_t *dk) {
    int K = c->K;
    memset(dwk, 0, (size_t)(cr_lda_chunk_nkeys(c, ch) * K) * sizeof *dwk);
    memset(dk, 0, (size_t)K * sizeof *dk);
    for (int64_t i = c->doc_off[c->chunk_doc[ch]]; i < c->doc_off[c->chunk_doc[ch + 1]]; i++) {
        dwk[(int64_t)c->row[i] * K + c->z[i]]++;
        dk[c->z[i]]++;
    }
}

void cr_lda_doc_topic_counts(const cr_lda_corpus *c, int32_t *out) {
    memset(out, 0, (size_t)(c->ndocs * c->K) * sizeof *out);
    for (int64_t d = 0; d < c->ndocs; d++)
        for (int64_t i = c->doc_off[d]; i < c->doc_off[d + 1]; i++) out[d * c->K + c->z[i]]++;
}

void cr_lda_word_topic_counts(const cr_lda_corpus *c, int64_t lo, int64_t hi, int32_t *out) {
    memset(out, 0, (size_t)((hi - lo) * c->K) * sizeof *out);
    for (int64_t i = 0; i < c->ntokens; i++)
        if (c->word[i] >= lo && c->word[i] < hi) out[(c->word[i] - lo) * c->K + c->z[i]]++;
}

/* Word counts of a text file into d and cnt (grown with d). */
static int count_words(const char *path, cr_dict *d, cr_i64v *cnt, cr_err *e) {
    cr_lines *r = cr_lines_open(path, e);
    if (!r) return -1;
    char *line;
    size_t len;
    int rc;
    while ((rc = cr_lines_next(r, &line, &len, e)) == 1) {
        for (char *p = cr_skip_ws(line); *p; p = cr_skip_ws(p)) {
            char *w = p;
            while (!cr_field_end(*p)) p++;
            int added;
            int64_t id = cr_dict_add(d, w, (size_t)(p - w), &added);
            if (added) cr_i64v_push(cnt, 0);
            cnt->a[id]++;
        }
    }
    cr_lines_close(&r);
    return rc;
}

typedef struct { int64_t cnt; const char *w; } vword;

static int cmp_vocab(const void *a, const void *b) {
    const vword *x = a, *y = b;
    if (x->cnt != y->cnt) return x->cnt < y->cnt ? 1 : -1;
    return strcmp(x->w, y->w);
}

int cr_lda_vocab(const char *path, int64_t min_count, cr_dict *d, cr_err *e) {
    cr_dict all;
    cr_dict_init(&all);
    cr_i64v cnt = {NULL, 0, 0};
    int rc = count_words(path, &all, &cnt, e);
    vword *v = cr_xmalloc((size_t)(all.n ? all.n : 1) * sizeof *v);
    int64_t n = 0;
    for (int64_t i = 0; rc == 0 && i < all.n; i++)
        if (cnt.a[i] >= min_count) v[n++] = (vword){cnt.a[i], cr_dict_name(&all, i)};
    qsort(v, (size_t)n, sizeof *v, cmp_vocab);
    for (int64_t i = 0; i < n; i++) cr_dict_add(d, v[i].w, strlen(v[i].w), NULL);
    free(v);
    cr_dict_free(&all);
    free(cnt.a);
    return rc == 0 ? 0 : -1;
}
