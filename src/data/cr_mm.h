#ifndef CR_MM_H
#define CR_MM_H
/* MatrixMarket coordinate files ("%%MatrixMarket matrix coordinate
 * real|integer|pattern general"): a streaming reader, a loader with a binary
 * cache, and a writer. Ids are 0-based in memory, 1-based in the file.
 *
 * Errors name the place: "train.mmc:17: column 2001 out of range 1..2000".
 * A file is rejected when the banner or size line is missing or malformed, a
 * field is missing, non-numeric, NaN or infinite, an index is outside the
 * declared size, there are more entries than declared, or fewer at EOF. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"

/* A sparse matrix in coordinate form. */
typedef struct cr_coo {
    int64_t rows, cols, nnz;
    int64_t *row, *col; /* nnz 0-based ids each */
    float *val;         /* nnz values (1 for pattern files) */
} cr_coo;

typedef struct cr_mm_header {
    int64_t rows, cols, nnz;
    int pattern;   /* 1: no value column */
    int symmetric; /* 1: symmetric or skew-symmetric (only with CR_MM_SYMMETRIC):
                    * each off-diagonal entry (i, j) also stands for (j, i) */
} cr_mm_header;

typedef struct cr_mm_reader cr_mm_reader;

/* Open path (plain or gzip) and parse the banner and size line into *h.
 * Returns a reader the caller closes with cr_mm_close, or NULL with e set. */
cr_mm_reader *cr_mm_open(const char *path, cr_mm_header *h, cr_err *e);

/* cr_mm_open with flags: CR_MM_SYMMETRIC also accepts square 'symmetric'
 * and 'skew-symmetric' files (h->symmetric = 1). The reader returns the
 * entries as stored (one triangle); mirroring them is the caller's job,
 * which is why callers that need the whole matrix do not pass the flag. */
cr_mm_reader *cr_mm_open_flags(const char *path, int flags, cr_mm_header *h, cr_err *e);

/* Accept fewer rows or columns than the size line declares (a caller whose
 * tables have fewer keys): an entry past them is then an error like any
 * out-of-range index, "path:line: row 7 out of range 1..5 (why)". rows or
 * cols <= 0, or not below the size line's, keep the size line's. why is a
 * static or caller-held string that outlives r. */
void cr_mm_limit(cr_mm_reader *r, int64_t rows, int64_t cols, const char *why);

/* Read up to cap entries into row/col/val (caller-owned arrays of at least
 * cap elements). Returns the number read, 0 at a correct end of file (all
 * declared entries seen), -1 on a bad line or read error (e set). */
long cr_mm_read(cr_mm_reader *r, int64_t *row, int64_t *col, float *val, size_t cap, cr_err *e);

void cr_mm_close(cr_mm_reader **rp);

/* Storage provider for cr_mm_load: given m->rows/cols/nnz, point m->row,
 * m->col, m->val at arrays of m->nnz elements. Returns 0, or -1 with e set.
 * The loader never frees what an allocator returns. */
typedef int (*cr_coo_alloc)(void *ud, cr_coo *m, cr_err *e);

/* Flags: NO_CACHE and REBUILD for cr_mm_load, SYMMETRIC for cr_mm_open_flags. */
enum { CR_MM_NO_CACHE = 1, CR_MM_REBUILD = 2, CR_MM_SYMMETRIC = 4 };

/* Load a whole file into *m. With alloc NULL the arrays are malloc'd and the
 * caller frees them with cr_coo_free; otherwise alloc(ud, ...) provides them.
 * Unless CR_MM_NO_CACHE, a binary copy is kept in cr_mm_cache_path(path) and
 * used while the source's size and mtime are unchanged (a cache that cannot
 * be written is silently skipped: it is only a cache). *from_cache (may be
 * NULL) tells which path was taken. Returns 0 or -1 with e set. */
int cr_mm_load(const char *path, int flags, cr_coo_alloc alloc, void *ud, cr_coo *m,
               int *from_cache, cr_err *e);

/* Where the cache of path lives: $CRESCENT_CACHE_DIR/<name>.<hash>.crbin if
 * that variable is set, else PATH.crbin beside it. Returns a malloc'd string. */
char *cr_mm_cache_path(const char *path);

/* Free arrays allocated by cr_mm_load with alloc == NULL; zeroes *m. */
void cr_coo_free(cr_coo *m);

/* Write m (0-based in memory) as a MatrixMarket file, atomically (a temp
 * file renamed into place). pattern != 0 writes no values (m->val may then
 * be NULL). Returns 0 / -1. */
int cr_mm_write(const char *path, const cr_coo *m, int pattern, cr_err *e);

/* Streaming writer for generators: header first, then exactly nnz entries. */
typedef struct cr_mm_writer cr_mm_writer;
cr_mm_writer *cr_mm_writer_open(const char *path, int64_t rows, int64_t cols, int64_t nnz,
                                int pattern, cr_err *e);
void cr_mm_writer_add(cr_mm_writer *w, int64_t row, int64_t col, float val);
/* Checks that exactly nnz entries were added, then publishes the file. */
int cr_mm_writer_commit(cr_mm_writer **wp, cr_err *e);
void cr_mm_writer_abort(cr_mm_writer **wp);

#endif
