#include "data/cr_corpus_brown.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/cr_alloc.h"
#include "data/cr_corpus.h"

/* A corpus member: basename c + category letter a..r + two digits. */
static int is_corpus_file(const char *name) {
    const char *b = strrchr(name, '/');
    b = b ? b + 1 : name;
    return strlen(b) == 4 && b[0] == 'c' && b[1] >= 'a' && b[1] <= 'r' && b[2] >= '0' && b[2] <= '9' &&
           b[3] >= '0' && b[3] <= '9';
}

static int read_full(gzFile g, char *buf, size_t n) {
    while (n > 0) {
        int got = gzread(g, buf, n > (1u << 30) ? 1u << 30 : (unsigned)n);
        if (got <= 0) return 0;
        buf += got;
        n -= (size_t)got;
    }
    return 1;
}

static int octal(const char *s, size_t n, uint64_t *v) {
    uint64_t x = 0;
    size_t i = 0;
    while (i < n && s[i] == ' ') i++;
    if (i == n || s[i] < '0' || s[i] > '7') return -1;
    for (; i < n && s[i] >= '0' && s[i] <= '7'; i++) x = x * 8 + (uint64_t)(s[i] - '0');
    *v = x;
    return 0;
}

typedef struct brown_ctx {
    FILE *f;
    cr_cdict *seen;
    cr_brown_stats *st;
    int first;
} brown_ctx;

static void emit(void *ctx, const char *t, size_t n) {
    brown_ctx *c = ctx;
    if (!c->first) fputc(' ', c->f);
    fwrite(t, 1, n, c->f);
    c->first = 0;
    cr_cdict_intern(c->seen, t, n);
}

/* One member's text: sentences are lines, tokens word/tag. */
static int member(brown_ctx *c, const char *tgz, const char *name, char *s, size_t n, cr_err *e) {
    long lineno = 0;
    size_t i = 0;
    while (i < n) {
        size_t eol = i;
        while (eol < n && s[eol] != '\n') eol++;
        lineno++;
        c->first = 1;
        size_t k = 0;
        for (size_t j = i; j < eol;) {
            while (j < eol && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r')) j++;
            size_t t = j;
            while (j < eol && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') j++;
            if (t == j) break;
            size_t slash = j;
            while (slash > t && s[slash - 1] != '/') slash--;
            if (slash == t)
                return cr_errf(e, "%s:%s:%ld: token '%.*s' has no /tag", tgz, name, lineno, (int)(j - t), s + t);
            k += cr_corpus_tokens(s + t, slash - 1 - t, emit, c);
        }
        if (k) {
            fputc('\n', c->f);
            c->st->sentences++;
            c->st->tokens += k;
        }
        i = eol + 1;
    }
    return 0;
}

int cr_brown_write_text(const char *tgz, FILE *f, cr_brown_stats *st, cr_err *e) {
    cr_brown_stats local;
    brown_ctx c = {f, NULL, st ? st : &local, 1};
    *c.st = (cr_brown_stats){0};
    gzFile g = gzopen(tgz, "rb");
    if (!g) return cr_errf(e, "%s: cannot open: %s", tgz, strerror(errno));
    c.seen = cr_cdict_new();
    char hdr[512], name[256 + 2];
    char *data = NULL;
    size_t cap = 0;
    int rc = 0, ended = 0;
    while (!rc) {
        if (!read_full(g, hdr, sizeof hdr)) break;
        int zero = 1;
        for (size_t i = 0; i < sizeof hdr && zero; i++) zero = hdr[i] == 0;
        if (zero) {
            ended = 1;
            break;
        }
        uint64_t size;
        if (octal(hdr + 124, 12, &size)) {
            rc = cr_errf(e, "%s: not a tar archive (bad member header)", tgz);
            break;
        }
        size_t plen = strnlen(hdr + 345, 155), nlen = strnlen(hdr, 100);
        if (memcmp(hdr + 257, "ustar", 5) || !plen) snprintf(name, sizeof name, "%.*s", (int)nlen, hdr);
        else snprintf(name, sizeof name, "%.*s/%.*s", (int)plen, hdr + 345, (int)nlen, hdr);
        if (size > (1ull << 30)) {
            rc = cr_errf(e, "%s: member %s is %llu bytes, more than a Brown corpus file can be", tgz, name,
                         (unsigned long long)size);
            break;
        }
        uint64_t padded = (size + 511) / 512 * 512;
        if (padded + 1 > cap) {
            cap = padded + 1;
            data = cr_xrealloc(data, cap);
        }
        if (!read_full(g, data, padded)) break;
        char type = hdr[156];
        if ((type == '0' || type == '\0') && is_corpus_file(name)) {
            rc = member(&c, tgz, name, data, size, e);
            c.st->files++;
        }
    }
    if (!rc && !ended) {
        int zerr;
        const char *zmsg = gzerror(g, &zerr);
        rc = cr_errf(e, "%s: truncated archive%s%s", tgz, zerr ? ": " : "", zerr ? cr_corpus_strip_path(zmsg, tgz) : "");
    }
    if (!rc && c.st->files == 0) rc = cr_errf(e, "%s: no Brown corpus files (package/cXNN) in the archive", tgz);
    c.st->vocab = cr_cdict_size(c.seen);
    cr_cdict_destroy(&c.seen);
    free(data);
    gzclose(g);
    return rc;
}
