#ifndef CR_MFCELLS_H
#define CR_MFCELLS_H
/* One worker's share of a sparse matrix for matrix factorization, and the
 * batches it trains on (NuPS data layout).
 *
 * Loading streams a MatrixMarket coordinate file (1-based "i j value" lines)
 * and keeps the cells whose row is in [row_lo, row_hi) (this node's W keys)
 * and whose column is assigned to this worker: the node's columns are dealt
 * to `parts` workers greedily by cell count (largest first, to the least
 * loaded worker), which every worker of the node computes identically.
 *
 * The columns, in a seeded random order, are cut once into round(n / batch)
 * batches of whole columns of about equal size, and each batch's unique W and H keys
 * and batch-local indices are computed at load time: per epoch only the
 * order changes (cr_mfcells_shuffle: batch order and column order within
 * each batch), so handing out a batch is no per-cell work. The cells of a
 * column are in a random order drawn at load (NuPS: random order of columns
 * and of the data points within a column). */

#include <stdint.h>

#include "base/cr_err.h"
#include "kernels/cr_mf.h"

typedef struct cr_mf_shape { /* size line of a MatrixMarket file */
    int64_t rows, cols, nnz;
} cr_mf_shape;

/* Read only the banner and size line of a MatrixMarket coordinate file.
 * Errors ("path:line: what") for a missing file, bad banner or size line. */
int cr_mfcells_read_header(const char *path, cr_mf_shape *h, cr_err *e);

typedef struct cr_mfcells_opts {
    int64_t row_lo, row_hi; /* keep rows in [row_lo, row_hi), 0-based; row_hi < 0: to the end */
    int part, parts;        /* keep the columns dealt to worker `part` of `parts` (parts >= 1) */
    int64_t batch;          /* about this many cells per batch (>= 1; INT64_MAX: one batch) */
    uint64_t seed;          /* grouping of columns into batches */
    int64_t rows, cols;     /* keys of the W and H tables: a cell past them is an error
                             * naming its line, not dropped (0: the size line's) */
} cr_mfcells_opts;

typedef struct cr_mfcells cr_mfcells;

/* Load path with opts (NULL = everything). Returns a new object owned by the
 * caller (free with cr_mfcells_destroy), or NULL with "path:line: reason" in
 * e for any malformed line, out-of-range index (past the size line, or past
 * opts->rows / opts->cols), NaN/inf value, or a count
 * that disagrees with the size line. */
cr_mfcells *cr_mfcells_load(const char *path, const cr_mfcells_opts *opts, cr_err *e);

/* Free c and set *c to NULL; accepts NULL. */
void cr_mfcells_destroy(cr_mfcells **c);

int64_t cr_mfcells_count(const cr_mfcells *c);   /* cells kept */
int64_t cr_mfcells_columns(const cr_mfcells *c); /* distinct columns kept */
int64_t cr_mfcells_batches(const cr_mfcells *c); /* batches per epoch */
const cr_mf_shape *cr_mfcells_header(const cr_mfcells *c);

/* Randomize the walk: batch order and column order within each batch.
 * The walk depends on the seed only, not on earlier shuffles. */
void cr_mfcells_shuffle(cr_mfcells *c, uint64_t seed);

/* A batch: its size and the unique global keys its cells touch. wkeys[k]
 * is the W key (0-based row) of local W row k, hkeys likewise for H; local
 * H row k is the batch's column hkeys[k]. Pointers are into c and valid
 * while c lives (a batch's keys never change). */
typedef struct cr_mfcells_batch {
    int64_t id; /* which batch (0 .. batches-1) */
    int64_t n;  /* cells */
    int64_t nw, nh;
    const int64_t *wkeys, *hkeys;
    const uint64_t *walk; /* internal: this epoch's column order */
} cr_mfcells_batch;

/* The batch at walk position *pos (0 at the start of an epoch); advances
 * *pos. Returns 1 with a batch, 0 when the epoch is over. No copying. */
int cr_mfcells_next(cr_mfcells *c, int64_t *pos, cr_mfcells_batch *b);

/* The cells of the k-th column (0 <= k < b->nh) of b in this epoch's walk
 * order, with batch-local indices: pointers into c, no copy. Running a
 * kernel column by column for k = 0, 1, ... walks the batch in order. */
cr_mf_batch cr_mfcells_column(const cr_mfcells *c, const cr_mfcells_batch *b, int64_t k);

/* All cells of b in walk order as one array triple, copied into buffers
 * owned by c (valid until the next gather). */
cr_mf_batch cr_mfcells_gather(cr_mfcells *c, const cr_mfcells_batch *b);

#endif
