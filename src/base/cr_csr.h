#ifndef CR_CSR_H
#define CR_CSR_H
/* Compressed sparse row (CSR) indexes built by counting.
 *
 * A CSR index groups n entries (row, payload) by row: off[r] .. off[r + 1]
 * are the slots of row r, in an array of n payloads. Every graph, data
 * layout and lookup table in crescent that groups items by an id is built
 * the same way, in two passes over the entries:
 *
 *   cr_csr_build b;
 *   if (cr_csr_begin(&b, nrows, e)) return -1;
 *   for each entry: cr_csr_count(&b, row);           pass 1: count
 *   if (cr_csr_offsets(&b, NULL, 0, &off, e)) ...;   prefix sums
 *   for each entry: adj[cr_csr_slot(&b, row)] = x;    pass 2: place
 *   cr_csr_end(&b);
 *
 * Complexity: O(n + nrows) time (two passes over the entries, two over the
 * rows), nrows + 1 words of scratch (the counts, later the write cursors)
 * besides the nrows + 1 offsets the caller keeps; no sorting, no
 * reallocation. Placement is stable: entries of one row keep the order in
 * which they were placed. The count and slot steps are inline so that a
 * caller's loop costs what the hand-written loop cost (one increment).
 *
 * Checks: row ids >= nrows are counted as errors (reported by
 * cr_csr_offsets, never written out of bounds); nrows + 1 and the array
 * sizes are checked for size_t overflow before allocating. Allocation is
 * cr_x* (out of memory aborts, see cr_alloc.h). cr_csr_slot trusts that
 * pass 2 places exactly the entries counted in pass 1 (same rows). */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"

typedef struct cr_csr_build {
    uint64_t nrows; /* row ids are in [0, nrows) */
    uint64_t *cnt;  /* pass 1: entries per row; pass 2: next free slot per row */
    uint64_t bad;   /* entries counted with a row id >= nrows */
    uint64_t badrow;/* the first such row id */
} cr_csr_build;

/* Start a build over nrows rows (0 is allowed). b is caller-owned storage;
 * cr_csr_end releases what begin allocated. Returns 0, or -1 when nrows is
 * too large to index (b is then already ended). */
int cr_csr_begin(cr_csr_build *b, uint64_t nrows, cr_err *e);

/* Pass 1: one entry in row `row`. Rows >= nrows are remembered as errors. */
static inline void cr_csr_count(cr_csr_build *b, uint64_t row) {
    if (row < b->nrows) b->cnt[row]++;
    else if (!b->bad++) b->badrow = row;
}

/* Entries counted so far in row r (r < nrows; before cr_csr_offsets). A
 * caller may also zero a count to drop a row's entries (it then must not
 * place them in pass 2). */
static inline uint64_t *cr_csr_countp(cr_csr_build *b, uint64_t r) { return &b->cnt[r]; }

/* Prefix sums, between the passes. With order NULL the rows are laid out by
 * id: *off_p gets nrows + 1 offsets (off[r] = first slot of row r, off[nrows]
 * = number of entries). With an order, the rows are laid out in the order
 * order[0 .. norder) (ids < nrows, no repeats): off[g] is the first slot of
 * row order[g] and *off_p has norder + 1 entries; a row left out of the order
 * must have no entries. The caller owns *off_p (free). Returns 0, or -1 with
 * a message (bad row id counted, bad order); *off_p is then NULL. */
int cr_csr_offsets(cr_csr_build *b, const uint64_t *order, uint64_t norder, uint64_t **off_p, cr_err *e);

/* Pass 2: the slot of the next entry of row `row` (after cr_csr_offsets). */
static inline uint64_t cr_csr_slot(cr_csr_build *b, uint64_t row) { return b->cnt[row]++; }

/* Release the scratch. Idempotent; b may be begun again afterwards. */
void cr_csr_end(cr_csr_build *b);

/* An array of n items of size bytes each, for the payloads (at least one
 * item, so the result is never NULL). Returns NULL with a message when
 * n * size overflows size_t. Caller frees. */
void *cr_csr_array(uint64_t n, size_t size, cr_err *e);

/* One call for n (rows[i], cols[i]) pairs: *off_p (nrows + 1) and *adj_p (n
 * column ids, row by row, each row in input order). Caller owns both.
 * Returns 0, or -1 with a message when a row id is >= nrows (nothing is
 * returned then). */
int cr_csr_from_pairs(const uint32_t *rows, const uint32_t *cols, uint64_t n, uint32_t nrows, uint64_t **off_p,
                      uint32_t **adj_p, cr_err *e);

/* The callback form, for entries that are not in arrays: each(ctx, emit,
 * ectx) must call emit(ectx, row, col) once for every entry, the same
 * entries in the same order each time it is called (it is called twice).
 * Results and errors as cr_csr_from_pairs. */
typedef void (*cr_csr_emit_fn)(void *ectx, uint64_t row, uint32_t col);
typedef void (*cr_csr_each_fn)(void *ctx, cr_csr_emit_fn emit, void *ectx);
int cr_csr_from_fn(uint64_t nrows, cr_csr_each_fn each, void *ctx, uint64_t **off_p, uint32_t **adj_p,
                   cr_err *e);

#endif
