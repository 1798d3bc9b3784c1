#include "data/cr_lines.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/cr_alloc.h"

#define BLOCK (1u << 20)
#define MAX_LINE ((size_t)256 << 20)

struct cr_lines {
    gzFile gz;
    char *path;
    char *buf;         /* buf[start, end) holds unread bytes */
    size_t cap, start, end;
    long lineno;
    int eof;
};

cr_lines *cr_lines_open(const char *path, cr_err *e) {
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        cr_errf(e, "%s: cannot open: %s", path, errno ? strerror(errno) : "unknown error");
        return NULL;
    }
    gzbuffer(gz, 1u << 18);
    cr_lines *r = cr_xcalloc(1, sizeof *r);
    r->gz = gz;
    r->path = cr_xstrdup(path);
    r->cap = BLOCK + 1;
    r->buf = cr_xmalloc(r->cap);
    return r;
}

/* Refill: move the unread tail to the front, grow if a line fills the
 * buffer, read one more block. Returns bytes read, 0 at EOF, -1 on error. */
static int fill(cr_lines *r, cr_err *e) {
    size_t left = r->end - r->start;
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, left);
        r->start = 0;
        r->end = left;
    }
    if (r->cap - 1 - r->end < BLOCK) {
        if (r->cap > MAX_LINE) return cr_errf_at(e, r->path, r->lineno + 1, "line longer than 256 MiB");
        r->cap = r->cap * 2;
        r->buf = cr_xrealloc(r->buf, r->cap);
    }
    int n = gzread(r->gz, r->buf + r->end, BLOCK);
    if (n < 0) {
        int code;
        const char *msg = gzerror(r->gz, &code);
        return cr_errf(e, "%s: read error: %s", r->path, code == Z_ERRNO ? strerror(errno) : msg);
    }
    if (n == 0) {
        int code;
        const char *msg = gzerror(r->gz, &code);
        if (code != Z_OK && code != Z_STREAM_END)
            return cr_errf(e, "%s: %s (truncated or corrupt gzip?)", r->path, msg);
        r->eof = 1;
    }
    r->end += (size_t)n;
    return n;
}

int cr_lines_next(cr_lines *r, char **line, size_t *len, cr_err *e) {
    size_t scan = r->start;
    for (;;) {
        char *nl = memchr(r->buf + scan, '\n', r->end - scan);
        if (nl || (r->eof && r->end > r->start)) {
            char *s = r->buf + r->start;
            size_t n = nl ? (size_t)(nl - s) : r->end - r->start;
            r->start += nl ? n + 1 : n;
            if (n > 0 && s[n - 1] == '\r') n--;
            s[n] = '\0'; /* cap leaves room for this NUL at the very end */
            r->lineno++;
            *line = s;
            *len = n;
            return 1;
        }
        if (r->eof) return 0;
        size_t seen = r->end - r->start;
        if (fill(r, e) < 0) return -1;
        scan = r->start + seen;
    }
}

long cr_lines_lineno(const cr_lines *r) { return r->lineno; }
const char *cr_lines_path(const cr_lines *r) { return r->path; }

void cr_lines_close(cr_lines **rp) {
    if (!rp || !*rp) return;
    cr_lines *r = *rp;
    gzclose(r->gz);
    free(r->path);
    free(r->buf);
    free(r);
    *rp = NULL;
}

int cr_parse_i64(char **p, int64_t *out) {
    char *s = cr_skip_ws(*p), *end;
    if (!(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9'))) return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s) return -1;
    if (errno == ERANGE) return -2;
    *out = v;
    *p = end;
    return 0;
}

int cr_parse_f32(char **p, float *out) {
    char *s = cr_skip_ws(*p), *end;
    if (*s == '\0') return -1;
    float v = strtof(s, &end);
    if (end == s) return -1;
    if (!isfinite(v)) return -2;
    *out = v;
    *p = end;
    return 0;
}
