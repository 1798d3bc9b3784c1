#ifndef CR_ASSIGN_H
#define CR_ASSIGN_H
/* An assignment of a job's examples to workers and its keys to servers over
 * k machines: what a partitioner computes (src/partition) and what a
 * placement file (`crescent partition --out`, docs/partitioning.md) holds.
 * Machine i runs worker i and server i. Its readers: the partitioners'
 * metrics, a table placed by file (whose runtime key map is src/ps/cr_place,
 * built from the v lines), and loaders that keep a node's examples (the
 * u lines; kernels/cr_logreg). Here in data, below partition and kernels,
 * because both read it. */

#include <stdint.h>

#include "base/cr_err.h"

typedef struct cr_assign {
    uint32_t k, nu, nv;
    uint32_t *u_part; /* nu entries in [0, k): example -> worker */
    uint32_t *v_part; /* nv entries in [0, k): key -> server */
} cr_assign;

/* Allocate an assignment of nu examples and nv keys over k machines
 * (entries uninitialised). Caller owns it; free with cr_assign_destroy,
 * which NULLs *pp and accepts NULL. */
cr_assign *cr_assign_new(uint32_t k, uint32_t nu, uint32_t nv);
void cr_assign_destroy(cr_assign **pp);

/* Write p as a placement text file (format in cr_assign.c and
 * docs/partitioning.md), via a temp file renamed into place. comment (may be
 * NULL) becomes one '#' line. Returns 0 or -1 with e filled. */
int cr_assign_save(const char *path, const cr_assign *p, const char *comment, cr_err *e);

/* Read a placement file; NULL with "file:line: reason" in e on bad input.
 * Caller owns the result. */
cr_assign *cr_assign_load(const char *path, cr_err *e);

#endif
