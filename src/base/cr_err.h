#ifndef CR_ERR_H
#define CR_ERR_H
/* Error reporting for the C core.
 *
 * The core never raises and never prints on behalf of a caller: a function
 * that can fail returns int (0 = ok, -1 = error) and writes a one-line
 * message into a caller-owned cr_err. Bindings turn it into a Lua error,
 * the CLI prints it and exits non-zero. Messages about input name the place:
 * "file:line: what is wrong". */

#include <stddef.h>

#define CR_ERR_MAX 512

typedef struct cr_err {
    char msg[CR_ERR_MAX];
} cr_err;

/* Format a message into e (may be NULL: then nothing is written). Returns -1
 * so that callers can write `return cr_errf(e, "...")`. */
int cr_errf(cr_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Same, with "path:line: " in front. */
int cr_errf_at(cr_err *e, const char *path, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Clear e. */
void cr_err_clear(cr_err *e);

#endif
