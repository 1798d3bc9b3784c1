#include "net/cr_filter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_half.h"
#include "net/cr_wire.h"

/* ---------- key caching ---------- */

/* A cached list. Entries sit in a hash table (chains through `chain`)
 * and in a recency list (prev/next; head: most recently used). */
typedef struct kent {
    uint64_t h;
    int64_t n;
    int64_t *keys;
    uint32_t serial;
    int32_t prev, next, chain;
} kent;

struct cr_kcache {
    size_t cap, bytes;
    kent *e;
    int32_t ne, cape, freel; /* entries used or freed; free ones chained through `chain` */
    int32_t *bucket;
    uint32_t nb;             /* power of two */
    int32_t head, tail;
    uint32_t serial;         /* serial of the last store */
    int fresh;               /* sender: no store yet */
    int64_t count;
};

static size_t ent_bytes(int64_t n) { return (size_t)n * sizeof(int64_t) + CR_KC_ENTRY_BYTES; }

cr_kcache *cr_kcache_new(size_t cap) {
    cr_kcache *c = cr_xcalloc(1, sizeof *c);
    c->cap = cap;
    c->nb = 64;
    c->bucket = cr_xmalloc(c->nb * sizeof *c->bucket);
    memset(c->bucket, 0xff, c->nb * sizeof *c->bucket);
    c->head = c->tail = c->freel = -1;
    c->fresh = 1;
    return c;
}

static void clear(cr_kcache *c) {
    for (int32_t i = 0; i < c->ne; i++) free(c->e[i].keys);
    free(c->e);
    c->e = NULL;
    c->ne = c->cape = 0;
    c->freel = c->head = c->tail = -1;
    memset(c->bucket, 0xff, c->nb * sizeof *c->bucket);
    c->bytes = 0;
    c->count = 0;
    c->serial = 0;
}

void cr_kcache_destroy(cr_kcache **cp) {
    cr_kcache *c = cp ? *cp : NULL;
    if (!c) return;
    clear(c);
    free(c->bucket);
    free(c);
    *cp = NULL;
}

uint64_t cr_kcache_hash(const int64_t *keys, int64_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n * 0xC2B2AE3D27D4EB4Full;
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)keys[i] * 0x87C37B91114253D5ull;
        k = (k << 31 | k >> 33) * 0x4CF5AD432745937Full;
        h = ((h ^ k) << 27 | (h ^ k) >> 37) * 5 + 0x52DCE729;
    }
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h;
}

static uint32_t bslot(const cr_kcache *c, uint64_t h) { return (uint32_t)(h >> 20) & (c->nb - 1); }

static int32_t find(const cr_kcache *c, uint64_t h) {
    for (int32_t i = c->bucket[bslot(c, h)]; i >= 0; i = c->e[i].chain)
        if (c->e[i].h == h) return i;
    return -1;
}

static void lru_unlink(cr_kcache *c, int32_t i) {
    kent *x = &c->e[i];
    if (x->prev >= 0) c->e[x->prev].next = x->next;
    else c->head = x->next;
    if (x->next >= 0) c->e[x->next].prev = x->prev;
    else c->tail = x->prev;
}

static void lru_front(cr_kcache *c, int32_t i) {
    kent *x = &c->e[i];
    x->prev = -1;
    x->next = c->head;
    if (c->head >= 0) c->e[c->head].prev = i;
    c->head = i;
    if (c->tail < 0) c->tail = i;
}

static void touch(cr_kcache *c, int32_t i) {
    lru_unlink(c, i);
    lru_front(c, i);
}

static void drop(cr_kcache *c, int32_t i) {
    kent *x = &c->e[i];
    int32_t *at = &c->bucket[bslot(c, x->h)];
    while (*at != i) at = &c->e[*at].chain;
    *at = x->chain;
    lru_unlink(c, i);
    c->bytes -= ent_bytes(x->n);
    c->count--;
    free(x->keys);
    x->keys = NULL;
    x->chain = c->freel;
    c->freel = i;
}

static void rehash(cr_kcache *c) {
    c->nb *= 2;
    c->bucket = cr_xrealloc(c->bucket, c->nb * sizeof *c->bucket);
    memset(c->bucket, 0xff, c->nb * sizeof *c->bucket);
    for (int32_t i = c->head; i >= 0; i = c->e[i].next) {
        uint32_t b = bslot(c, c->e[i].h);
        c->e[i].chain = c->bucket[b];
        c->bucket[b] = i;
    }
}

/* Evict least recently used lists until `need` more bytes fit. */
static int64_t make_room(cr_kcache *c, size_t need) {
    int64_t ev = 0;
    while (c->tail >= 0 && c->bytes + need > c->cap) {
        drop(c, c->tail);
        ev++;
    }
    return ev;
}

static void insert(cr_kcache *c, uint64_t h, const int64_t *keys, int64_t n, uint32_t serial) {
    int32_t i = c->freel;
    if (i >= 0) {
        c->freel = c->e[i].chain;
    } else {
        if (c->ne == c->cape) {
            c->cape = c->cape ? 2 * c->cape : 16;
            c->e = cr_xrealloc(c->e, (size_t)c->cape * sizeof *c->e);
        }
        i = c->ne++;
    }
    kent *x = &c->e[i];
    x->h = h;
    x->n = n;
    x->serial = serial;
    x->keys = cr_xmalloc((size_t)n * sizeof *keys);
    memcpy(x->keys, keys, (size_t)n * sizeof *keys);
    uint32_t b = bslot(c, h);
    x->chain = c->bucket[b];
    c->bucket[b] = i;
    lru_front(c, i);
    c->bytes += ent_bytes(n);
    if (++c->count > (int64_t)c->nb) rehash(c);
}

void cr_kcache_send_h(cr_kcache *c, const int64_t *keys, int64_t n, uint64_t h, cr_kc_out *o) {
    memset(o, 0, sizeof *o);
    if (n < CR_KC_MIN_KEYS || n > (int64_t)UINT32_MAX || ent_bytes(n) > c->cap) return; /* CR_KC_FULL */
    int32_t i = find(c, h);
    if (i >= 0 && c->e[i].n == n && !memcmp(c->e[i].keys, keys, (size_t)n * sizeof *keys)) {
        touch(c, i);
        o->action = CR_KC_HASH;
        o->serial = c->e[i].serial;
        return;
    }
    if (i >= 0) { /* another list under this hash: it goes, on both sides */
        o->collision = 1;
        drop(c, i);
    }
    o->evicted = make_room(c, ent_bytes(n));
    o->reset = c->fresh;
    c->fresh = 0;
    o->serial = ++c->serial;
    insert(c, h, keys, n, o->serial);
    o->action = CR_KC_STORE;
}

void cr_kcache_send(cr_kcache *c, const int64_t *keys, int64_t n, cr_kc_out *o) {
    cr_kcache_send_h(c, keys, n, cr_kcache_hash(keys, n), o);
}

const int64_t *cr_kcache_store(cr_kcache *c, const int64_t *keys, int64_t n, uint32_t serial, int reset, int *resync) {
    *resync = 0;
    if (reset) clear(c);
    if (serial != c->serial + 1) {
        *resync = 1;
        clear(c);
    }
    c->serial = serial;
    if (n < CR_KC_MIN_KEYS || n > (int64_t)UINT32_MAX || ent_bytes(n) > c->cap) return NULL;
    uint64_t h = cr_kcache_hash(keys, n);
    int32_t i = find(c, h);
    if (i >= 0) drop(c, i);
    make_room(c, ent_bytes(n));
    insert(c, h, keys, n, serial);
    return c->e[c->head].keys;
}

void cr_kcache_frame(uint64_t h, int64_t n, unsigned char out[CR_KC_FRAME]) {
    uint32_t len = (uint32_t)n;
    memcpy(out, &h, 8);
    memcpy(out + 8, &len, 4);
}

const int64_t *cr_kcache_find(cr_kcache *c, const void *frame, int64_t n, uint32_t serial, cr_err *e) {
    uint64_t h;
    uint32_t len;
    memcpy(&h, frame, 8);
    memcpy(&len, (const char *)frame + 8, 4);
    if ((int64_t)len != n) {
        cr_errf(e, "key cache: hash frame for %u keys in a request of %lld", len, (long long)n);
        return NULL;
    }
    int32_t i = find(c, h);
    if (i < 0 || c->e[i].n != n || c->e[i].serial != serial) {
        cr_errf(e, "key cache miss: list %u (%lld keys, hash %016llx) is not cached here", serial, (long long)n,
                (unsigned long long)h);
        return NULL;
    }
    touch(c, i);
    return c->e[i].keys;
}

size_t cr_kcache_bytes(const cr_kcache *c) { return c->bytes; }
int64_t cr_kcache_count(const cr_kcache *c) { return c->count; }

/* ---------- zero removal ---------- */

static size_t bitmap_bytes(size_t n) { return (n + 7) / 8; }

size_t cr_zeros_size(size_t n, size_t nnz) {
    size_t bm = bitmap_bytes(n), ix = 4 * nnz;
    return 8 + (bm <= ix ? bm : ix) + 4 * nnz;
}

static inline uint32_t word(const void *p, size_t i) {
    uint32_t u;
    memcpy(&u, (const char *)p + 4 * i, 4);
    return u;
}

void *cr_zeros_encode(const void *vals, size_t n, size_t *outn, size_t *nnzp) {
    size_t nnz = 0;
    for (size_t i = 0; i < n; i++) nnz += word(vals, i) != 0;
    *nnzp = nnz;
    size_t sz = cr_zeros_size(n, nnz);
    if (sz >= 4 * n) return NULL;
    unsigned char *b = cr_xmalloc(sz);
    uint32_t kind = bitmap_bytes(n) <= 4 * nnz ? 1 : 2, cnt = (uint32_t)nnz;
    memcpy(b, &kind, 4);
    memcpy(b + 4, &cnt, 4);
    unsigned char *map = b + 8, *v = b + sz - 4 * nnz;
    if (kind == 1) memset(map, 0, bitmap_bytes(n));
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = word(vals, i);
        if (!u) continue;
        if (kind == 1) {
            map[i >> 3] |= (unsigned char)(1u << (i & 7));
        } else {
            uint32_t pos = (uint32_t)i;
            memcpy(map + 4 * j, &pos, 4);
        }
        memcpy(v + 4 * j++, &u, 4);
    }
    *outn = sz;
    return b;
}

static int decode_bitmap(const unsigned char *map, const unsigned char *v, size_t nnz, uint32_t *out, size_t n,
                         cr_err *e) {
    size_t bits = 0, nb = bitmap_bytes(n);
    for (size_t i = 0; i < nb; i++) bits += (size_t)__builtin_popcount(map[i]);
    if (bits != nnz) return cr_errf(e, "zero-removed frame: bitmap of %zu values for %zu", bits, nnz);
    if (n % 8 && map[nb - 1] >> (n % 8)) return cr_errf(e, "zero-removed frame: bitmap past %zu values", n);
    memset(out, 0, n * 4);
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (map[i >> 3] >> (i & 7) & 1) memcpy(out + i, v + 4 * j++, 4);
    return 0;
}

static int decode_index(const unsigned char *ix, const unsigned char *v, size_t nnz, uint32_t *out, size_t n,
                        cr_err *e) {
    memset(out, 0, n * 4);
    int64_t last = -1;
    for (size_t j = 0; j < nnz; j++) {
        uint32_t pos = word(ix, j);
        if ((int64_t)pos <= last || pos >= n)
            return cr_errf(e, "zero-removed frame: position %u out of order or past %zu values", pos, n);
        memcpy(out + pos, v + 4 * j, 4);
        last = pos;
    }
    return 0;
}

int cr_zeros_decode(const void *frame, size_t fn, void *out, size_t n, cr_err *e) {
    if (fn < 8) return cr_errf(e, "zero-removed frame of %zu bytes (at least 8)", fn);
    uint32_t kind = word(frame, 0), nnz = word(frame, 1);
    if (kind != 1 && kind != 2) return cr_errf(e, "zero-removed frame: unknown kind %u", kind);
    if (nnz > n) return cr_errf(e, "zero-removed frame: %u nonzero values of %zu", nnz, n);
    size_t map = kind == 1 ? bitmap_bytes(n) : 4 * (size_t)nnz;
    if (fn != 8 + map + 4 * (size_t)nnz)
        return cr_errf(e, "zero-removed frame of %zu bytes for %zu values, %u nonzero (expected %zu)", fn, n, nnz,
                       8 + map + 4 * (size_t)nnz);
    const unsigned char *b = frame;
    return kind == 1 ? decode_bitmap(b + 8, b + 8 + map, nnz, out, n, e)
                     : decode_index(b + 8, b + 8 + map, nnz, out, n, e);
}

int cr_filter_frame_in(int zlib, int zeros, const void *frame, size_t fn, int64_t raw, void *out, size_t outb,
                       cr_err *e) {
    if (outb % 4) return cr_errf(e, "value frame of %zu bytes is not whole values", outb);
    if (!zeros) {
        if (raw != (int64_t)outb) return cr_errf(e, "value frame: inflated size %lld, expected %zu", (long long)raw, outb);
        if (zlib) return cr_wire_inflate(frame, fn, out, outb, e);
        if (fn != outb) return cr_errf(e, "value frame of %zu bytes, expected %zu", fn, outb);
        memcpy(out, frame, outb);
        return 0;
    }
    if (raw < 8 || raw >= (int64_t)outb)
        return cr_errf(e, "zero-removed frame: size %lld for %zu value bytes", (long long)raw, outb);
    if (!zlib) {
        if ((int64_t)fn != raw) return cr_errf(e, "zero-removed frame of %zu bytes, header says %lld", fn, (long long)raw);
        return cr_zeros_decode(frame, fn, out, outb / 4, e);
    }
    void *tmp = cr_xmalloc((size_t)raw);
    int rc = cr_wire_inflate(frame, fn, tmp, (size_t)raw, e);
    if (rc == 0) rc = cr_zeros_decode(tmp, (size_t)raw, out, outb / 4, e);
    free(tmp);
    return rc;
}

int cr_filter_half_in(int zlib, const void *frame, size_t fn, int64_t raw, float *out, size_t outb, cr_err *e) {
    if (outb % 4) return cr_errf(e, "value frame of %zu bytes is not whole values", outb);
    size_t n = outb / 4, hb = n * sizeof(uint16_t);
    if (raw != (int64_t)hb) return cr_errf(e, "half-float frame: size %lld, expected %zu", (long long)raw, hb);
    if (!zlib) {
        if (fn != hb) return cr_errf(e, "half-float frame of %zu bytes, expected %zu", fn, hb);
        if ((uintptr_t)frame % sizeof(uint16_t) == 0) {
            cr_half_to_f32(frame, out, n);
            return 0;
        }
    }
    uint16_t *tmp = cr_xmalloc(hb + 1);
    int rc = 0;
    if (zlib) rc = cr_wire_inflate(frame, fn, tmp, hb, e);
    else memcpy(tmp, frame, hb);
    if (rc == 0) cr_half_to_f32(tmp, out, n);
    free(tmp);
    return rc;
}

/* ---------- push-side rules, sigmod ---------- */

int64_t cr_filter_rows(cr_filter_rule rule, void *ctx, const int64_t *keys, int64_t n, const float *vals, int dim,
                       int64_t *okeys, float *ovals, int64_t *coords) {
    int64_t m = 0, c = 0;
    for (int64_t i = 0; i < n; i++) {
        int k = rule(ctx, keys[i], vals + (size_t)i * dim, ovals + (size_t)m * dim, dim);
        if (k <= 0) continue;
        okeys[m++] = keys[i];
        c += k;
    }
    *coords = c;
    return m;
}

struct cr_sigmod {
    int dim;
    float thr;
    int64_t *skey;  /* slots: key (any int64: sparse tables hash their keys) */
    int32_t *srow;  /* slots: row index, or -1 (empty) */
    size_t nslot;   /* power of two, > 2 * nrows */
    int64_t *rkey;  /* row -> key */
    float *rows;    /* nrows * dim residuals */
    size_t nrows, caprows;
};

cr_sigmod *cr_sigmod_new(int dim, float threshold) {
    cr_sigmod *s = cr_xcalloc(1, sizeof *s);
    s->dim = dim;
    s->thr = threshold;
    s->nslot = 1024;
    s->skey = cr_xmalloc(s->nslot * sizeof *s->skey);
    s->srow = cr_xmalloc(s->nslot * sizeof *s->srow);
    memset(s->srow, 0xff, s->nslot * sizeof *s->srow);
    return s;
}

void cr_sigmod_destroy(cr_sigmod **sp) {
    cr_sigmod *s = sp ? *sp : NULL;
    if (!s) return;
    free(s->skey);
    free(s->srow);
    free(s->rkey);
    free(s->rows);
    free(s);
    *sp = NULL;
}

static size_t kslot(int64_t k, size_t mask) { return (size_t)(((uint64_t)k * 0x9E3779B97F4A7C15ull) >> 17) & mask; }

static void sig_grow(cr_sigmod *s) {
    size_t ns = s->nslot * 2;
    int64_t *sk = cr_xmalloc(ns * sizeof *sk);
    int32_t *sr = cr_xmalloc(ns * sizeof *sr);
    memset(sr, 0xff, ns * sizeof *sr);
    for (size_t r = 0; r < s->nrows; r++) {
        size_t j = kslot(s->rkey[r], ns - 1);
        while (sr[j] >= 0) j = (j + 1) & (ns - 1);
        sk[j] = s->rkey[r];
        sr[j] = (int32_t)r;
    }
    free(s->skey);
    free(s->srow);
    s->skey = sk;
    s->srow = sr;
    s->nslot = ns;
}

/* The residual row of key k, created zeroed. */
static float *sig_row(cr_sigmod *s, int64_t k) {
    size_t mask = s->nslot - 1, j = kslot(k, mask);
    for (; s->srow[j] >= 0; j = (j + 1) & mask)
        if (s->skey[j] == k) return s->rows + (size_t)s->srow[j] * s->dim;
    if (s->nrows == s->caprows) {
        s->caprows = s->caprows ? 2 * s->caprows : 256;
        s->rkey = cr_xrealloc(s->rkey, s->caprows * sizeof *s->rkey);
        s->rows = cr_xrealloc(s->rows, s->caprows * (size_t)s->dim * sizeof *s->rows);
    }
    size_t r = s->nrows++;
    s->rkey[r] = k;
    memset(s->rows + r * s->dim, 0, (size_t)s->dim * sizeof *s->rows);
    s->skey[j] = k;
    s->srow[j] = (int32_t)r;
    if (2 * s->nrows >= s->nslot) sig_grow(s);
    return s->rows + r * s->dim;
}

int cr_sigmod_rule(void *ctx, int64_t key, const float *g, float *out, int dim) {
    cr_sigmod *s = ctx;
    float *r = sig_row(s, key);
    int kept = 0;
    for (int j = 0; j < dim; j++) {
        float a = r[j] + g[j];
        if (fabsf(a) > s->thr) {
            out[j] = a;
            r[j] = 0;
            kept++;
        } else {
            out[j] = 0;
            r[j] = a;
        }
    }
    return kept;
}

int64_t cr_sigmod_flush(cr_sigmod *s, int64_t **keys, float **vals) {
    size_t dim = (size_t)s->dim, m = 0;
    *keys = NULL;
    *vals = NULL;
    for (size_t r = 0; r < s->nrows; r++) {
        const float *row = s->rows + r * dim;
        size_t j = 0;
        while (j < dim && row[j] == 0) j++;
        if (j == dim) continue;
        if (!*keys) {
            *keys = cr_xmalloc((s->nrows - r) * sizeof **keys);
            *vals = cr_xmalloc((s->nrows - r) * dim * sizeof **vals);
        }
        (*keys)[m] = s->rkey[r];
        memcpy(*vals + m * dim, row, dim * sizeof *row);
        memset(s->rows + r * dim, 0, dim * sizeof *row);
        m++;
    }
    return (int64_t)m;
}

size_t cr_sigmod_bytes(const cr_sigmod *s) {
    return sizeof *s + s->nslot * (sizeof *s->skey + sizeof *s->srow) +
           s->caprows * (sizeof *s->rkey + (size_t)s->dim * sizeof *s->rows);
}

/* ---------- counters ---------- */

#define LD(x) ((long long)atomic_load_explicit(&s->x, memory_order_relaxed))

int cr_filter_stats_put(const cr_filter_stats *s, int key_cache, int zeros, int sigmod, int zlib, int half,
                        char *b, size_t cap) {
    size_t len = 0;
    int r;
#define PUT(...)                                                          \
    do {                                                                  \
        r = snprintf(b + len, len < cap ? cap - len : 0, __VA_ARGS__);    \
        if (r > 0) len += (size_t)r;                                      \
    } while (0)
    if (key_cache)
        PUT("key_cache={hits=%lld,lists=%lld,stored=%lld,collisions=%lld,evicted=%lld,misses=%lld,"
            "bytes_before=%lld,bytes_after=%lld},",
            LD(kc_hashed), LD(kc_lists), LD(kc_stored), LD(kc_collisions), LD(kc_evicted), LD(kc_misses),
            LD(kc_before), LD(kc_after));
    if (zeros)
        PUT("zeros={hits=%lld,frames=%lld,encoded=%lld,bytes_before=%lld,bytes_after=%lld},", LD(z_zeros),
            LD(z_frames), LD(z_encoded), LD(z_before), LD(z_after));
    if (half)
        PUT("half={frames=%lld,bytes_before=%lld,bytes_after=%lld,overflows=%lld},", LD(h_frames), LD(h_before),
            LD(h_after), LD(h_overflows));
    if (zlib)
        PUT("compress={hits=%lld,bytes_before=%lld,bytes_after=%lld},", LD(zl_frames), LD(zl_before), LD(zl_after));
    if (sigmod)
        PUT("sigmod={hits=%lld,rows=%lld,rows_dropped=%lld,rows_flushed=%lld,bytes_before=%lld,bytes_after=%lld},",
            LD(sg_coords_held), LD(sg_rows), LD(sg_dropped), LD(sg_flushed), LD(sg_before), LD(sg_after));
#undef PUT
    return (int)len;
}
#undef LD
