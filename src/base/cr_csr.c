/* CSR by counting: see cr_csr.h. */
#include "base/cr_csr.h"

#include <stdlib.h>

#include "base/cr_alloc.h"

/* Marks a row already seen in an order (counts stay far below 2^63: each
 * counted entry exists in memory). */
#define SEEN (UINT64_C(1) << 63)

void *cr_csr_array(uint64_t n, size_t size, cr_err *e) {
    if (n == 0) n = 1;
    if (size && n > SIZE_MAX / size) {
        cr_errf(e, "CSR index: %llu entries of %zu bytes do not fit in memory", (unsigned long long)n, size);
        return NULL;
    }
    return cr_xmalloc((size_t)n * size);
}

int cr_csr_begin(cr_csr_build *b, uint64_t nrows, cr_err *e) {
    *b = (cr_csr_build){0, NULL, 0, 0};
    if (nrows >= SIZE_MAX / sizeof(uint64_t))
        return cr_errf(e, "CSR index: %llu rows do not fit in memory", (unsigned long long)nrows);
    b->nrows = nrows;
    b->cnt = cr_xcalloc((size_t)nrows + 1, sizeof *b->cnt);
    return 0;
}

void cr_csr_end(cr_csr_build *b) {
    free(b->cnt);
    *b = (cr_csr_build){0, NULL, 0, 0};
}

/* Rows by id: counts become write cursors, off gets the starts. */
static void by_id(cr_csr_build *b, uint64_t *off) {
    uint64_t at = 0;
    for (uint64_t r = 0; r < b->nrows; r++) {
        uint64_t c = b->cnt[r];
        off[r] = b->cnt[r] = at;
        at += c;
    }
    off[b->nrows] = at;
}

/* Rows in a given order. A listed row's cursor is marked SEEN until every
 * listed row is done, which catches repeats; then an unmarked row with
 * entries is one the order left out. */
static int by_order(cr_csr_build *b, const uint64_t *order, uint64_t norder, uint64_t *off, cr_err *e) {
    uint64_t at = 0;
    int rc = 0;
    for (uint64_t g = 0; g < norder && !rc; g++) {
        uint64_t r = order[g];
        if (r >= b->nrows) rc = cr_errf(e, "CSR index: order names row %llu of %llu", (unsigned long long)r,
                                        (unsigned long long)b->nrows);
        else if (b->cnt[r] & SEEN) rc = cr_errf(e, "CSR index: order names row %llu twice", (unsigned long long)r);
        else {
            uint64_t c = b->cnt[r];
            off[g] = at;
            b->cnt[r] = at | SEEN;
            at += c;
        }
    }
    off[norder] = at;
    for (uint64_t r = 0; r < b->nrows; r++) {
        if (b->cnt[r] & SEEN) b->cnt[r] &= ~SEEN;
        else if (b->cnt[r] && !rc)
            rc = cr_errf(e, "CSR index: row %llu has entries but is not in the order", (unsigned long long)r);
    }
    return rc;
}

int cr_csr_offsets(cr_csr_build *b, const uint64_t *order, uint64_t norder, uint64_t **off_p, cr_err *e) {
    *off_p = NULL;
    if (b->bad)
        return cr_errf(e, "CSR index: row id %llu out of range (%llu rows)", (unsigned long long)b->badrow,
                       (unsigned long long)b->nrows);
    uint64_t len = order ? norder : b->nrows;
    uint64_t *off = cr_csr_array(len + 1, sizeof *off, e);
    if (!off || len + 1 == 0) {
        free(off);
        return -1;
    }
    if (!order) by_id(b, off);
    else if (by_order(b, order, norder, off, e)) {
        free(off);
        return -1;
    }
    *off_p = off;
    return 0;
}

int cr_csr_from_pairs(const uint32_t *rows, const uint32_t *cols, uint64_t n, uint32_t nrows, uint64_t **off_p,
                      uint32_t **adj_p, cr_err *e) {
    cr_csr_build b;
    *off_p = NULL;
    *adj_p = NULL;
    if (cr_csr_begin(&b, nrows, e)) return -1;
    for (uint64_t i = 0; i < n; i++) cr_csr_count(&b, rows[i]);
    uint32_t *adj = NULL;
    if (cr_csr_offsets(&b, NULL, 0, off_p, e) || !(adj = cr_csr_array(n, sizeof *adj, e))) {
        free(*off_p);
        *off_p = NULL;
        cr_csr_end(&b);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) adj[cr_csr_slot(&b, rows[i])] = cols[i];
    cr_csr_end(&b);
    *adj_p = adj;
    return 0;
}

/* The callback form's two passes, as emit functions. */
typedef struct {
    cr_csr_build *b;
    const uint64_t *off;
    uint32_t *adj;
    uint64_t n;
} fn_pass;

static void emit_count(void *ectx, uint64_t row, uint32_t col) {
    fn_pass *p = ectx;
    (void)col;
    cr_csr_count(p->b, row);
    p->n++;
}

/* A callback that emits more in its second call than in its first is
 * clipped to what was counted rather than writing past the rows. */
static void emit_place(void *ectx, uint64_t row, uint32_t col) {
    fn_pass *p = ectx;
    if (row < p->b->nrows && p->b->cnt[row] < p->off[row + 1]) p->adj[cr_csr_slot(p->b, row)] = col;
}

int cr_csr_from_fn(uint64_t nrows, cr_csr_each_fn each, void *ctx, uint64_t **off_p, uint32_t **adj_p,
                   cr_err *e) {
    cr_csr_build b;
    *off_p = NULL;
    *adj_p = NULL;
    if (cr_csr_begin(&b, nrows, e)) return -1;
    fn_pass p = {&b, NULL, NULL, 0};
    each(ctx, emit_count, &p);
    if (cr_csr_offsets(&b, NULL, 0, off_p, e) || !(p.adj = cr_csr_array(p.n, sizeof *p.adj, e))) {
        free(*off_p);
        *off_p = NULL;
        cr_csr_end(&b);
        return -1;
    }
    p.off = *off_p;
    each(ctx, emit_place, &p);
    cr_csr_end(&b);
    *adj_p = p.adj;
    return 0;
}
