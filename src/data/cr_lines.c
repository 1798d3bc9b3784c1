#include "data/cr_lines.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/cr_alloc.h"

#define BLOCK (1u << 20)
#define MAX_LINE ((size_t)256 << 20)

struct cr_lines {
    gzFile gz;
    char *path;
    char *buf;         /* buf[start, end) holds unread bytes */
    size_t cap, start, end;
    long nul;          /* offset in buf of the first NUL byte read, or -1 */
    long lineno;
    int eof;
};

cr_lines *cr_lines_open(const char *path, cr_err *e) {
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        cr_errf(e, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    gzbuffer(gz, 1u << 18);
    cr_lines *r = cr_xcalloc(1, sizeof *r);
    r->gz = gz;
    r->path = cr_xstrdup(path);
    r->cap = BLOCK + 1;
    r->buf = cr_xmalloc(r->cap);
    r->nul = -1;
    return r;
}

/* zlib's message, without the "path: " zlib puts in front of it. */
static const char *gz_msg(cr_lines *r, int *code) {
    const char *m = gzerror(r->gz, code);
    size_t n = strlen(r->path);
    if (!strncmp(m, r->path, n) && m[n] == ':' && m[n + 1] == ' ') m += n + 2;
    return m;
}

/* Refill: move the unread tail to the front, grow if a line fills the
 * buffer, read one more block. Returns bytes read, 0 at EOF, -1 on error. */
static int fill(cr_lines *r, cr_err *e) {
    size_t left = r->end - r->start;
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, left);
        if (r->nul >= 0) r->nul -= (long)r->start;
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
        const char *msg = gz_msg(r, &code);
        return cr_errf(e, "%s: read error: %s", r->path, code == Z_ERRNO ? strerror(errno) : msg);
    }
    if (n == 0) {
        int code;
        const char *msg = gz_msg(r, &code);
        if (code != Z_OK && code != Z_STREAM_END)
            return cr_errf(e, "%s: truncated or corrupt gzip: %s", r->path, msg);
        r->eof = 1;
    }
    if (r->nul < 0) { /* one scan per block, not one per line */
        char *z = memchr(r->buf + r->end, '\0', (size_t)n);
        if (z) r->nul = z - r->buf;
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
            r->lineno++;
            if (r->nul >= 0 && (size_t)r->nul < r->start + n) /* parsers stop at NUL: refuse, not half a line */
                return cr_errf_at(e, r->path, r->lineno, "NUL byte in line (binary file?)");
            r->start += nl ? n + 1 : n;
            if (n > 0 && s[n - 1] == '\r') n--;
            s[n] = '\0'; /* cap leaves room for this NUL at the very end */
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

long long cr_lines_plain_size(cr_lines *r) {
    struct stat st;
    if (!gzdirect(r->gz) || stat(r->path, &st) != 0) return -1;
    return (long long)st.st_size;
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
    /* Fast path for plain ids (most fields of every format): up to 18
     * digits cannot overflow; a 19th digit goes to strtoll, as do signs. */
    {
        char *d = s;
        int64_t v = 0;
        while (d - s < 18 && *d >= '0' && *d <= '9') v = v * 10 + (*d++ - '0');
        if (d > s && !(*d >= '0' && *d <= '9')) {
            *out = v;
            *p = d;
            return 0;
        }
    }
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
    /* Fast path for small integers (counts, 0/1 features): exact, and the
     * conversion from int rounds like strtof would. Anything else (a dot,
     * an exponent, more digits) goes to strtof. */
    {
        const char *d = s + (*s == '-' || *s == '+');
        int v = 0, n = 0;
        while (n < 9 && *d >= '0' && *d <= '9') v = v * 10 + (*d++ - '0'), n++;
        if (n > 0 && !(*d >= '0' && *d <= '9') && *d != '.' && *d != 'e' && *d != 'E' && *d != 'x' &&
            *d != 'X' && !(*d >= 'a' && *d <= 'z') && !(*d >= 'A' && *d <= 'Z')) {
            *out = *s == '-' ? -(float)v : (float)v; /* keeps -0 */
            *p = (char *)d;
            return 0;
        }
    }
    float v = strtof(s, &end);
    if (end == s) return -1;
    if (!isfinite(v)) return -2;
    *out = v;
    *p = end;
    return 0;
}
