#ifndef CR_OUT_H
#define CR_OUT_H
/* An output file that appears only when complete: writes go to
 * "PATH.tmp.XXXXXX" (mkstemp, mode 0644) through a large stdio buffer,
 * cr_out_commit flushes and renames it over PATH, cr_out_abort deletes it.
 * PATH must be missing or a regular file (cr_file_check_replace, at open and
 * again before the rename): a device, fifo or symlink is never replaced.
 * Every writer and generator in src/data writes through this, so an error
 * half-way never leaves a file that looks finished. No fsync: these are data
 * files and caches that can be regenerated (fsync of 200 MB cost more than
 * writing it); checkpoints need a durable path of their own. */

#include <stdio.h>

#include "base/cr_err.h"

typedef struct cr_out {
    FILE *f;        /* write with fprintf/fputs/fwrite */
    char *path;     /* final name (owned) */
    char *tmp;      /* temporary name (owned) */
    char *buf;      /* stdio buffer (owned) */
} cr_out;

/* Create the temporary file. Returns 0, or -1 with e = "PATH: reason". */
int cr_out_open(cr_out *o, const char *path, cr_err *e);
/* Flush, check for write errors, rename to the final name, free.
 * Returns 0, or -1 with e filled (the temporary file is removed). */
int cr_out_commit(cr_out *o, cr_err *e);
/* Close and delete the temporary file, free; safe on a zeroed cr_out. */
void cr_out_abort(cr_out *o);

#endif
