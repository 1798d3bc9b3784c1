/* Count-min sketch of key accesses with heavy-hitter candidates
 * (cr_sketch.h). */
#include "ps/cr_sketch.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

struct cr_sketch {
    int64_t nkeys;
    uint64_t seed;
    int width, depth, topk; /* as created: the shape merges compare */
    int exact, rows;        /* the layout: rows x cols counters */
    int64_t cols;
    int shift;              /* 64 - log2(width) */
    uint64_t mul[CR_SKETCH_MAX_DEPTH];
    _Atomic uint32_t *cnt;
    _Atomic uint64_t total;
    /* Candidates: a min-heap of (key, estimate) by estimate, written by the
     * owner only; readers read ncand and hkey. index: open addressing over
     * the heap (slot -> heap position + 1, 0 empty); hslot: position -> slot. */
    _Atomic int ncand;
    _Atomic int64_t *hkey;
    uint32_t *hcnt;
    int32_t *hslot;
    int32_t *index;
    uint32_t imask;
    int ishift;
};

#define CAND_STRIDE 8u
#define LD(p) atomic_load_explicit((p), memory_order_relaxed)
#define ST(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)

static int log2i(uint64_t x) {
    int l = 0;
    while ((1ull << l) < x) l++;
    return l;
}

static int alloc_cands(cr_sketch *sk) {
    if (sk->topk == 0) return 0;
    int ilog = log2i(2 * (uint64_t)sk->topk);
    sk->imask = (1u << ilog) - 1;
    sk->ishift = 64 - ilog;
    sk->hkey = cr_xcalloc((size_t)sk->topk, sizeof *sk->hkey);
    sk->hcnt = cr_xcalloc((size_t)sk->topk, sizeof *sk->hcnt);
    sk->hslot = cr_xcalloc((size_t)sk->topk, sizeof *sk->hslot);
    sk->index = cr_xcalloc((size_t)sk->imask + 1, sizeof *sk->index);
    return 0;
}

cr_sketch *cr_sketch_new(int64_t nkeys, int width, int depth, int topk, uint64_t seed, cr_err *e) {
    if (nkeys < 1) return cr_errf(e, "sketch: a table of %lld keys", (long long)nkeys), NULL;
    if (width < 64 || width > CR_SKETCH_MAX_WIDTH || (width & (width - 1)))
        return cr_errf(e, "sketch: width %d is not a power of two in [64, %d]", width, CR_SKETCH_MAX_WIDTH), NULL;
    if (depth < 1 || depth > CR_SKETCH_MAX_DEPTH)
        return cr_errf(e, "sketch: depth %d not in [1, %d]", depth, CR_SKETCH_MAX_DEPTH), NULL;
    if (topk < 0 || topk > CR_SKETCH_MAX_TOPK)
        return cr_errf(e, "sketch: topk %d not in [0, %d]", topk, CR_SKETCH_MAX_TOPK), NULL;
    cr_sketch *sk = cr_xcalloc(1, sizeof *sk);
    sk->nkeys = nkeys;
    sk->seed = seed;
    sk->width = width;
    sk->depth = depth;
    sk->exact = nkeys <= (int64_t)width * depth;
    /* Exact mode needs no candidates: cr_sketch_heavy scans every key. */
    sk->topk = sk->exact ? 0 : topk;
    sk->rows = sk->exact ? 1 : depth;
    sk->cols = sk->exact ? nkeys : width;
    sk->shift = 64 - log2i((uint64_t)width);
    for (int r = 0; r < depth; r++) sk->mul[r] = cr_mix64(seed + 0x9E3779B97F4A7C15ull * (uint64_t)(r + 1)) | 1;
    sk->cnt = cr_xcalloc((size_t)(sk->rows * sk->cols), sizeof *sk->cnt);
    alloc_cands(sk);
    return sk;
}

void cr_sketch_destroy(cr_sketch **skp) {
    if (!skp || !*skp) return;
    cr_sketch *sk = *skp;
    free(sk->cnt);
    free(sk->hkey);
    free(sk->hcnt);
    free(sk->hslot);
    free(sk->index);
    free(sk);
    *skp = NULL;
}

static inline uint64_t col_of(const cr_sketch *sk, int r, int64_t key) {
    return ((uint64_t)key * sk->mul[r]) >> sk->shift;
}

/* ---- candidates (owner only, or a sketch without a writer) ---- */

static inline uint32_t islot(const cr_sketch *sk, int64_t key) {
    return (uint32_t)(cr_mix64((uint64_t)key) >> sk->ishift);
}

static int find(const cr_sketch *sk, int64_t key) {
    for (uint32_t s = islot(sk, key);; s = (s + 1) & sk->imask) {
        int32_t p = sk->index[s];
        if (p == 0) return -1;
        if (LD(&sk->hkey[p - 1]) == key) return p - 1;
    }
}

static int32_t index_put(cr_sketch *sk, int64_t key, int pos) {
    uint32_t s = islot(sk, key);
    while (sk->index[s]) s = (s + 1) & sk->imask;
    sk->index[s] = pos + 1;
    return (int32_t)s;
}

/* Linear-probing delete by backward shift (no tombstones, so probes stay
 * short however many keys come and go). */
static void index_del(cr_sketch *sk, uint32_t i) {
    sk->index[i] = 0;
    for (uint32_t j = (i + 1) & sk->imask; sk->index[j]; j = (j + 1) & sk->imask) {
        int p = sk->index[j] - 1;
        uint32_t home = islot(sk, LD(&sk->hkey[p]));
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays) continue;
        sk->index[i] = sk->index[j];
        sk->hslot[p] = (int32_t)i;
        sk->index[j] = 0;
        i = j;
    }
}

static void hswap(cr_sketch *sk, int a, int b) {
    int64_t ka = LD(&sk->hkey[a]);
    ST(&sk->hkey[a], LD(&sk->hkey[b]));
    ST(&sk->hkey[b], ka);
    uint32_t c = sk->hcnt[a];
    sk->hcnt[a] = sk->hcnt[b];
    sk->hcnt[b] = c;
    int32_t s = sk->hslot[a];
    sk->hslot[a] = sk->hslot[b];
    sk->hslot[b] = s;
    sk->index[sk->hslot[a]] = a + 1;
    sk->index[sk->hslot[b]] = b + 1;
}

static void sift_down(cr_sketch *sk, int i, int n) {
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < n && sk->hcnt[l] < sk->hcnt[m]) m = l;
        if (l + 1 < n && sk->hcnt[l + 1] < sk->hcnt[m]) m = l + 1;
        if (m == i) return;
        hswap(sk, i, m);
        i = m;
    }
}

static void sift_up(cr_sketch *sk, int i) {
    while (i > 0 && sk->hcnt[(i - 1) / 2] > sk->hcnt[i]) {
        hswap(sk, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

/* key's estimate est passed the heap's least (or the heap has room). */
static void candidate(cr_sketch *sk, int64_t key, uint32_t est) {
    int n = LD(&sk->ncand);
    int p = find(sk, key);
    if (p >= 0) {
        sk->hcnt[p] = est;
        sift_down(sk, p, n);
        return;
    }
    if (n < sk->topk) {
        ST(&sk->hkey[n], key);
        sk->hcnt[n] = est;
        sk->hslot[n] = index_put(sk, key, n);
        ST(&sk->ncand, n + 1);
        sift_up(sk, n);
        return;
    }
    index_del(sk, (uint32_t)sk->hslot[0]);
    ST(&sk->hkey[0], key);
    sk->hcnt[0] = est;
    sk->hslot[0] = index_put(sk, key, 0);
    sift_down(sk, 0, n);
}

void cr_sketch_add_keys(cr_sketch *sk, const int64_t *keys, int64_t n) {
    uint64_t counted = 0;
    if (sk->exact) {
        for (int64_t i = 0; i < n; i++) {
            int64_t k = keys[i];
            if (k < 0 || k >= sk->nkeys) continue;
            ST(&sk->cnt[k], LD(&sk->cnt[k]) + 1);
            counted++;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            int64_t k = keys[i];
            if (k < 0 || k >= sk->nkeys) continue;
            uint32_t est = UINT32_MAX;
            for (int r = 0; r < sk->rows; r++) {
                _Atomic uint32_t *c = &sk->cnt[(int64_t)r * sk->cols + (int64_t)col_of(sk, r, k)];
                uint32_t v = LD(c) + 1;
                ST(c, v);
                if (v < est) est = v;
            }
            counted++;
            /* The heap hears of a key every CAND_STRIDE-th count only: the
             * hottest keys pass its least at nearly every access, and the
             * lookup and sift would then cost more than the counting. */
            if (sk->topk && (est & (CAND_STRIDE - 1)) == 0 && (LD(&sk->ncand) < sk->topk || est > sk->hcnt[0]))
                candidate(sk, k, est);
        }
    }
    ST(&sk->total, LD(&sk->total) + counted);
}

uint64_t cr_sketch_estimate(const cr_sketch *sk, int64_t key) {
    if (key < 0 || key >= sk->nkeys) return 0;
    if (sk->exact) return LD(&sk->cnt[key]);
    uint32_t est = UINT32_MAX;
    for (int r = 0; r < sk->rows; r++) {
        uint32_t v = LD(&sk->cnt[(int64_t)r * sk->cols + (int64_t)col_of(sk, r, key)]);
        if (v < est) est = v;
    }
    return est;
}

uint64_t cr_sketch_total(const cr_sketch *sk) { return LD(&sk->total); }

int64_t cr_sketch_distinct(const cr_sketch *sk) {
    int64_t most = 0;
    for (int r = 0; r < sk->rows; r++) {
        int64_t used = 0;
        for (int64_t i = 0; i < sk->cols; i++) used += LD(&sk->cnt[(int64_t)r * sk->cols + i]) != 0;
        if (used > most) most = used;
    }
    return most;
}

int cr_sketch_exact(const cr_sketch *sk) { return sk->exact; }

size_t cr_sketch_bytes(const cr_sketch *sk) {
    size_t b = sizeof *sk + (size_t)(sk->rows * sk->cols) * sizeof *sk->cnt;
    if (sk->topk)
        b += (size_t)sk->topk * (sizeof *sk->hkey + sizeof *sk->hcnt + sizeof *sk->hslot) +
             ((size_t)sk->imask + 1) * sizeof *sk->index;
    return b;
}

double cr_sketch_bound(const cr_sketch *sk) {
    return sk->exact ? 0.0 : 2.0 * 2.718281828459045 / sk->width * (double)cr_sketch_total(sk);
}

/* ---- merge, window, copy ---- */

static int same_shape(const cr_sketch *a, const cr_sketch *b, cr_err *e) {
    if (a->nkeys == b->nkeys && a->width == b->width && a->depth == b->depth && a->topk == b->topk &&
        a->seed == b->seed)
        return 0;
    return cr_errf(e, "sketch: shapes differ (keys %lld/%lld, width %d/%d, depth %d/%d, topk %d/%d, or seed)",
                   (long long)a->nkeys, (long long)b->nkeys, a->width, b->width, a->depth, b->depth, a->topk,
                   b->topk);
}

static int by_key(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int by_count(const void *a, const void *b) {
    const cr_sketch_hit *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return (x->key > y->key) - (x->key < y->key);
}

/* Append sk's candidate keys to keys[*n..]; room for sk->topk more. */
static void cand_keys(const cr_sketch *sk, int64_t *keys, int *n) {
    int m = LD(&sk->ncand);
    if (m > sk->topk) m = sk->topk;
    for (int i = 0; i < m; i++) {
        int64_t k = LD(&sk->hkey[i]);
        if (k >= 0 && k < sk->nkeys) keys[(*n)++] = k;
    }
}

/* Candidates -> the distinct ones, estimated, largest first, into hits;
 * returns how many. */
static int rank(const cr_sketch *sk, int64_t *keys, int n, cr_sketch_hit *hits) {
    qsort(keys, (size_t)n, sizeof *keys, by_key);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && keys[i] == keys[i - 1]) continue;
        hits[m].key = keys[i];
        hits[m++].count = cr_sketch_estimate(sk, keys[i]);
    }
    qsort(hits, (size_t)m, sizeof *hits, by_count);
    return m;
}

/* Replace sk's candidates by the topk of largest estimate among keys[0..n)
 * (sk has no writer). */
static void rebuild(cr_sketch *sk, int64_t *keys, int n) {
    cr_sketch_hit *hits = cr_xmalloc((size_t)(n ? n : 1) * sizeof *hits);
    int m = rank(sk, keys, n, hits);
    if (m > sk->topk) m = sk->topk;
    memset(sk->index, 0, ((size_t)sk->imask + 1) * sizeof *sk->index);
    ST(&sk->ncand, 0);
    for (int i = 0; i < m; i++) {
        ST(&sk->hkey[i], hits[i].key);
        sk->hcnt[i] = (uint32_t)hits[i].count;
        sk->hslot[i] = index_put(sk, hits[i].key, i);
        ST(&sk->ncand, i + 1);
        sift_up(sk, i);
    }
    free(hits);
}

/* dst counters += sign * src's; candidates of both (or dst's only). */
static void combine(cr_sketch *dst, const cr_sketch *src, int sign) {
    int64_t n = dst->rows * dst->cols;
    for (int64_t i = 0; i < n; i++) {
        uint32_t v = LD(&src->cnt[i]);
        ST(&dst->cnt[i], sign > 0 ? LD(&dst->cnt[i]) + v : LD(&dst->cnt[i]) - v);
    }
    uint64_t t = LD(&src->total);
    ST(&dst->total, sign > 0 ? LD(&dst->total) + t : LD(&dst->total) - t);
    if (!dst->topk) return;
    int64_t *keys = cr_xmalloc(2 * (size_t)dst->topk * sizeof *keys);
    int m = 0;
    cand_keys(dst, keys, &m);
    if (sign > 0) cand_keys(src, keys, &m);
    rebuild(dst, keys, m);
    free(keys);
}

int cr_sketch_merge(cr_sketch *dst, const cr_sketch *src, cr_err *e) {
    if (same_shape(dst, src, e) < 0) return -1;
    combine(dst, src, 1);
    return 0;
}

int cr_sketch_sub(cr_sketch *dst, const cr_sketch *older, cr_err *e) {
    if (same_shape(dst, older, e) < 0) return -1;
    combine(dst, older, -1);
    return 0;
}

cr_sketch *cr_sketch_clone(const cr_sketch *src) {
    cr_sketch *c = cr_sketch_new(src->nkeys, src->width, src->depth, src->topk, src->seed, NULL);
    if (c) combine(c, src, 1);
    return c;
}

int cr_sketch_heavy(const cr_sketch *sk, uint64_t threshold, cr_sketch_hit *out, int max) {
    if (max <= 0) return 0;
    int64_t cap = sk->exact ? sk->nkeys : sk->topk;
    cr_sketch_hit *hits = cr_xmalloc((size_t)(cap ? cap : 1) * sizeof *hits);
    int m = 0;
    if (sk->exact) {
        for (int64_t k = 0; k < sk->nkeys; k++) {
            uint32_t c = LD(&sk->cnt[k]);
            if (c > threshold) hits[m++] = (cr_sketch_hit){k, c};
        }
        qsort(hits, (size_t)m, sizeof *hits, by_count);
    } else if (sk->topk) {
        int64_t *keys = cr_xmalloc((size_t)sk->topk * sizeof *keys);
        int n = 0;
        cand_keys(sk, keys, &n);
        m = rank(sk, keys, n, hits);
        free(keys);
    }
    int r = 0;
    for (int i = 0; i < m && r < max; i++)
        if (hits[i].count > threshold) out[r++] = hits[i];
    free(hits);
    return r;
}

/* ---- wire form ---- */

#define MAGIC 0x4B53524Bu /* "KRSK" read little-endian: a byte-swapped header fails */
#define VERSION 1u

typedef struct whdr {
    uint32_t magic, version, width, depth, topk, ncand;
    int64_t nkeys;
    uint64_t seed, total;
} whdr;

size_t cr_sketch_wire_size(const cr_sketch *sk) {
    return sizeof(whdr) + (size_t)(sk->rows * sk->cols) * sizeof(uint32_t) + (size_t)sk->topk * sizeof(int64_t);
}

size_t cr_sketch_write(const cr_sketch *sk, void *buf, size_t cap) {
    size_t need = cr_sketch_wire_size(sk);
    if (cap < need) return 0;
    int64_t *keys = cr_xmalloc((size_t)(sk->topk ? sk->topk : 1) * sizeof *keys);
    int n = 0;
    cand_keys(sk, keys, &n);
    whdr h = {MAGIC, VERSION, (uint32_t)sk->width, (uint32_t)sk->depth, (uint32_t)sk->topk, (uint32_t)n,
              sk->nkeys, sk->seed, LD(&sk->total)};
    char *p = buf;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    for (int64_t i = 0; i < sk->rows * sk->cols; i++, p += sizeof(uint32_t)) {
        uint32_t v = LD(&sk->cnt[i]);
        memcpy(p, &v, sizeof v);
    }
    memcpy(p, keys, (size_t)n * sizeof *keys);
    free(keys);
    return sizeof h + (size_t)(sk->rows * sk->cols) * sizeof(uint32_t) + (size_t)n * sizeof(int64_t);
}

cr_sketch *cr_sketch_read(const void *buf, size_t n, cr_err *e) {
    whdr h;
    if (n < sizeof h) return cr_errf(e, "sketch: %zu bytes, shorter than a header", n), NULL;
    memcpy(&h, buf, sizeof h);
    if (h.magic != MAGIC || h.version != VERSION)
        return cr_errf(e, "sketch: not a sketch (magic %08x, version %u)", h.magic, h.version), NULL;
    if (h.width > CR_SKETCH_MAX_WIDTH || h.depth > CR_SKETCH_MAX_DEPTH || h.topk > CR_SKETCH_MAX_TOPK)
        return cr_errf(e, "sketch: bad shape (width %u, depth %u, topk %u)", h.width, h.depth, h.topk), NULL;
    cr_sketch *sk = cr_sketch_new(h.nkeys, (int)h.width, (int)h.depth, (int)h.topk, h.seed, e);
    if (!sk) return NULL;
    size_t body = (size_t)(sk->rows * sk->cols) * sizeof(uint32_t);
    if (h.ncand > (uint32_t)sk->topk || n != sizeof h + body + h.ncand * sizeof(int64_t)) {
        cr_errf(e, "sketch: %zu bytes for %u candidates of at most %d (expected %zu)", n, h.ncand, sk->topk,
                sizeof h + body + h.ncand * sizeof(int64_t));
        cr_sketch_destroy(&sk);
        return NULL;
    }
    const char *p = (const char *)buf + sizeof h;
    for (int64_t i = 0; i < sk->rows * sk->cols; i++, p += sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, p, sizeof v);
        ST(&sk->cnt[i], v);
    }
    ST(&sk->total, h.total);
    if (sk->topk) {
        int64_t *keys = cr_xmalloc((size_t)(h.ncand ? h.ncand : 1) * sizeof *keys);
        memcpy(keys, p, h.ncand * sizeof *keys);
        for (uint32_t i = 0; i < h.ncand; i++) {
            if (keys[i] < 0 || keys[i] >= sk->nkeys) {
                cr_errf(e, "sketch: candidate key %lld out of range [0, %lld)", (long long)keys[i],
                        (long long)sk->nkeys);
                free(keys);
                cr_sketch_destroy(&sk);
                return NULL;
            }
        }
        rebuild(sk, keys, (int)h.ncand);
        free(keys);
    }
    return sk;
}
