/* Word analogy and synonym tests (see cr_wordvec.h). Layout: a word index
 * (case-folded open-addressing hash over a vocabulary prefix), line
 * splitting, the analogy pass (batched and naive), the synonym test. */
#include "eval/cr_wordvec.h"

#include <cblas.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

/* ---- word index over words[0..n) */

typedef struct {
    const char *const *words;
    int64_t *slots; /* word id or -1 */
    uint64_t mask;
} windex;

static uint64_t fold_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a over lower-cased bytes */
    for (; *s; s++) h = (h ^ (uint64_t)tolower((unsigned char)*s)) * 1099511628211ull;
    return h;
}

static int fold_eq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

static void windex_build(windex *ix, const char *const *words, int64_t n) {
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2) cap <<= 1;
    ix->words = words;
    ix->mask = cap - 1;
    ix->slots = cr_xmalloc(cap * sizeof(int64_t));
    for (uint64_t i = 0; i < cap; i++) ix->slots[i] = -1;
    for (int64_t w = 0; w < n; w++)
        for (uint64_t p = fold_hash(words[w]) & ix->mask;; p = (p + 1) & ix->mask) {
            if (ix->slots[p] < 0) {
                ix->slots[p] = w;
                break;
            }
            if (fold_eq(words[ix->slots[p]], words[w])) break; /* keep the more frequent */
        }
}

/* Id of word s, or -1. */
static int64_t windex_get(const windex *ix, const char *s) {
    for (uint64_t p = fold_hash(s) & ix->mask;; p = (p + 1) & ix->mask) {
        if (ix->slots[p] < 0) return -1;
        if (fold_eq(ix->words[ix->slots[p]], s)) return ix->slots[p];
    }
}

static int check_vocab(const cr_mat *vecs, const char *const *words, int64_t nwords, cr_err *e) {
    if (vecs->rows != nwords)
        return cr_errf(e, "vectors have %lld rows but there are %lld words", (long long)vecs->rows,
                       (long long)nwords);
    if (nwords <= 0 || vecs->cols <= 0) return cr_errf(e, "empty vocabulary or zero-dimensional vectors");
    for (int64_t i = 0; i < nwords; i++)
        if (!words[i]) return cr_errf(e, "word %lld is missing", (long long)i + 1);
    return 0;
}

/* Unit-normalized copy of the first n rows (zero rows stay zero). */
static float *normalized(const cr_mat *v, int64_t n) {
    int64_t d = v->cols;
    float *m = cr_xmalloc((size_t)(n * d) * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        const float *x = cr_mat_row(v, i);
        double s = 0;
        for (int64_t k = 0; k < d; k++) s += (double)x[k] * x[k];
        float inv = s > 0 ? (float)(1.0 / sqrt(s)) : 0.0f;
        for (int64_t k = 0; k < d; k++) m[i * d + k] = x[k] * inv;
    }
    return m;
}

/* Split line (modified in place) at any of seps into at most max fields;
 * returns the number of fields found (which may exceed max: then the rest
 * is not stored). Empty fields between separators are dropped. */
static int split(char *line, const char *seps, char **f, int max) {
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, seps, &save); t; t = strtok_r(NULL, seps, &save)) {
        if (n < max) f[n] = t;
        n++;
    }
    return n;
}

static void chomp(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = 0;
}

/* ---- analogy */

typedef struct {
    int64_t a, b, c, d;
    int semantic;
} question;

typedef struct {
    const float *V; /* restrict_n x dim, normalized */
    int64_t nv, dim;
    int naive;
    int64_t block;
    question *q; /* pending questions, up to block */
    int64_t nq;
    float *Q, *S; /* block x dim queries, block x nv scores */
    cr_analogy_result *out;
} analogy_ctx;

static void count(analogy_ctx *c, const question *q, int64_t best) {
    int right = best == q->d;
    if (q->semantic) c->out->sem_correct += right;
    else c->out->syn_correct += right;
}

static int64_t argmax_except(const float *s, int64_t n, const question *q) {
    int64_t best = -1;
    float bs = -INFINITY;
    for (int64_t j = 0; j < n; j++)
        if (s[j] > bs && j != q->a && j != q->b && j != q->c) {
            bs = s[j];
            best = j;
        }
    return best;
}

static void make_query(const analogy_ctx *c, const question *q, float *out) {
    const float *a = c->V + q->a * c->dim, *b = c->V + q->b * c->dim, *cc = c->V + q->c * c->dim;
    for (int64_t k = 0; k < c->dim; k++) out[k] = b[k] - a[k] + cc[k];
}

/* Score the pending questions and clear them. */
static void flush(analogy_ctx *c) {
    if (c->nq == 0) return;
    if (c->naive) {
        float *s = c->S;
        for (int64_t i = 0; i < c->nq; i++) {
            make_query(c, &c->q[i], c->Q);
            for (int64_t j = 0; j < c->nv; j++) {
                const float *v = c->V + j * c->dim;
                float acc = 0;
                for (int64_t k = 0; k < c->dim; k++) acc += c->Q[k] * v[k];
                s[j] = acc;
            }
            count(c, &c->q[i], argmax_except(s, c->nv, &c->q[i]));
        }
    } else {
        for (int64_t i = 0; i < c->nq; i++) make_query(c, &c->q[i], c->Q + i * c->dim);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)c->nq, (int)c->nv, (int)c->dim, 1.0f, c->Q,
                    (int)c->dim, c->V, (int)c->dim, 0.0f, c->S, (int)c->nv);
        for (int64_t i = 0; i < c->nq; i++) count(c, &c->q[i], argmax_except(c->S + i * c->nv, c->nv, &c->q[i]));
    }
    c->nq = 0;
}

/* Read the question file; queue known questions, flushing full blocks. */
static int analogy_read(analogy_ctx *c, const windex *ix, const char *path, cr_err *e) {
    FILE *f = fopen(path, "r");
    if (!f) return cr_errf(e, "%s: cannot open: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int section = -1, rc = 0; /* -1: before the first header; else 1 semantic, 0 syntactic */
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        chomp(line);
        char *w[4];
        if (line[0] == ':') {
            int n = split(line + 1, " \t", w, 1);
            section = !(n > 0 && strncmp(w[0], "gram", 4) == 0);
            continue;
        }
        int n = split(line, " \t", w, 4);
        if (n == 0) continue;
        if (n != 4) {
            rc = cr_errf_at(e, path, lineno, "expected 4 words, got %d", n);
            break;
        }
        if (section < 0) {
            rc = cr_errf_at(e, path, lineno, "question before the first ': section' header");
            break;
        }
        if (section) c->out->sem_total++;
        else c->out->syn_total++;
        question q = {windex_get(ix, w[0]), windex_get(ix, w[1]), windex_get(ix, w[2]), windex_get(ix, w[3]),
                      section};
        if (q.a < 0 || q.b < 0 || q.c < 0 || q.d < 0) continue;
        if (section) c->out->sem_seen++;
        else c->out->syn_seen++;
        c->q[c->nq++] = q;
        if (c->nq == c->block) flush(c);
    }
    if (rc == 0 && ferror(f)) rc = cr_errf(e, "%s: read error: %s", path, strerror(errno));
    free(line);
    fclose(f);
    return rc;
}

static double ratio(int64_t a, int64_t b) { return b > 0 ? (double)a / (double)b : 0.0; }

int cr_analogy_eval(const cr_mat *vecs, const char *const *words, int64_t nwords, const char *path,
                    const cr_analogy_opts *opts, cr_analogy_result *out, cr_err *e) {
    if (check_vocab(vecs, words, nwords, e)) return -1;
    int64_t nv = opts && opts->restrict_n > 0 ? opts->restrict_n : 30000;
    if (opts && opts->restrict_n < 0) return cr_errf(e, "restrict must be positive");
    if (nv > nwords) nv = nwords;
    memset(out, 0, sizeof *out);
    analogy_ctx c = {.nv = nv, .dim = vecs->cols, .naive = opts && opts->naive, .out = out};
    c.block = opts && opts->block > 0 ? opts->block : ((int64_t)1 << 22) / nv;
    if (c.block < 1) c.block = 1;
    if (c.block > 1024) c.block = 1024;
    windex ix;
    windex_build(&ix, words, nv);
    float *V = normalized(vecs, nv);
    c.V = V;
    c.q = cr_xmalloc((size_t)c.block * sizeof(question));
    c.Q = cr_xmalloc((size_t)(c.block * c.dim) * sizeof(float));
    c.S = cr_xmalloc((size_t)((c.naive ? 1 : c.block) * nv) * sizeof(float));
    int rc = analogy_read(&c, &ix, path, e);
    if (rc == 0) flush(&c);
    free(ix.slots);
    free(V);
    free(c.q);
    free(c.Q);
    free(c.S);
    if (rc) return rc;
    out->sem_acc = ratio(out->sem_correct, out->sem_seen);
    out->syn_acc = ratio(out->syn_correct, out->syn_seen);
    out->acc = ratio(out->sem_correct + out->syn_correct, out->sem_seen + out->syn_seen);
    out->coverage = ratio(out->sem_seen + out->syn_seen, out->sem_total + out->syn_total);
    return 0;
}

/* ---- synonyms */

static double cosine(const cr_mat *v, int64_t i, int64_t j) {
    const float *a = cr_mat_row(v, i), *b = cr_mat_row(v, j);
    double ab = 0, aa = 0, bb = 0;
    for (int64_t k = 0; k < v->cols; k++) {
        ab += (double)a[k] * b[k];
        aa += (double)a[k] * a[k];
        bb += (double)b[k] * b[k];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
}

/* One question line (already split into 6 fields): updates out. */
static int synonym_line(const cr_mat *vecs, const windex *ix, char **f, const char *path, long lineno,
                        cr_synonym_result *out, cr_err *e) {
    char *end;
    errno = 0;
    long ans = strtol(f[5], &end, 10);
    if (errno || end == f[5] || *end || ans < 1 || ans > 4)
        return cr_errf_at(e, path, lineno, "answer '%s' is not a choice number 1-4", f[5]);
    out->total++;
    int64_t id[5];
    for (int i = 0; i < 5; i++)
        if ((id[i] = windex_get(ix, f[i])) < 0) return 0;
    out->covered++;
    int best = 0;
    double bs = -INFINITY;
    for (int i = 1; i <= 4; i++) {
        double c = cosine(vecs, id[0], id[i]);
        if (c > bs) {
            bs = c;
            best = i;
        }
    }
    out->correct += best == ans;
    return 0;
}

int cr_synonyms_eval(const cr_mat *vecs, const char *const *words, int64_t nwords, const char *path,
                     int64_t restrict_n, cr_synonym_result *out, cr_err *e) {
    if (check_vocab(vecs, words, nwords, e)) return -1;
    if (restrict_n < 0) return cr_errf(e, "restrict must be positive");
    int64_t nv = restrict_n > 0 && restrict_n < nwords ? restrict_n : nwords;
    FILE *f = fopen(path, "r");
    if (!f) return cr_errf(e, "%s: cannot open: %s", path, strerror(errno));
    memset(out, 0, sizeof *out);
    windex ix;
    windex_build(&ix, words, nv);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        chomp(line);
        if (line[strspn(line, " \t")] == 0) continue;
        char *fields[6];
        int n = split(line, "\t", fields, 6);
        if (n != 6) rc = cr_errf_at(e, path, lineno, "expected 6 TAB-separated fields (target, 4 choices, answer), got %d", n);
        else rc = synonym_line(vecs, &ix, fields, path, lineno, out, e);
    }
    if (rc == 0 && ferror(f)) rc = cr_errf(e, "%s: read error: %s", path, strerror(errno));
    free(line);
    free(ix.slots);
    fclose(f);
    if (rc) return rc;
    out->accuracy = ratio(out->correct, out->covered);
    out->coverage = ratio(out->covered, out->total);
    return 0;
}
