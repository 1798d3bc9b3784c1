/* cr_bigraph_load: a compact streaming reader for the three input formats of
 * the partitioners. It reads each line once, keeps only the (u, v) pairs
 * (8 bytes per edge) and hands them to cr_bigraph_from_edges. The general
 * readers of src/data may replace it later; the formats are the same. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "partition/cr_bigraph.h"

typedef struct edges {
    uint32_t *u, *v;
    uint64_t n, cap;
} edges;

static void push(edges *es, uint32_t u, uint32_t v) {
    if (es->n == es->cap) {
        es->cap = es->cap ? es->cap * 2 : 4096;
        es->u = cr_xrealloc(es->u, es->cap * sizeof *es->u);
        es->v = cr_xrealloc(es->v, es->cap * sizeof *es->v);
    }
    es->u[es->n] = u;
    es->v[es->n] = v;
    es->n++;
}

static const char *skip_ws(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    return s;
}

/* Parse a non-negative integer below 2^32 - 1 at s; *end after it. Returns 0
 * or -1 (no digits, or too large). */
static int parse_id(const char *s, const char **end, uint64_t *out) {
    if (*s < '0' || *s > '9') return -1;
    uint64_t x = 0;
    while (*s >= '0' && *s <= '9') {
        x = x * 10 + (uint64_t)(*s - '0');
        if (x >= UINT32_MAX) return -1;
        s++;
    }
    *out = x;
    *end = s;
    return 0;
}

static int is_blank_or_comment(const char *s, const char *comments) {
    s = skip_ws(s);
    return *s == '\0' || strchr(comments, *s) != NULL;
}

/* One LIBSVM line: "label[,label...] idx:val idx:val ..." -> edges (u, idx). */
static int libsvm_line(const char *s, uint32_t u, edges *es, const char *path, long ln, cr_err *e) {
    s = skip_ws(s);
    const char *p = s;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (memchr(s, ':', (size_t)(p - s))) return cr_errf_at(e, path, ln, "missing label before features");
    for (s = skip_ws(p); *s && *s != '#'; s = skip_ws(s)) {
        uint64_t idx;
        if (parse_id(s, &s, &idx) != 0) return cr_errf_at(e, path, ln, "bad feature index (expected idx:value)");
        if (*s != ':') return cr_errf_at(e, path, ln, "expected ':' after feature index %llu", (unsigned long long)idx);
        s++;
        char *end;
        errno = 0;
        (void)strtod(s, &end);
        if (end == s || errno == ERANGE) return cr_errf_at(e, path, ln, "bad feature value after index %llu", (unsigned long long)idx);
        s = end;
        if (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return cr_errf_at(e, path, ln, "bad feature value after index %llu", (unsigned long long)idx);
        if (idx == 0) return cr_errf_at(e, path, ln, "feature index 0 (LIBSVM feature ids start at 1)");
        push(es, u, (uint32_t)(idx - 1)); /* 1-based in the file, as cr.data.libsvm reads it */
    }
    return 0;
}

/* Two ids "a b" (rest of line ignored after an optional value). */
static int two_ids(const char *s, uint64_t *a, uint64_t *b) {
    s = skip_ws(s);
    if (parse_id(s, &s, a) != 0 || (*s != ' ' && *s != '\t')) return -1;
    s = skip_ws(s);
    if (parse_id(s, &s, b) != 0) return -1;
    return (*s == '\0' || *s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') ? 0 : -1;
}

typedef struct mm_state {
    int have_size, symmetric;
    uint64_t rows, cols, nnz, seen;
} mm_state;

static int mm_line(const char *s, long ln, mm_state *st, edges *es, const char *path, cr_err *e) {
    if (ln == 1 && !strncmp(s, "%%MatrixMarket", 14)) {
        if (!strstr(s, "coordinate")) return cr_errf_at(e, path, ln, "only MatrixMarket coordinate format is supported");
        st->symmetric = strstr(s, "symmetric") != NULL || strstr(s, "hermitian") != NULL;
        return 0;
    }
    if (is_blank_or_comment(s, "%")) return 0;
    if (!st->have_size) {
        const char *p = skip_ws(s);
        uint64_t r, c, z;
        if (parse_id(p, &p, &r) || parse_id(skip_ws(p), &p, &c) || parse_id(skip_ws(p), &p, &z) ||
            *skip_ws(p) != '\0')
            return cr_errf_at(e, path, ln, "expected size line 'rows cols entries'");
        st->rows = r, st->cols = c, st->nnz = z, st->have_size = 1;
        return 0;
    }
    uint64_t i, j;
    if (two_ids(s, &i, &j) != 0) return cr_errf_at(e, path, ln, "expected 'row col [value]'");
    if (i < 1 || j < 1 || i > st->rows || j > st->cols)
        return cr_errf_at(e, path, ln, "entry (%llu, %llu) outside the %llux%llu matrix", (unsigned long long)i,
                          (unsigned long long)j, (unsigned long long)st->rows, (unsigned long long)st->cols);
    if (++st->seen > st->nnz) return cr_errf_at(e, path, ln, "more entries than the %llu announced", (unsigned long long)st->nnz);
    push(es, (uint32_t)(i - 1), (uint32_t)(j - 1));
    if (st->symmetric && i != j) push(es, (uint32_t)(j - 1), (uint32_t)(i - 1));
    return 0;
}

cr_bigraph *cr_bigraph_load(const char *path, cr_bigraph_format fmt, cr_err *e) {
    FILE *f = fopen(path, "r");
    if (!f) return cr_errf(e, "%s: %s", path, strerror(errno)), NULL;
    edges es = {0};
    mm_state mm = {0};
    char *line = NULL;
    size_t cap = 0;
    long ln = 0;
    uint32_t nu = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, f) != -1) {
        ln++;
        if (fmt == CR_BIGRAPH_LIBSVM) {
            if (is_blank_or_comment(line, "#")) continue;
            if (nu == UINT32_MAX - 1) rc = cr_errf_at(e, path, ln, "too many examples");
            else rc = libsvm_line(line, nu++, &es, path, ln, e);
        } else if (fmt == CR_BIGRAPH_MM) {
            rc = mm_line(line, ln, &mm, &es, path, e);
        } else {
            if (is_blank_or_comment(line, "#%")) continue;
            uint64_t a, b;
            if (two_ids(line, &a, &b) != 0) rc = cr_errf_at(e, path, ln, "expected 'source target' (two non-negative integers)");
            else {
                push(&es, (uint32_t)a, (uint32_t)b);
                if (a != b) push(&es, (uint32_t)b, (uint32_t)a);
            }
        }
    }
    if (rc == 0 && ferror(f)) rc = cr_errf(e, "%s: read error", path);
    if (rc == 0 && fmt == CR_BIGRAPH_MM && !mm.have_size) rc = cr_errf_at(e, path, ln, "missing MatrixMarket size line");
    if (rc == 0 && fmt == CR_BIGRAPH_MM && mm.seen != mm.nnz)
        rc = cr_errf_at(e, path, ln, "%llu entries announced, %llu found", (unsigned long long)mm.nnz,
                        (unsigned long long)mm.seen);
    free(line);
    fclose(f);
    cr_bigraph *g = NULL;
    if (rc == 0) {
        uint32_t nv = 0;
        if (fmt == CR_BIGRAPH_MM) nu = (uint32_t)mm.rows, nv = (uint32_t)mm.cols;
        if (fmt == CR_BIGRAPH_EDGES) {
            for (uint64_t i = 0; i < es.n; i++) if (es.u[i] >= nu) nu = es.u[i] + 1;
            nv = nu;
        }
        if (fmt == CR_BIGRAPH_LIBSVM) {
            for (uint64_t i = 0; i < es.n; i++) if (es.v[i] >= nv) nv = es.v[i] + 1;
        }
        if (fmt == CR_BIGRAPH_MM && (mm.rows >= UINT32_MAX || mm.cols >= UINT32_MAX))
            cr_errf(e, "%s: matrix too large", path);
        else
            g = cr_bigraph_from_edges(es.u, es.v, es.n, nu, nv, e);
    }
    free(es.u);
    free(es.v);
    return g;
}

int cr_bigraph_format_parse(const char *name, cr_bigraph_format *out) {
    if (!strcmp(name, "libsvm")) *out = CR_BIGRAPH_LIBSVM;
    else if (!strcmp(name, "mm") || !strcmp(name, "matrixmarket")) *out = CR_BIGRAPH_MM;
    else if (!strcmp(name, "edges") || !strcmp(name, "edgelist")) *out = CR_BIGRAPH_EDGES;
    else return -1;
    return 0;
}

cr_bigraph_format cr_bigraph_format_guess(const char *path) {
    const char *dot = strrchr(path, '.');
    if (dot && (!strcmp(dot, ".mtx") || !strcmp(dot, ".mm") || !strcmp(dot, ".mmc"))) return CR_BIGRAPH_MM;
    if (dot && (!strcmp(dot, ".edges") || !strcmp(dot, ".el") || !strcmp(dot, ".tsv"))) return CR_BIGRAPH_EDGES;
    return CR_BIGRAPH_LIBSVM;
}
