/* MF data layout and batching: see cr_mfcells.h. */
#include "kernels/cr_mfcells.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_csr.h"
#include "base/cr_rng.h"
#include "data/cr_mm.h"

struct cr_mfcells {
    cr_mf_shape hdr;
    int64_t n;        /* cells */
    int64_t ngroups;  /* distinct columns */
    int64_t nbatch;
    /* Cells batch by batch, within a batch column by column, with batch-local
     * row indices: batch k holds columns (groups) [hstart[k], hstart[k+1]),
     * group g holds cells [gstart[g], gstart[g+1]). */
    int32_t *wi, *hj;
    float *x;
    int64_t *gstart;  /* ngroups + 1 */
    int64_t *hstart;  /* nbatch + 1 */
    int64_t *wstart;  /* nbatch + 1: batch k's W keys are wkeys[wstart[k] .. wstart[k+1]) */
    int64_t *wkeys;   /* unique rows of each batch, concatenated */
    int64_t *hkeys;   /* column id of each group (= the batch's H keys, concatenated) */
    uint64_t *border; /* walk order of batches */
    uint64_t *gorder; /* walk order of groups, a permutation within each batch's range */
    int64_t maxcells; /* largest batch */
    int32_t *bwi, *bhj; /* cr_mfcells_gather's buffers (maxcells), made on first use */
    float *bx;
};

int cr_mfcells_read_header(const char *path, cr_mf_shape *h, cr_err *e) {
    cr_mm_header mh;
    cr_mm_reader *r = cr_mm_open(path, &mh, e);
    if (!r) return -1;
    cr_mm_close(&r);
    *h = (cr_mf_shape){mh.rows, mh.cols, mh.nnz};
    return 0;
}

/* ---- loading ---- */

/* Cells as three parallel growable arrays (0-based row, column, value). */
typedef struct {
    int64_t n, cap;
    int32_t *row, *col;
    float *x;
} cellvec;

static void cellvec_push(cellvec *v, int32_t i, int32_t j, float x) {
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 1024;
        v->row = cr_xrealloc(v->row, (size_t)v->cap * sizeof *v->row);
        v->col = cr_xrealloc(v->col, (size_t)v->cap * sizeof *v->col);
        v->x = cr_xrealloc(v->x, (size_t)v->cap * sizeof *v->x);
    }
    v->row[v->n] = i;
    v->col[v->n] = j;
    v->x[v->n++] = x;
}

/* Random order of the cells (so that each column's cells end up shuffled). */
static void cellvec_shuffle(cellvec *v, cr_rng *r) {
    for (int64_t k = v->n - 1; k > 0; k--) {
        int64_t m = (int64_t)cr_rng_below(r, (uint64_t)k + 1);
        int32_t ti = v->row[k], tj = v->col[k];
        float tx = v->x[k];
        v->row[k] = v->row[m], v->col[k] = v->col[m], v->x[k] = v->x[m];
        v->row[m] = ti, v->col[m] = tj, v->x[m] = tx;
    }
}

static void cellvec_free(cellvec *v) {
    free(v->row);
    free(v->col);
    free(v->x);
}

/* Stream path and keep the cells with a row in [*lo, *hi) (clamped to the
 * matrix); the size line goes to *shape. A cell past o->rows / o->cols is an
 * error. 0, or -1 with e set. */
static int read_rows(const char *path, const cr_mfcells_opts *o, int64_t *lo, int64_t *hi, cr_mf_shape *shape,
                     cellvec *out, cr_err *e) {
    cr_mm_header mh;
    cr_mm_reader *r = cr_mm_open(path, &mh, e);
    if (!r) return -1;
    /* a row past W's keys belongs to no node: without the limit every node
     * would drop it silently */
    cr_mm_limit(r, o->rows, o->cols, "past the keys of the W or H table");
    if (mh.rows > INT32_MAX || mh.cols > INT32_MAX) {
        cr_mm_close(&r);
        return cr_errf(e, "%s: more than %d rows or columns", path, INT32_MAX);
    }
    *shape = (cr_mf_shape){mh.rows, mh.cols, mh.nnz};
    if (*lo < 0) *lo = 0;
    if (*hi < 0 || *hi > mh.rows) *hi = mh.rows;
    if (*lo > *hi) *lo = *hi;
    enum { CHUNK = 65536 };
    int64_t *crow = cr_xmalloc(CHUNK * sizeof *crow), *ccol = cr_xmalloc(CHUNK * sizeof *ccol);
    float *cval = cr_xmalloc(CHUNK * sizeof *cval);
    long got;
    while ((got = cr_mm_read(r, crow, ccol, cval, CHUNK, e)) > 0)
        for (long k = 0; k < got; k++)
            if (crow[k] >= *lo && crow[k] < *hi) cellvec_push(out, (int32_t)crow[k], (int32_t)ccol[k], cval[k]);
    cr_mm_close(&r);
    free(crow);
    free(ccol);
    free(cval);
    return got < 0 ? -1 : 0;
}

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
static int32_t *deal_columns(const uint64_t *count, int64_t cols, int parts) {
    int32_t *owner = cr_xmalloc((size_t)(cols ? cols : 1) * sizeof *owner);
    colcount *cc = cr_xmalloc((size_t)(cols ? cols : 1) * sizeof *cc);
    int64_t m = 0;
    for (int64_t j = 0; j < cols; j++) {
        owner[j] = -1;
        if (count[j]) cc[m++] = (colcount){(int64_t)count[j], (int32_t)j};
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

/* Cut the columns gcol[0..G), laid out in that order (group g's cells
 * start at gstart[g], c->n in all), into batches. m = round(n / batch)
 * batches of about n / m cells: batch k ends at the first column where the
 * running count reaches (k+1) n / m, so no small leftover batch remains
 * (450k cells at batch 200k: 2 x 225k, not 200k + 200k + 50k; every batch
 * costs a pull and push of its rows). */
static void cut_batches(cr_mfcells *c, const uint64_t *gcol, int64_t batch) {
    int64_t G = c->ngroups, N = c->n;
    c->hkeys = cr_xmalloc((size_t)(G + 1) * sizeof *c->hkeys);
    c->hstart = cr_xmalloc((size_t)(G + 1) * sizeof *c->hstart);
    int64_t m = batch >= N ? 1 : (N + batch / 2) / batch;
    if (m < 1) m = 1;
    for (int64_t g = 0; g < G; g++) {
        int64_t at = c->gstart[g];
        if (g == 0 || (double)at >= (double)c->nbatch * (double)N / (double)m) c->hstart[c->nbatch++] = g;
        c->hkeys[g] = (int64_t)gcol[g];
    }
    c->hstart[c->nbatch] = G;
}

/* Batch-local indices (wi, hj) of every cell and each batch's unique rows
 * (wkeys, in order of first use); row[s] is cell s's global row, in
 * [lo, hi). Also sets maxcells and the identity walk orders. */
static void index_batches(cr_mfcells *c, const int32_t *row, int64_t lo, int64_t hi) {
    int64_t span = hi - lo, nw = 0, G = c->ngroups, N = c->n;
    int32_t *stamp = cr_xcalloc((size_t)(span + 1), sizeof *stamp);
    int32_t *local = cr_xmalloc((size_t)(span + 1) * sizeof *local);
    c->wi = cr_xmalloc((size_t)(N + 1) * sizeof *c->wi);
    c->hj = cr_xmalloc((size_t)(N + 1) * sizeof *c->hj);
    c->wkeys = cr_xmalloc((size_t)(N + 1) * sizeof *c->wkeys);
    c->wstart = cr_xmalloc((size_t)(c->nbatch + 1) * sizeof *c->wstart);
    for (int64_t b = 0; b < c->nbatch; b++) {
        c->wstart[b] = nw;
        int64_t cells = c->gstart[c->hstart[b + 1]] - c->gstart[c->hstart[b]];
        if (cells > c->maxcells) c->maxcells = cells;
        for (int64_t g = c->hstart[b]; g < c->hstart[b + 1]; g++)
            for (int64_t s = c->gstart[g]; s < c->gstart[g + 1]; s++) {
                int64_t r = row[s] - lo;
                if (stamp[r] != (int32_t)(b + 1)) {
                    stamp[r] = (int32_t)(b + 1);
                    local[r] = (int32_t)(nw - c->wstart[b]);
                    c->wkeys[nw++] = row[s];
                }
                c->wi[s] = local[r];
                c->hj[s] = (int32_t)(g - c->hstart[b]);
            }
    }
    c->wstart[c->nbatch] = nw;
    c->wkeys = cr_xrealloc(c->wkeys, (size_t)(nw + 1) * sizeof *c->wkeys);
    free(stamp);
    free(local);
    c->border = cr_xmalloc((size_t)(c->nbatch + 1) * sizeof *c->border);
    c->gorder = cr_xmalloc((size_t)(G + 1) * sizeof *c->gorder);
    for (int64_t b = 0; b < c->nbatch; b++) c->border[b] = (uint64_t)b;
    for (int64_t g = 0; g < G; g++) c->gorder[g] = (uint64_t)g;
}

cr_mfcells *cr_mfcells_load(const char *path, const cr_mfcells_opts *opts, cr_err *e) {
    cr_mfcells_opts o = opts ? *opts : (cr_mfcells_opts){0, -1, 0, 1, INT64_MAX, 0, 0, 0};
    if (o.batch < 1) {
        cr_errf(e, "%s: batch size %lld must be >= 1", path, (long long)o.batch);
        return NULL;
    }
    if (o.parts < 1 || o.part < 0 || o.part >= o.parts) {
        cr_errf(e, "%s: worker part %d of %d is out of range", path, o.part, o.parts);
        return NULL;
    }
    /* 1. this node's cells (the node's share is held once, briefly) */
    cellvec v = {0, 0, NULL, NULL, NULL};
    int64_t lo = o.row_lo, hi = o.row_hi;
    cr_mf_shape shape;
    if (read_rows(path, &o, &lo, &hi, &shape, &v, e)) {
        cellvec_free(&v);
        return NULL;
    }
    /* 2. count the node's cells per column (a CSR over columns), deal the
     * columns to its workers; keep mine, in a seeded random order */
    int64_t cols = shape.cols;
    cr_csr_build cb;
    if (cr_csr_begin(&cb, (uint64_t)cols, e)) {
        cellvec_free(&v);
        return NULL;
    }
    for (int64_t k = 0; k < v.n; k++) cr_csr_count(&cb, (uint64_t)v.col[k]);
    int32_t *owner = deal_columns(cb.cnt, cols, o.parts);
    cr_mfcells *c = cr_xcalloc(1, sizeof *c);
    c->hdr = shape;
    uint64_t *gcol = cr_xmalloc((size_t)(cols + 1) * sizeof *gcol), *gstart = NULL;
    for (int64_t j = 0; j < cols; j++) {
        uint64_t *n = cr_csr_countp(&cb, (uint64_t)j);
        if (owner[j] != o.part) *n = 0;
        if (*n) gcol[c->ngroups++] = (uint64_t)j;
        c->n += (int64_t)*n;
    }
    cr_rng rng;
    cr_rng_seed2(&rng, o.seed, (uint64_t)o.part);
    cr_rng_shuffle_u64(&rng, gcol, (uint64_t)c->ngroups);
    cellvec_shuffle(&v, &rng); /* NuPS: random order of the cells within a column too */
    /* 3. columns laid out in that order, cut into batches; 4. cells in place */
    (void)cr_csr_offsets(&cb, gcol, (uint64_t)c->ngroups, &gstart, NULL); /* gcol: valid, distinct */
    c->gstart = (int64_t *)gstart; /* offsets < 2^63: same values either way */
    cut_batches(c, gcol, o.batch);
    int32_t *row = cr_xmalloc((size_t)(c->n + 1) * sizeof *row);
    c->x = cr_xmalloc((size_t)(c->n + 1) * sizeof *c->x);
    for (int64_t k = 0; k < v.n; k++) {
        if (owner[v.col[k]] != o.part) continue;
        uint64_t dst = cr_csr_slot(&cb, (uint64_t)v.col[k]);
        row[dst] = v.row[k];
        c->x[dst] = v.x[k];
    }
    cr_csr_end(&cb);
    free(gcol);
    free(owner);
    cellvec_free(&v);
    /* 5. local indices */
    index_batches(c, row, lo, hi);
    free(row);
    return c;
}

void cr_mfcells_destroy(cr_mfcells **cp) {
    if (!cp || !*cp) return;
    cr_mfcells *c = *cp;
    free(c->wi);
    free(c->hj);
    free(c->x);
    free(c->gstart);
    free(c->hstart);
    free(c->wstart);
    free(c->wkeys);
    free(c->hkeys);
    free(c->border);
    free(c->gorder);
    free(c->bwi);
    free(c->bhj);
    free(c->bx);
    free(c);
    *cp = NULL;
}

int64_t cr_mfcells_count(const cr_mfcells *c) { return c->n; }
int64_t cr_mfcells_columns(const cr_mfcells *c) { return c->ngroups; }
int64_t cr_mfcells_batches(const cr_mfcells *c) { return c->nbatch; }
const cr_mf_shape *cr_mfcells_header(const cr_mfcells *c) { return &c->hdr; }

/* Starts from the load order each time, so that the walk is a function of
 * the seed alone: a job resumed from a checkpoint at epoch N walks epoch N+1
 * exactly as the run that saved it would have. */
void cr_mfcells_shuffle(cr_mfcells *c, uint64_t seed) {
    for (int64_t b = 0; b < c->nbatch; b++) c->border[b] = (uint64_t)b;
    for (int64_t g = 0; g < c->ngroups; g++) c->gorder[g] = (uint64_t)g;
    cr_rng r;
    cr_rng_seed(&r, seed);
    cr_rng_shuffle_u64(&r, c->border, (uint64_t)c->nbatch);
    for (int64_t b = 0; b < c->nbatch; b++)
        cr_rng_shuffle_u64(&r, c->gorder + c->hstart[b], (uint64_t)(c->hstart[b + 1] - c->hstart[b]));
}

int cr_mfcells_next(cr_mfcells *c, int64_t *pos, cr_mfcells_batch *b) {
    int64_t p = *pos < 0 ? 0 : *pos;
    if (p >= c->nbatch) return 0;
    int64_t k = (int64_t)c->border[p];
    b->id = k;
    b->n = c->gstart[c->hstart[k + 1]] - c->gstart[c->hstart[k]];
    b->nw = c->wstart[k + 1] - c->wstart[k];
    b->nh = c->hstart[k + 1] - c->hstart[k];
    b->wkeys = c->wkeys + c->wstart[k];
    b->hkeys = c->hkeys + c->hstart[k];
    b->walk = c->gorder + c->hstart[k];
    *pos = p + 1;
    return 1;
}

cr_mf_batch cr_mfcells_column(const cr_mfcells *c, const cr_mfcells_batch *b, int64_t k) {
    int64_t g = (int64_t)b->walk[k], s = c->gstart[g];
    return (cr_mf_batch){c->gstart[g + 1] - s, c->wi + s, c->hj + s, c->x + s};
}

cr_mf_batch cr_mfcells_gather(cr_mfcells *c, const cr_mfcells_batch *b) {
    if (!c->bwi) { /* first use: room for the largest batch */
        c->bwi = cr_xmalloc((size_t)(c->maxcells + 1) * sizeof *c->bwi);
        c->bhj = cr_xmalloc((size_t)(c->maxcells + 1) * sizeof *c->bhj);
        c->bx = cr_xmalloc((size_t)(c->maxcells + 1) * sizeof *c->bx);
    }
    int64_t at = 0;
    for (int64_t k = 0; k < b->nh; k++) {
        cr_mf_batch col = cr_mfcells_column(c, b, k);
        memcpy(c->bwi + at, col.wi, (size_t)col.n * sizeof *c->bwi);
        memcpy(c->bhj + at, col.hj, (size_t)col.n * sizeof *c->bhj);
        memcpy(c->bx + at, col.x, (size_t)col.n * sizeof *c->bx);
        at += col.n;
    }
    return (cr_mf_batch){at, c->bwi, c->bhj, c->bx};
}
