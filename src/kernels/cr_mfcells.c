/* MF data layout and batching: see cr_mfcells.h. */
#include "kernels/cr_mfcells.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

struct cr_mfcells {
    cr_mm_header hdr;
    int64_t row_lo, row_hi;
    int64_t n;       /* cells */
    int32_t *row;    /* n, grouped by column */
    float *val;      /* n */
    int64_t ngroups; /* distinct columns */
    int32_t *gcol;   /* ngroups: column id of each group */
    int64_t *gstart; /* ngroups + 1 */
    int64_t *order;  /* ngroups: walk order of groups */
    /* batch buffers */
    int32_t *bwi, *bhj;
    float *bx;
    int64_t bcap;
    int64_t *wkeys, *hkeys;
    int64_t hcap;
    int32_t *stamp, *local; /* per row in [row_lo, row_hi) */
    int32_t cur_stamp;
};

/* ---- streaming MatrixMarket coordinate reader ---- */

typedef struct mm_reader {
    FILE *f;
    const char *path;
    long line;
    char *buf;
    size_t cap;
    cr_mm_header hdr;
} mm_reader;

static int next_line(mm_reader *r) {
    ssize_t len = getline(&r->buf, &r->cap, r->f);
    if (len < 0) return 0;
    r->line++;
    return 1;
}

static int blank(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    return *s == '\0';
}

static int mm_open(mm_reader *r, const char *path, cr_err *e) {
    memset(r, 0, sizeof *r);
    r->path = path;
    r->f = fopen(path, "r");
    if (!r->f) return cr_errf(e, "%s: cannot open: %s", path, strerror(errno));
    if (!next_line(r)) return cr_errf_at(e, path, 1, "empty file (expected a %%%%MatrixMarket banner)");
    if (strncmp(r->buf, "%%MatrixMarket", 14) != 0 || !strstr(r->buf, "coordinate") ||
        !(strstr(r->buf, "real") || strstr(r->buf, "integer")) || !strstr(r->buf, "general"))
        return cr_errf_at(e, path, r->line,
                          "expected banner '%%%%MatrixMarket matrix coordinate real general'");
    while (next_line(r)) {
        if (r->buf[0] == '%' || blank(r->buf)) continue;
        char *p = r->buf, *end;
        int64_t v[3];
        for (int k = 0; k < 3; k++) {
            errno = 0;
            v[k] = strtoll(p, &end, 10);
            if (end == p || errno || v[k] < 0)
                return cr_errf_at(e, path, r->line, "size line: expected 'rows cols entries'");
            p = end;
        }
        if (!blank(p)) return cr_errf_at(e, path, r->line, "size line: trailing text after 'rows cols entries'");
        if (v[0] > INT32_MAX || v[1] > INT32_MAX)
            return cr_errf_at(e, path, r->line, "size line: more than %d rows or columns", INT32_MAX);
        r->hdr.rows = v[0];
        r->hdr.cols = v[1];
        r->hdr.nnz = v[2];
        return 0;
    }
    return cr_errf_at(e, path, r->line + 1, "missing size line");
}

static void mm_close(mm_reader *r) {
    if (r->f) fclose(r->f);
    free(r->buf);
    r->f = NULL;
    r->buf = NULL;
}

/* Next entry (0-based). 1 = entry, 0 = end (count checked), -1 = error. */
static int mm_entry(mm_reader *r, int64_t *seen, int32_t *i, int32_t *j, float *x, cr_err *e) {
    while (next_line(r)) {
        if (r->buf[0] == '%' || blank(r->buf)) continue;
        if (*seen >= r->hdr.nnz)
            return cr_errf_at(e, r->path, r->line, "more entries than the %lld declared",
                              (long long)r->hdr.nnz);
        char *p = r->buf, *end;
        errno = 0;
        long long a = strtoll(p, &end, 10);
        if (end == p || errno) return cr_errf_at(e, r->path, r->line, "expected 'row col value'");
        p = end;
        long long b = strtoll(p, &end, 10);
        if (end == p || errno) return cr_errf_at(e, r->path, r->line, "expected 'row col value'");
        p = end;
        float v = strtof(p, &end);
        if (end == p) return cr_errf_at(e, r->path, r->line, "expected 'row col value'");
        if (!isfinite(v)) return cr_errf_at(e, r->path, r->line, "value is not a finite number");
        if (!blank(end)) return cr_errf_at(e, r->path, r->line, "trailing text after 'row col value'");
        if (a < 1 || a > r->hdr.rows)
            return cr_errf_at(e, r->path, r->line, "row %lld out of range [1, %lld]", a, (long long)r->hdr.rows);
        if (b < 1 || b > r->hdr.cols)
            return cr_errf_at(e, r->path, r->line, "column %lld out of range [1, %lld]", b,
                              (long long)r->hdr.cols);
        *i = (int32_t)(a - 1);
        *j = (int32_t)(b - 1);
        *x = v;
        (*seen)++;
        return 1;
    }
    if (ferror(r->f)) return cr_errf(e, "%s: read error", r->path);
    if (*seen < r->hdr.nnz)
        return cr_errf_at(e, r->path, r->line, "end of file after %lld of %lld declared entries",
                          (long long)*seen, (long long)r->hdr.nnz);
    return 0;
}

int cr_mm_read_header(const char *path, cr_mm_header *h, cr_err *e) {
    mm_reader r;
    int rc = mm_open(&r, path, e);
    if (rc == 0) *h = r.hdr;
    mm_close(&r);
    return rc;
}

/* ---- loading ---- */

typedef struct {
    int64_t count;
    int32_t col;
} colcount;

static int by_count_desc(const void *a, const void *b) {
    const colcount *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->col > y->col) - (x->col < y->col);
}

/* owner[col] = part that gets the column (greedy by count), -1 if empty. */
static int32_t *deal_columns(const int64_t *count, int64_t cols, int parts) {
    int32_t *owner = cr_xmalloc((size_t)(cols ? cols : 1) * sizeof *owner);
    colcount *cc = cr_xmalloc((size_t)(cols ? cols : 1) * sizeof *cc);
    int64_t m = 0;
    for (int64_t j = 0; j < cols; j++) {
        owner[j] = -1;
        if (count[j]) cc[m++] = (colcount){count[j], (int32_t)j};
    }
    qsort(cc, (size_t)m, sizeof *cc, by_count_desc);
    int64_t *load = cr_xcalloc((size_t)parts, sizeof *load);
    for (int64_t k = 0; k < m; k++) {
        int best = 0;
        for (int p = 1; p < parts; p++)
            if (load[p] < load[best]) best = p;
        load[best] += cc[k].count;
        owner[cc[k].col] = best;
    }
    free(load);
    free(cc);
    return owner;
}

cr_mfcells *cr_mfcells_load(const char *path, const cr_mfcells_opts *opts, cr_err *e) {
    cr_mfcells_opts o = opts ? *opts : (cr_mfcells_opts){0, -1, 0, 1};
    if (o.parts < 1 || o.part < 0 || o.part >= o.parts) {
        cr_errf(e, "%s: worker part %d of %d is out of range", path, o.part, o.parts);
        return NULL;
    }
    mm_reader r;
    if (mm_open(&r, path, e)) {
        mm_close(&r);
        return NULL;
    }
    int64_t lo = o.row_lo < 0 ? 0 : o.row_lo;
    int64_t hi = o.row_hi < 0 || o.row_hi > r.hdr.rows ? r.hdr.rows : o.row_hi;
    if (lo > hi) lo = hi;
    /* 1. this node's cells */
    int64_t n = 0, cap = 1024, seen = 0;
    int32_t *ri = cr_xmalloc((size_t)cap * sizeof *ri), *ci = cr_xmalloc((size_t)cap * sizeof *ci);
    float *xv = cr_xmalloc((size_t)cap * sizeof *xv);
    int rc;
    int32_t i = 0, j = 0;
    float x = 0;
    while ((rc = mm_entry(&r, &seen, &i, &j, &x, e)) == 1) {
        if (i < lo || i >= hi) continue;
        if (n == cap) {
            cap *= 2;
            ri = cr_xrealloc(ri, (size_t)cap * sizeof *ri);
            ci = cr_xrealloc(ci, (size_t)cap * sizeof *ci);
            xv = cr_xrealloc(xv, (size_t)cap * sizeof *xv);
        }
        ri[n] = i;
        ci[n] = j;
        xv[n] = x;
        n++;
    }
    cr_mm_header hdr = r.hdr;
    mm_close(&r);
    if (rc < 0) {
        free(ri);
        free(ci);
        free(xv);
        return NULL;
    }
    /* 2. deal columns to workers, keep mine, group by column (counting sort) */
    int64_t cols = hdr.cols;
    int64_t *count = cr_xcalloc((size_t)cols + 1, sizeof *count);
    for (int64_t k = 0; k < n; k++) count[ci[k]]++;
    int32_t *owner = deal_columns(count, cols, o.parts);
    cr_mfcells *c = cr_xcalloc(1, sizeof *c);
    c->hdr = hdr;
    c->row_lo = lo;
    c->row_hi = hi;
    for (int64_t jj = 0; jj < cols; jj++) {
        if (owner[jj] != o.part) count[jj] = 0;
        if (count[jj]) c->ngroups++;
        c->n += count[jj];
    }
    c->row = cr_xmalloc((size_t)(c->n ? c->n : 1) * sizeof *c->row);
    c->val = cr_xmalloc((size_t)(c->n ? c->n : 1) * sizeof *c->val);
    c->gcol = cr_xmalloc((size_t)(c->ngroups ? c->ngroups : 1) * sizeof *c->gcol);
    c->gstart = cr_xmalloc((size_t)(c->ngroups + 1) * sizeof *c->gstart);
    c->order = cr_xmalloc((size_t)(c->ngroups ? c->ngroups : 1) * sizeof *c->order);
    int64_t *fill = cr_xmalloc((size_t)(cols ? cols : 1) * sizeof *fill);
    int64_t g = 0, at = 0;
    for (int64_t jj = 0; jj < cols; jj++) {
        fill[jj] = at;
        if (!count[jj]) continue;
        c->gcol[g] = (int32_t)jj;
        c->gstart[g] = at;
        c->order[g] = g;
        g++;
        at += count[jj];
    }
    c->gstart[g] = at;
    for (int64_t k = 0; k < n; k++) {
        if (owner[ci[k]] != o.part) continue;
        int64_t dst = fill[ci[k]]++;
        c->row[dst] = ri[k];
        c->val[dst] = xv[k];
    }
    free(fill);
    free(owner);
    free(count);
    free(ri);
    free(ci);
    free(xv);
    int64_t span = hi - lo;
    c->stamp = cr_xcalloc((size_t)(span ? span : 1), sizeof *c->stamp);
    c->local = cr_xmalloc((size_t)(span ? span : 1) * sizeof *c->local);
    return c;
}

void cr_mfcells_destroy(cr_mfcells **cp) {
    if (!cp || !*cp) return;
    cr_mfcells *c = *cp;
    free(c->row);
    free(c->val);
    free(c->gcol);
    free(c->gstart);
    free(c->order);
    free(c->bwi);
    free(c->bhj);
    free(c->bx);
    free(c->wkeys);
    free(c->hkeys);
    free(c->stamp);
    free(c->local);
    free(c);
    *cp = NULL;
}

int64_t cr_mfcells_count(const cr_mfcells *c) { return c->n; }
int64_t cr_mfcells_columns(const cr_mfcells *c) { return c->ngroups; }
const cr_mm_header *cr_mfcells_header(const cr_mfcells *c) { return &c->hdr; }

void cr_mfcells_shuffle(cr_mfcells *c, uint64_t seed) {
    cr_rng r;
    cr_rng_seed(&r, seed);
    cr_rng_shuffle_u64(&r, (uint64_t *)c->order, (uint64_t)c->ngroups);
}

static void reserve(cr_mfcells *c, int64_t cells, int64_t groups) {
    if (cells > c->bcap) {
        c->bcap = cells > 2 * c->bcap ? cells : 2 * c->bcap;
        c->bwi = cr_xrealloc(c->bwi, (size_t)c->bcap * sizeof *c->bwi);
        c->bhj = cr_xrealloc(c->bhj, (size_t)c->bcap * sizeof *c->bhj);
        c->bx = cr_xrealloc(c->bx, (size_t)c->bcap * sizeof *c->bx);
        c->wkeys = cr_xrealloc(c->wkeys, (size_t)c->bcap * sizeof *c->wkeys);
    }
    if (groups > c->hcap) {
        c->hcap = groups > 2 * c->hcap ? groups : 2 * c->hcap;
        c->hkeys = cr_xrealloc(c->hkeys, (size_t)c->hcap * sizeof *c->hkeys);
    }
}

int cr_mfcells_next(cr_mfcells *c, int64_t *pos, int64_t max_cells, cr_mfcells_batch *b) {
    int64_t p = *pos < 0 ? 0 : *pos;
    if (p >= c->ngroups) return 0;
    int64_t q = p, cells = 0;
    while (q < c->ngroups && (q == p || cells < max_cells)) {
        int64_t g = c->order[q++];
        cells += c->gstart[g + 1] - c->gstart[g];
    }
    reserve(c, cells, q - p);
    if (++c->cur_stamp == INT32_MAX) { /* new stamp generation */
        memset(c->stamp, 0, (size_t)(c->row_hi - c->row_lo) * sizeof *c->stamp);
        c->cur_stamp = 1;
    }
    int64_t at = 0, nw = 0;
    for (int64_t k = p; k < q; k++) {
        int64_t g = c->order[k];
        int32_t hj = (int32_t)(k - p);
        c->hkeys[hj] = c->gcol[g];
        for (int64_t s = c->gstart[g]; s < c->gstart[g + 1]; s++, at++) {
            int64_t r = c->row[s] - c->row_lo;
            if (c->stamp[r] != c->cur_stamp) {
                c->stamp[r] = c->cur_stamp;
                c->local[r] = (int32_t)nw;
                c->wkeys[nw++] = c->row[s];
            }
            c->bwi[at] = c->local[r];
            c->bhj[at] = hj;
            c->bx[at] = c->val[s];
        }
    }
    b->cells = (cr_mf_batch){cells, c->bwi, c->bhj, c->bx};
    b->nw = nw;
    b->nh = q - p;
    b->wkeys = c->wkeys;
    b->hkeys = c->hkeys;
    *pos = q;
    return 1;
}
