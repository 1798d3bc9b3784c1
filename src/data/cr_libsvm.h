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
/* Write m (atomically), values with %.9g (float round-trips exactly). */
int cr_libsvm_write(const char *path, const cr_csr *m, cr_err *e);
void cr_csr_free(cr_csr *m);

#endif
