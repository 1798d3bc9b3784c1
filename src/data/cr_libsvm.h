#ifndef CR_LIBSVM_H
#define CR_LIBSVM_H
/* LIBSVM / SVMlight files: "LABEL [qid:Q] ID:VALUE ID:VALUE ... [# comment]"
 * with 1-based, strictly increasing feature ids. Read into CSR with 0-based
 * feature ids; qid is ignored; an empty line is an error (a sample needs a
 * label), blank-only files are "empty". Plain or gzip. */

#include <stdint.h>

#include "base/cr_err.h"

typedef struct cr_csr {
    int64_t rows, cols, nnz; /* cols = largest feature id seen (or declared) */
    int64_t *ptr;            /* rows + 1 offsets into idx/val */
    int64_t *idx;            /* nnz 0-based feature ids */
    float *val;              /* nnz values */
    float *label;            /* rows labels */
} cr_csr;

/* Read path into *m (arrays malloc'd, free with cr_csr_free). features > 0
 * declares the number of features: a larger id is an error; 0 = infer.
 * Errors: "file:line: what is wrong" for a missing/non-numeric label, a
 * malformed ID:VALUE pair, id < 1 or beyond 2^31-1 (or the declared count),
 * ids not increasing, NaN/inf; "file: empty file"; I/O, truncated gzip. */
int cr_libsvm_load(const char *path, int64_t features, cr_csr *m, cr_err *e);
/* Streaming form, for callers that keep only part of each sample (the
 * partition loader keeps the ids). fn is called once per sample, in file
 * order, with its 0-based row number, its label, and its n feature ids
 * (0-based) and values in arrays that stay valid only during the call. A
 * non-zero return from fn stops the scan (fn fills e). flags relax the
 * format: */
enum {
    CR_LIBSVM_ANY_ORDER = 1,  /* ids in any order, repeats allowed (else strictly increasing) */
    CR_LIBSVM_SKIP_BLANK = 2, /* blank lines are skipped (else an error) */
    CR_LIBSVM_MULTILABEL = 4, /* "1,3,7 ID:VALUE ...": fn gets the first label */
    CR_LIBSVM_SORT = 8,       /* ids in any order (hashed features), given to fn sorted; a
                               * repeated id is still an error, as without the flag */
};
typedef int (*cr_libsvm_row_fn)(void *ud, int64_t row, float label, const int64_t *idx, const float *val,
                                int64_t n, cr_err *e);
/* Same checks and errors as cr_libsvm_load. *cols (may be NULL) gets the
 * largest feature id seen (or features if > 0). Returns 0 or -1 with e set. */
int cr_libsvm_scan(const char *path, int64_t features, int flags, cr_libsvm_row_fn fn, void *ud,
                   int64_t *cols, cr_err *e);
/* Write m (atomically), values with %.9g (float round-trips exactly). */
int cr_libsvm_write(const char *path, const cr_csr *m, cr_err *e);
void cr_csr_free(cr_csr *m);

#endif
