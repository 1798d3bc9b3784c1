#ifndef CR_LINES_H
#define CR_LINES_H
/* Streaming line reader shared by every text reader in src/data.
 *
 * Reads big blocks through zlib (gzopen reads plain files transparently, so
 * gzip input needs nothing from the caller), hands out one line at a time as
 * a NUL-terminated string inside its own buffer (valid until the next call),
 * and counts lines so that errors can say "file:line: ...". A truncated or
 * corrupt gzip stream is an error naming the file, never a silent short read. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"

typedef struct cr_lines cr_lines;

/* Open path for reading. Returns NULL and fills e ("PATH: cannot open: No
 * such file or directory": every file error in crescent names the file first)
 * on failure. The caller owns the reader and closes it with cr_lines_close. */
cr_lines *cr_lines_open(const char *path, cr_err *e);

/* Next line without its '\n' (and without a trailing '\r'). Returns 1 and
 * sets *line / *len, 0 at the end of the input, -1 on a read error (e is
 * filled: truncated gzip, I/O error, a line longer than 256 MiB, a NUL byte
 * inside a line, i.e. a binary file). */
int cr_lines_next(cr_lines *r, char **line, size_t *len, cr_err *e);

/* Size in bytes of an uncompressed input (for sanity checks of declared
 * counts against what the file can hold), or -1 for gzip input. */
long long cr_lines_plain_size(cr_lines *r);

/* 1-based number of the line last returned (0 before the first). */
long cr_lines_lineno(const cr_lines *r);
const char *cr_lines_path(const cr_lines *r);

/* Close and free; accepts NULL and NULLs the caller's pointer. */
void cr_lines_close(cr_lines **rp);

/* Line helpers for parsers: skip spaces/tabs; is the rest blank? */
static inline char *cr_skip_ws(char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

#endif

/* Field parsers for line formats. Each skips leading blanks, parses one
 * number at *p, and advances *p past it. Return 0 on success, -1 if there is
 * no number there or it runs into other characters (the caller names the
 * field), -2 if it is out of range (integers beyond int64, NaN/inf floats). */
int cr_parse_i64(char **p, int64_t *out);
int cr_parse_f32(char **p, float *out);
/* Is c one of the characters that may end a field (blank, NUL)? */
static inline int cr_field_end(char c) { return c == ' ' || c == '\t' || c == '\0'; }
