#include "data/cr_corpus.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cr_alloc.h"
#include "base/cr_utf8.h"

/* ---- dictionary: open addressing over ids, strings in one growing arena ---- */

struct cr_cdict {
    uint32_t *slots; /* id + 1, 0 = empty */
    uint32_t cap;    /* power of two */
    uint32_t n;
    size_t *off;     /* string offsets into arena, per id */
    uint64_t *counts;
    uint32_t idcap;
    char *arena;
    size_t alen, acap;
};

static uint64_t hash_str(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a, then mixed */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    h ^= h >> 29;
    return h * 0xbf58476d1ce4e5b9ull;
}

cr_cdict *cr_cdict_new(void) {
    cr_cdict *d = cr_xcalloc(1, sizeof *d);
    d->cap = 1024;
    d->slots = cr_xcalloc(d->cap, sizeof *d->slots);
    d->idcap = 512;
    d->off = cr_xmalloc(d->idcap * sizeof *d->off);
    d->counts = cr_xmalloc(d->idcap * sizeof *d->counts);
    d->acap = 1 << 16;
    d->arena = cr_xmalloc(d->acap);
    return d;
}

void cr_cdict_destroy(cr_cdict **d_p) {
    if (!d_p || !*d_p) return;
    cr_cdict *d = *d_p;
    free(d->slots);
    free(d->off);
    free(d->counts);
    free(d->arena);
    free(d);
    *d_p = NULL;
}

static int same(const cr_cdict *d, uint32_t id, const char *s, size_t n) {
    const char *t = d->arena + d->off[id];
    return strncmp(t, s, n) == 0 && t[n] == '\0';
}

static uint32_t *lookup(const cr_cdict *d, const char *s, size_t n) {
    uint32_t mask = d->cap - 1, i = (uint32_t)hash_str(s, n) & mask;
    while (d->slots[i] && !same(d, d->slots[i] - 1, s, n)) i = (i + 1) & mask;
    return &d->slots[i];
}

static void grow(cr_cdict *d) {
    uint32_t ncap = d->cap * 2, mask = ncap - 1;
    uint32_t *ns = cr_xcalloc(ncap, sizeof *ns);
    for (uint32_t id = 0; id < d->n; id++) {
        const char *t = d->arena + d->off[id];
        uint32_t i = (uint32_t)hash_str(t, strlen(t)) & mask;
        while (ns[i]) i = (i + 1) & mask;
        ns[i] = id + 1;
    }
    free(d->slots);
    d->slots = ns;
    d->cap = ncap;
}

uint32_t cr_cdict_find(const cr_cdict *d, const char *s, size_t n) {
    uint32_t v = *lookup(d, s, n);
    return v ? v - 1 : UINT32_MAX;
}

uint32_t cr_cdict_intern(cr_cdict *d, const char *s, size_t n) {
    uint32_t *slot = lookup(d, s, n);
    if (*slot) return *slot - 1;
    uint32_t id = d->n++;
    if (id == d->idcap) {
        d->idcap *= 2;
        d->off = cr_xrealloc(d->off, d->idcap * sizeof *d->off);
        d->counts = cr_xrealloc(d->counts, d->idcap * sizeof *d->counts);
    }
    while (d->alen + n + 1 > d->acap) {
        d->acap *= 2;
        d->arena = cr_xrealloc(d->arena, d->acap);
    }
    memcpy(d->arena + d->alen, s, n);
    d->arena[d->alen + n] = '\0';
    d->off[id] = d->alen;
    d->alen += n + 1;
    d->counts[id] = 0;
    *slot = id + 1;
    if ((uint64_t)d->n * 2 > d->cap) grow(d);
    return id;
}

uint32_t cr_cdict_size(const cr_cdict *d) { return d->n; }
const char *cr_cdict_str(const cr_cdict *d, uint32_t id) { return d->arena + d->off[id]; }
uint64_t *cr_cdict_counts(cr_cdict *d) { return d->counts; }

/* ---- tokenizer ---- */

static int is_word_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* Length of the separator at s[i], 0 if a word starts or goes on there: an
 * ASCII byte other than a letter or digit, or a UTF-8 encoded Latin-1
 * control, punctuation or symbol (U+0080..U+00BF but the letters ª µ º,
 * U+00D7, U+00F7) or General Punctuation (U+2000..U+206F: the typographic
 * quotes and dashes, so "market’s" splits as "market's" does). */
static size_t sep_len(const char *s, size_t n, size_t i) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) return is_word_byte(c) ? 0 : 1;
    uint32_t cp;
    size_t k = cr_utf8_seq(s + i, n - i, &cp);
    if (!k) return 0;
    int latin = cp <= 0xBF && cp != 0xAA && cp != 0xB5 && cp != 0xBA;
    return latin || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x206F) ? k : 0;
}

/* Why whole characters: a token cut at 255 bytes must stay valid UTF-8. */
size_t cr_corpus_tokens(const char *s, size_t n, cr_corpus_emit_fn emit, void *ctx) {
    char buf[256];
    size_t count = 0, i = 0, k;
    while (i < n) {
        while (i < n && (k = sep_len(s, n, i))) i += k;
        size_t len = 0;
        int full = 0;
        while (i < n && !sep_len(s, n, i)) {
            unsigned char c = (unsigned char)s[i];
            size_t cl = c < 0x80 ? 1 : cr_utf8_seq(s + i, n - i, NULL);
            if (!cl) cl = 1; /* a stray byte: kept as it is */
            full = full || len + cl > sizeof buf - 1;
            for (size_t j = 0; j < cl && !full; j++) {
                unsigned char b = (unsigned char)s[i + j];
                buf[len++] = (char)(b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b);
            }
            i += cl;
        }
        if (len) {
            buf[len] = '\0';
            emit(ctx, buf, len);
            count++;
        }
    }
    return count;
}

const char *cr_corpus_strip_path(const char *msg, const char *path) {
    size_t n = strlen(path);
    if (!strncmp(msg, path, n) && msg[n] == ':' && msg[n + 1] == ' ') return msg + n + 2;
    return msg;
}

int cr_corpus_mkdir(const char *path, cr_err *e) {
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return 0;
        return cr_errf(e, "%s: exists and is not a directory", path);
    }
    if (mkdir(path, 0777) != 0) return cr_errf(e, "%s: cannot create directory: %s", path, strerror(errno));
    return 0;
}
