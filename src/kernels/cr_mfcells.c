/* MF data layout and batching: see cr_mfcells.h. */
#include "kernels/cr_mfcells.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
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
    int32_t *bwi, *bhj; /* output buffers (maxcells) */
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
    cr_mfcells_opts o = opts ? *opts : (cr_mfcells_opts){0, -1, 0, 1, INT64_MAX, 0};
    if (o.batch < 1) {
        cr_errf(e, "%s: batch size %lld must be >= 1", path, (long long)o.batch);
        return NULL;
    }
    if (o.parts < 1 || o.part < 0 || o.part >= o.parts) {
        cr_errf(e, "%s: worker part %d of %d is out of range", path, o.part, o.parts);
        return NULL;
    }
    cr_mm_header mh;
    cr_mm_reader *r = cr_mm_open(path, &mh, e);
    if (!r) return NULL;
    if (mh.rows > INT32_MAX || mh.cols > INT32_MAX) {
        cr_mm_close(&r);
        cr_errf(e, "%s: more than %d rows or columns", path, INT32_MAX);
        return NULL;
    }
    cr_mf_shape hdr = {mh.rows, mh.cols, mh.nnz};
    int64_t lo = o.row_lo < 0 ? 0 : o.row_lo;
    int64_t hi = o.row_hi < 0 || o.row_hi > hdr.rows ? hdr.rows : o.row_hi;
    if (lo > hi) lo = hi;
    /* 1. this node's cells, streamed in chunks */
    enum { CHUNK = 65536 };
    int64_t *crow = cr_xmalloc(CHUNK * sizeof *crow), *ccol = cr_xmalloc(CHUNK * sizeof *ccol);
    float *cval = cr_xmalloc(CHUNK * sizeof *cval);
    int64_t n = 0, cap = 1024;
    int32_t *ri = cr_xmalloc((size_t)cap * sizeof *ri), *ci = cr_xmalloc((size_t)cap * sizeof *ci);
    float *xv = cr_xmalloc((size_t)cap * sizeof *xv);
    long got;
    while ((got = cr_mm_read(r, crow, ccol, cval, CHUNK, e)) > 0) {
        for (long k = 0; k < got; k++) {
            if (crow[k] < lo || crow[k] >= hi) continue;
            if (n == cap) {
                cap *= 2;
                ri = cr_xrealloc(ri, (size_t)cap * sizeof *ri);
                ci = cr_xrealloc(ci, (size_t)cap * sizeof *ci);
                xv = cr_xrealloc(xv, (size_t)cap * sizeof *xv);
            }
            ri[n] = (int32_t)crow[k];
            ci[n] = (int32_t)ccol[k];
            xv[n] = cval[k];
            n++;
        }
    }
    cr_mm_close(&r);
    free(crow);
    free(ccol);
    free(cval);
    if (got < 0) {
        free(ri);
        free(ci);
        free(xv);
        return NULL;
    }
    /* 2. deal columns to workers, keep mine */
    int64_t cols = hdr.cols;
    int64_t *count = cr_xcalloc((size_t)cols + 1, sizeof *count);
    for (int64_t k = 0; k < n; k++) count[ci[k]]++;
    int32_t *owner = deal_columns(count, cols, o.parts);
    cr_mfcells *c = cr_xcalloc(1, sizeof *c);
    c->hdr = hdr;
    int64_t *gcol = cr_xmalloc((size_t)(cols + 1) * sizeof *gcol);
    for (int64_t jj = 0; jj < cols; jj++) {
        if (owner[jj] != o.part) count[jj] = 0;
        if (count[jj]) gcol[c->ngroups++] = jj;
        c->n += count[jj];
    }
    /* 3. cut the columns, in a seeded random order, into batches */
    cr_rng rng;
    cr_rng_seed2(&rng, o.seed, (uint64_t)o.part);
    cr_rng_shuffle_u64(&rng, (uint64_t *)gcol, (uint64_t)c->ngroups);
    int64_t G = c->ngroups, N = c->n;
    c->gstart = cr_xmalloc((size_t)(G + 1) * sizeof *c->gstart);
    c->hkeys = cr_xmalloc((size_t)(G + 1) * sizeof *c->hkeys);
    c->hstart = cr_xmalloc((size_t)(G + 1) * sizeof *c->hstart);
    int64_t *fill = cr_xmalloc((size_t)(cols + 1) * sizeof *fill);
    int64_t at = 0, batch_cells = 0;
    for (int64_t g = 0; g < G; g++) {
        int64_t jj = gcol[g];
        if (g == 0 || batch_cells >= o.batch) {
            c->hstart[c->nbatch++] = g;
            batch_cells = 0;
        }
        batch_cells += count[jj];
        c->hkeys[g] = jj;
        c->gstart[g] = at;
        fill[jj] = at;
        at += count[jj];
    }
    c->gstart[G] = at;
    c->hstart[c->nbatch] = G;
    /* 4. place the cells (rows global for now) */
    int32_t *row = cr_xmalloc((size_t)(N + 1) * sizeof *row);
    c->x = cr_xmalloc((size_t)(N + 1) * sizeof *c->x);
    c->hj = cr_xmalloc((size_t)(N + 1) * sizeof *c->hj);
    for (int64_t k = 0; k < n; k++) {
        if (owner[ci[k]] != o.part) continue;
        int64_t dst = fill[ci[k]]++;
        row[dst] = ri[k];
        c->x[dst] = xv[k];
    }
    free(fill);
    free(owner);
    free(count);
    free(gcol);
    free(ri);
    free(ci);
    free(xv);
    /* 5. batch-local indices and each batch's unique rows */
    int64_t span = hi - lo;
    int32_t *stamp = cr_xcalloc((size_t)(span + 1), sizeof *stamp), *local = cr_xmalloc((size_t)(span + 1) * sizeof *local);
    c->wi = cr_xmalloc((size_t)(N + 1) * sizeof *c->wi);
    c->wkeys = cr_xmalloc((size_t)(N + 1) * sizeof *c->wkeys);
    c->wstart = cr_xmalloc((size_t)(c->nbatch + 1) * sizeof *c->wstart);
    int64_t nw = 0;
    for (int64_t b = 0; b < c->nbatch; b++) {
        c->wstart[b] = nw;
        int64_t first = c->gstart[c->hstart[b]], last = c->gstart[c->hstart[b + 1]];
        if (last - first > c->maxcells) c->maxcells = last - first;
        for (int64_t g = c->hstart[b]; g < c->hstart[b + 1]; g++)
            for (int64_t s = c->gstart[g]; s < c->gstart[g + 1]; s++) {
                int64_t rr = row[s] - lo;
                if (stamp[rr] != (int32_t)(b + 1)) {
                    stamp[rr] = (int32_t)(b + 1);
                    local[rr] = (int32_t)(nw - c->wstart[b]);
                    c->wkeys[nw++] = row[s];
                }
                c->wi[s] = local[rr];
                c->hj[s] = (int32_t)(g - c->hstart[b]);
            }
    }
    c->wstart[c->nbatch] = nw;
    c->wkeys = cr_xrealloc(c->wkeys, (size_t)(nw + 1) * sizeof *c->wkeys);
    free(stamp);
    free(local);
    free(row);
    c->border = cr_xmalloc((size_t)(c->nbatch + 1) * sizeof *c->border);
    c->gorder = cr_xmalloc((size_t)(G + 1) * sizeof *c->gorder);
    for (int64_t b = 0; b < c->nbatch; b++) c->border[b] = (uint64_t)b;
    for (int64_t g = 0; g < G; g++) c->gorder[g] = (uint64_t)g;
    c->bwi = cr_xmalloc((size_t)(c->maxcells + 1) * sizeof *c->bwi);
    c->bhj = cr_xmalloc((size_t)(c->maxcells + 1) * sizeof *c->bhj);
    c->bx = cr_xmalloc((size_t)(c->maxcells + 1) * sizeof *c->bx);
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

void cr_mfcells_shuffle(cr_mfcells *c, uint64_t seed) {
    cr_rng r;
    cr_rng_seed(&r, seed);
    cr_rng_shuffle_u64(&r, c->border, (uint64_t)c->nbatch);
    for (int64_t b = 0; b < c->nbatch; b++)
        cr_rng_shuffle_u64(&r, c->gorder + c->hstart[b], (uint64_t)(c->hstart[b + 1] - c->hstart[b]));
}

int cr_mfcells_next(cr_mfcells *c, int64_t *pos, cr_mfcells_batch *b) {
    int64_t p = *pos < 0 ? 0 : *pos;
    if (p >= c->nbatch) return 0;
    int64_t k = (int64_t)c->border[p], at = 0;
    for (int64_t q = c->hstart[k]; q < c->hstart[k + 1]; q++) {
        int64_t g = (int64_t)c->gorder[q], s = c->gstart[g], m = c->gstart[g + 1] - s;
        memcpy(c->bwi + at, c->wi + s, (size_t)m * sizeof *c->bwi);
        memcpy(c->bhj + at, c->hj + s, (size_t)m * sizeof *c->bhj);
        memcpy(c->bx + at, c->x + s, (size_t)m * sizeof *c->bx);
        at += m;
    }
    b->cells = (cr_mf_batch){at, c->bwi, c->bhj, c->bx};
    b->id = k;
    b->nw = c->wstart[k + 1] - c->wstart[k];
    b->nh = c->hstart[k + 1] - c->hstart[k];
    b->wkeys = c->wkeys + c->wstart[k];
    b->hkeys = c->hkeys + c->hstart[k];
    *pos = p + 1;
    return 1;
}
