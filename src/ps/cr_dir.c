#include "ps/cr_dir.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

int cr_dir_init(cr_shard *s, cr_err *e) {
    s->dir = cr_xcalloc(1, sizeof *s->dir);
    size_t rows = (size_t)(s->hi - s->lo);
    s->dir->own = malloc(rows * sizeof *s->dir->own + 1); /* checked: the user's table size */
    if (!s->dir->own) {
        free(s->dir);
        s->dir = NULL;
        return cr_errf(e, "table '%s': out of memory for the directory of %zu keys", s->def.name, rows);
    }
    for (size_t i = 0; i < rows; i++) s->dir->own[i] = (uint16_t)((unsigned)s->node | CR_DIR_HERE);
    atomic_init(&s->dir->mode, CR_TECH_CLASSIC);
    return 0;
}

void cr_dir_free(cr_shard *s) {
    cr_dir *d = s->dir;
    if (!d) return;
    for (int i = 0; i < CR_SHARD_STRIPES; i++) {
        cr_fstripe *f = &d->fs[i];
        free(f->key);
        free(f->slot);
        free(f->w);
        free(f->st);
        free(f->freeslot);
    }
    free(d->own);
    free(d->repl);
    free(d);
    s->dir = NULL;
}

int cr_dir_tech(const cr_shard *s, int64_t k) {
    const cr_dir *d = s->dir;
    if (d->repl && (d->repl[k >> 3] >> (k & 7) & 1)) return CR_TECH_REPLICATE;
    return atomic_load_explicit(&d->mode, memory_order_relaxed);
}

void cr_dir_set_replicated(cr_shard *s, const int64_t *keys, int64_t n) {
    cr_dir *d = s->dir;
    free(d->repl);
    d->repl = NULL;
    d->nrepl = 0;
    if (n <= 0) return;
    d->repl = cr_xcalloc((size_t)(s->def.keys + 7) / 8, 1);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = keys[i];
        if (!(d->repl[k >> 3] >> (k & 7) & 1)) d->nrepl++;
        d->repl[k >> 3] |= (uint8_t)(1u << (k & 7));
    }
}

/* ---------- the maps of relocated rows ---------- */

static inline uint32_t hash_key(int64_t k) {
    uint64_t x = (uint64_t)k / CR_SHARD_STRIPES; /* the stripe already used k % STRIPES */
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32);
}

/* Index of k in f's map, or -1. */
static int64_t find(const cr_fstripe *f, int64_t k) {
    if (!f->cap) return -1;
    for (uint32_t i = hash_key(k) & (f->cap - 1), n = 0; n < f->cap; i = (i + 1) & (f->cap - 1), n++) {
        if (f->key[i] == k) return i;
        if (f->key[i] == -1) return -1;
    }
    return -1;
}

static void put(cr_fstripe *f, int64_t k, int32_t slot) {
    uint32_t i = hash_key(k) & (f->cap - 1);
    while (f->key[i] >= 0) i = (i + 1) & (f->cap - 1);
    if (f->key[i] == -1) f->used++;
    f->key[i] = k;
    f->slot[i] = slot;
    f->live++;
}

/* Room for one more key: grow (or clean out deleted entries) at half full. */
static void reserve(cr_fstripe *f) {
    if (f->cap && (f->used + 1) * 2 <= f->cap) return;
    uint32_t cap = f->cap ? f->cap : 16;
    while ((f->live + 1) * 4 > cap) cap *= 2; /* at most a quarter live after a rebuild */
    int64_t *ok = f->key;
    int32_t *os = f->slot;
    uint32_t ocap = f->cap;
    f->key = cr_xmalloc((size_t)cap * sizeof *f->key);
    f->slot = cr_xmalloc((size_t)cap * sizeof *f->slot);
    memset(f->key, 0xff, (size_t)cap * sizeof *f->key); /* -1 */
    f->cap = cap;
    f->used = f->live = 0;
    for (uint32_t i = 0; i < ocap; i++)
        if (ok[i] >= 0) put(f, ok[i], os[i]);
    free(ok);
    free(os);
}

static int32_t new_slot(cr_shard *s, cr_fstripe *f) {
    if (f->nfree) return f->freeslot[--f->nfree];
    if (f->nslot == f->capslot) {
        f->capslot = f->capslot ? 2 * f->capslot : 8;
        f->w = cr_xrealloc(f->w, (size_t)f->capslot * (size_t)s->def.dim * sizeof(float));
        f->st = cr_xrealloc(f->st, (size_t)f->capslot * ((size_t)s->sdim + 1) * sizeof(float));
        f->freeslot = cr_xrealloc(f->freeslot, (size_t)f->capslot * sizeof *f->freeslot);
    }
    return f->nslot++;
}

static inline cr_fstripe *stripe(cr_shard *s, int64_t k) { return &s->dir->fs[(uint64_t)k % CR_SHARD_STRIPES]; }

float *cr_dir_row(cr_shard *s, int64_t k, float **state) {
    if (cr_dir_is_home(s, k)) {
        if (!(s->dir->own[k - s->lo] & CR_DIR_HERE)) return NULL;
        size_t r = (size_t)(k - s->lo);
        *state = s->state + r * (size_t)s->sdim;
        return s->w + r * (size_t)s->def.dim;
    }
    cr_fstripe *f = stripe(s, k);
    int64_t i = find(f, k);
    if (i < 0) return NULL;
    size_t r = (size_t)f->slot[i];
    *state = f->st + r * (size_t)s->sdim;
    return f->w + r * (size_t)s->def.dim;
}

void cr_dir_take(cr_shard *s, int64_t k, float *vals, float *st) {
    float *sp, *w = cr_dir_row(s, k, &sp);
    if (!w) return;
    memcpy(vals, w, (size_t)s->def.dim * sizeof(float));
    if (s->sdim) memcpy(st, sp, (size_t)s->sdim * sizeof(float));
    if (cr_dir_is_home(s, k)) {
        s->dir->own[k - s->lo] &= (uint16_t)~CR_DIR_HERE;
        atomic_fetch_add(&s->dir->away, 1);
        return;
    }
    cr_fstripe *f = stripe(s, k);
    int64_t i = find(f, k);
    f->freeslot[f->nfree++] = f->slot[i];
    f->key[i] = -2;
    f->live--;
    atomic_fetch_sub(&s->dir->held, 1);
}

void cr_dir_install(cr_shard *s, int64_t k, const float *vals, const float *st) {
    float *w, *sp;
    if (cr_dir_is_home(s, k)) {
        size_t r = (size_t)(k - s->lo);
        w = s->w + r * (size_t)s->def.dim;
        sp = s->state + r * (size_t)s->sdim;
        if (!(s->dir->own[r] & CR_DIR_HERE)) atomic_fetch_sub(&s->dir->away, 1);
        s->dir->own[r] |= CR_DIR_HERE;
    } else {
        cr_fstripe *f = stripe(s, k);
        if (find(f, k) >= 0) return; /* already here: the caller's bug, kept harmless */
        reserve(f);
        int32_t slot = new_slot(s, f);
        put(f, k, slot);
        w = f->w + (size_t)slot * (size_t)s->def.dim;
        sp = f->st + (size_t)slot * (size_t)s->sdim;
        atomic_fetch_add(&s->dir->held, 1);
    }
    memcpy(w, vals, (size_t)s->def.dim * sizeof(float));
    if (s->sdim) memcpy(sp, st, (size_t)s->sdim * sizeof(float));
}

void cr_dir_set_owner(cr_shard *s, int64_t k, unsigned node) {
    size_t r = (size_t)(k - s->lo);
    s->dir->own[r] = (uint16_t)((s->dir->own[r] & CR_DIR_HERE) | (node & CR_DIR_NODE));
}
