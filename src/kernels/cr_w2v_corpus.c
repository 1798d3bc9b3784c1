/* The streamed word2vec corpus: see cr_w2v_corpus.h. */
#include "kernels/cr_w2v_corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "data/cr_lines.h"
#include "data/cr_text.h"
#include "data/cr_vec.h"
#include "kernels/cr_w2v.h"

static int is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r'; }

/* The next token of [*p, end) into [*w, *w + *len); 0 when there is none. */
static inline int next_token(char **p, char *end, char **w, size_t *len) {
    char *q = *p;
    while (q < end && is_space(*q)) q++;
    *w = q;
    while (q < end && !is_space(*q)) q++;
    *p = q;
    *len = (size_t)(q - *w);
    return *len > 0;
}

/* ---- vocabulary ---- */

/* Every word of path into first (order of appearance) with its count. */
static int count_pass(const char *path, cr_dict *first, cr_i64v *cnt, cr_w2v_vocab *v, cr_err *e) {
    cr_lines *in = cr_lines_open(path, e);
    if (!in) return -1;
    char *s, *w;
    size_t len, wl;
    int rc;
    while ((rc = cr_lines_next(in, &s, &len, e)) == 1) {
        char *p = s, *end = s + len;
        v->lines++;
        while (next_token(&p, end, &w, &wl)) {
            int added;
            int64_t id = cr_dict_add(first, w, wl, &added);
            if (added) cr_i64v_push(cnt, 0);
            cnt->a[id]++;
            v->raw++;
        }
    }
    cr_lines_close(&in);
    return rc;
}

int cr_w2v_vocab_count(const char *path, int64_t min_count, cr_w2v_vocab *v, cr_err *e) {
    memset(v, 0, sizeof *v);
    cr_dict_init(&v->words);
    if (min_count < 1) return cr_errf(e, "min_count must be >= 1");
    cr_dict first;
    cr_dict_init(&first);
    cr_i64v cnt = {0};
    int rc = count_pass(path, &first, &cnt, v, e);
    if (rc == 0 && v->raw == 0) rc = cr_errf(e, "%s: empty corpus (no words)", path);
    if (rc == 0) {
        v->count = cr_xmalloc((size_t)first.n * sizeof *v->count);
        v->kept = cr_vocab_build(&first, cnt.a, min_count, &v->words, v->count, NULL);
        if (v->words.n == 0)
            rc = cr_errf(e, "%s: no word occurs min_count = %lld times", path, (long long)min_count);
    }
    free(cnt.a);
    cr_dict_free(&first);
    return rc == 0 ? 0 : -1;
}

int cr_w2v_vocab_parse(const char *text, size_t len, cr_w2v_vocab *v, cr_err *e) {
    memset(v, 0, sizeof *v);
    cr_dict_init(&v->words);
    cr_i64v cnt = {0};
    const char *p = text, *end = text + len;
    int64_t line = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        line++;
        const char *sp = p;
        while (sp < nl && *sp != ' ') sp++;
        char *stop = NULL;
        long long c = sp < nl ? strtoll(sp + 1, &stop, 10) : -1;
        if (sp == p || sp >= nl || stop != nl || c < 0) {
            free(cnt.a);
            return cr_errf(e, "vocab:%lld: expected \"word count\"", (long long)line);
        }
        int added;
        cr_dict_add(&v->words, p, (size_t)(sp - p), &added);
        if (!added) {
            free(cnt.a);
            return cr_errf(e, "vocab:%lld: word '%.*s' given twice", (long long)line, (int)(sp - p), p);
        }
        cr_i64v_push(&cnt, c);
        v->kept += c;
        p = nl + 1;
    }
    v->count = cnt.a;
    return 0;
}

char *cr_w2v_vocab_text(const cr_w2v_vocab *v, size_t *len) {
    size_t cap = v->words.text_len + (size_t)v->words.n * 22 + 1, n = 0;
    char *s = cr_xmalloc(cap);
    for (int64_t i = 0; i < v->words.n; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s %lld\n", cr_dict_name(&v->words, i), (long long)v->count[i]);
    *len = n;
    return s;
}

void cr_w2v_vocab_free(cr_w2v_vocab *v) {
    cr_dict_free(&v->words);
    free(v->count);
    memset(v, 0, sizeof *v);
}

/* ---- the reader ---- */

/* One batch's buffers. The reader has two: the current batch (what next
 * returned, what pool maps onto) and the one peek read ahead. */
typedef struct rbuf {
    int32_t *slot; /* word -> row in this batch, -1 */
    cr_i64v keys, sent, extra_src;
    int32_t *row;
    int64_t nrow, caprow;
} rbuf;

struct cr_w2v_reader {
    char *path;
    const cr_w2v_vocab *v;
    cr_w2v_reader_opts o;
    uint64_t seed;
    cr_lines *in;
    cr_rng rng;
    float *keep; /* keep probability per word */
    rbuf buf[2];
    int cur;              /* buf[cur]: the current batch */
    int peeked, peek_rc;  /* buf[1 - cur] holds the next batch (peek_b), and next's code for it */
    cr_w2v_rbatch peek_b;
    int32_t *negs;
    int64_t capnegs;
    float *scratch[2];
    int64_t capscratch[2];
    int64_t line; /* lines read */
    char *rest, *rest_end; /* unread part of the current line, or NULL */
};

static void reset_batch(rbuf *u, cr_w2v_rbatch *b) {
    for (int64_t k = 0; k < u->keys.n; k++) u->slot[u->keys.a[k]] = -1;
    u->keys.n = u->sent.n = u->extra_src.n = 0;
    u->nrow = 0;
    memset(b, 0, sizeof *b);
    cr_i64v_push(&u->sent, 0);
}

cr_w2v_reader *cr_w2v_reader_open(const char *path, const cr_w2v_vocab *v, const cr_w2v_reader_opts *o,
                                  uint64_t seed, cr_err *e) {
    if (o->parts < 1 || o->part < 0 || o->part >= o->parts) {
        cr_errf(e, "bad part %lld of %lld", (long long)o->part, (long long)o->parts);
        return NULL;
    }
    if (o->batch < 1 || o->max_sentence < 1 || !(o->sample >= 0)) {
        cr_errf(e, "batch and max_sentence must be >= 1 and sample >= 0");
        return NULL;
    }
    cr_w2v_reader *r = cr_xcalloc(1, sizeof *r);
    r->path = cr_xstrdup(path);
    r->v = v;
    r->o = *o;
    r->seed = seed;
    int64_t nw = v->words.n;
    r->keep = cr_xmalloc((size_t)(nw ? nw : 1) * sizeof *r->keep);
    for (int i = 0; i < 2; i++) r->buf[i].slot = cr_xmalloc((size_t)(nw ? nw : 1) * sizeof *r->buf[i].slot);
    for (int64_t w = 0; w < nw; w++) {
        r->keep[w] = (float)cr_w2v_keep_prob((uint64_t)v->count[w], (uint64_t)v->kept, o->sample);
        r->buf[0].slot[w] = r->buf[1].slot[w] = -1;
    }
    if (cr_w2v_reader_rewind(r, 0, e) != 0) cr_w2v_reader_close(&r);
    return r;
}

int cr_w2v_reader_rewind(cr_w2v_reader *r, int64_t epoch, cr_err *e) {
    cr_lines_close(&r->in);
    r->in = cr_lines_open(r->path, e);
    r->line = 0;
    r->rest = r->rest_end = NULL;
    r->peeked = 0;
    cr_rng_seed2(&r->rng, r->seed + (uint64_t)epoch * 0x9E3779B97F4A7C15ull, (uint64_t)r->o.part);
    return r->in ? 0 : -1;
}

static void push_row(rbuf *u, int32_t x) {
    if (u->nrow == u->caprow) {
        u->caprow = u->caprow ? u->caprow * 2 : 4096;
        u->row = cr_xrealloc(u->row, (size_t)u->caprow * sizeof *u->row);
    }
    u->row[u->nrow++] = x;
}

/* Tokens of [p, end) (a line or the rest of one) into the batch. Returns
 * where it stopped: end, or the end of a sentence cut at max_sentence once
 * the batch is full (so a corpus on one long line, like text8, still comes
 * in batches). */
static char *take_line(cr_w2v_reader *r, rbuf *u, char *p, char *end, cr_w2v_rbatch *b) {
    char *w;
    size_t wl;
    int64_t start = u->nrow;
    while (next_token(&p, end, &w, &wl)) {
        b->raw++;
        int64_t id = cr_dict_find(&r->v->words, w, wl);
        if (id < 0) continue;
        b->words++;
        if (cr_rng_uniform(&r->rng) >= r->keep[id]) continue;
        if (u->slot[id] < 0) {
            u->slot[id] = (int32_t)u->keys.n;
            cr_i64v_push(&u->keys, id);
        }
        push_row(u, u->slot[id]);
        if (u->nrow - start == r->o.max_sentence) {
            cr_i64v_push(&u->sent, u->nrow);
            start = u->nrow;
            if (b->raw >= r->o.batch) return p;
        }
    }
    if (u->nrow > start) cr_i64v_push(&u->sent, u->nrow);
    return end;
}

/* Read the next batch into u and *b: next's return code. */
static int read_batch(cr_w2v_reader *r, rbuf *u, cr_w2v_rbatch *b, cr_err *e) {
    reset_batch(u, b);
    char *s, *stop;
    size_t len;
    int rc = 1;
    if (r->rest) { /* the line the last batch stopped in */
        stop = take_line(r, u, r->rest, r->rest_end, b);
        r->rest = stop < r->rest_end ? stop : NULL;
    }
    while (!r->rest && b->raw < r->o.batch && (rc = cr_lines_next(r->in, &s, &len, e)) == 1) {
        if (r->line++ % r->o.parts != r->o.part) continue;
        stop = take_line(r, u, s, s + len, b);
        if (stop < s + len) r->rest = stop, r->rest_end = s + len; /* valid until the next cr_lines_next */
    }
    if (rc < 0) return -1;
    b->n = u->nrow;
    b->row = u->row;
    b->sent = u->sent.a;
    b->nsent = u->sent.n - 1;
    b->nkeys = u->keys.n;
    b->keys = u->keys.a;
    return b->raw > 0 || rc == 1 || r->rest ? 1 : 0;
}

int cr_w2v_reader_next(cr_w2v_reader *r, cr_w2v_rbatch *b, cr_err *e) {
    if (!r->peeked) return read_batch(r, &r->buf[r->cur], b, e);
    cr_w2v_rbatch dummy;
    reset_batch(&r->buf[r->cur], &dummy); /* the old current batch's words leave its map */
    r->cur = 1 - r->cur;
    r->peeked = 0;
    *b = r->peek_b;
    return r->peek_rc;
}

int cr_w2v_reader_peek(cr_w2v_reader *r, cr_w2v_rbatch *b, cr_err *e) {
    if (!r->peeked) {
        r->peek_rc = read_batch(r, &r->buf[1 - r->cur], &r->peek_b, e);
        if (r->peek_rc < 0) return -1;
        r->peeked = 1;
    }
    *b = r->peek_b;
    return r->peek_rc;
}

int cr_w2v_reader_pool(cr_w2v_reader *r, cr_w2v_rbatch *b, const int64_t *pool, int64_t m, cr_err *e) {
    rbuf *u = &r->buf[r->cur];
    if (m > r->capnegs) {
        r->capnegs = m;
        r->negs = cr_xrealloc(r->negs, (size_t)m * sizeof *r->negs);
    }
    u->keys.n = b->nkeys; /* a second pool for the same batch replaces the first */
    for (int64_t k = 0; k < u->extra_src.n; k++) u->slot[u->keys.a[b->nkeys + k]] = -1;
    u->extra_src.n = 0;
    int64_t nw = r->v->words.n;
    for (int64_t j = 0; j < m; j++) {
        int64_t id = pool[j];
        if (id < 0 || id >= nw) return cr_errf(e, "pool entry %lld is %lld, not a word id", (long long)j + 1,
                                               (long long)id);
        if (u->slot[id] < 0) {
            u->slot[id] = (int32_t)u->keys.n;
            cr_i64v_push(&u->keys, id);
            cr_i64v_push(&u->extra_src, j);
        }
        r->negs[j] = u->slot[id];
    }
    b->keys = u->keys.a;
    b->nextra = u->extra_src.n;
    b->extra_src = u->extra_src.a;
    b->negs = r->negs;
    b->nnegs = m;
    return 0;
}

float *cr_w2v_reader_scratch(cr_w2v_reader *r, int which, int64_t n) {
    if (n > r->capscratch[which]) {
        free(r->scratch[which]);
        r->capscratch[which] = n + n / 4;
        r->scratch[which] = cr_xmalloc((size_t)r->capscratch[which] * sizeof(float));
    }
    return r->scratch[which];
}

void cr_w2v_reader_close(cr_w2v_reader **rp) {
    cr_w2v_reader *r = *rp;
    if (!r) return;
    cr_lines_close(&r->in);
    free(r->path);
    free(r->keep);
    for (int i = 0; i < 2; i++) {
        free(r->buf[i].slot);
        free(r->buf[i].keys.a);
        free(r->buf[i].sent.a);
        free(r->buf[i].extra_src.a);
        free(r->buf[i].row);
    }
    free(r->negs);
    free(r->scratch[0]);
    free(r->scratch[1]);
    free(r);
    *rp = NULL;
}
