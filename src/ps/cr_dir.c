#include "ps/cr_dir.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

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

/* ---------- the maps of relocated rows (ps/cr_fmap.h) ---------- */

static inline cr_fmap *stripe(cr_shard *s, int64_t k) { return &s->dir->fs[(uint64_t)k % CR_SHARD_STRIPES]; }

float *cr_dir_row(cr_shard *s, int64_t k, float **state) {
    if (cr_dir_is_home(s, k)) {
        if (!(s->dir->own[k - s->lo] & CR_DIR_HERE)) return NULL;
        size_t r = (size_t)(k - s->lo);
        *state = s->state + r * (size_t)s->sdim;
        return s->w + r * (size_t)s->def.dim;
    }
    float *w = cr_fmap_get(stripe(s, k), k);
    if (w) *state = w + s->def.dim;
    return w;
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
    cr_fmap_del(stripe(s, k), k);
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
        cr_fmap *f = stripe(s, k);
        if (cr_fmap_get(f, k)) return; /* already here: the caller's bug, kept harmless */
        w = cr_fmap_add(f, k, s->def.dim + s->sdim);
        sp = w + s->def.dim;
        atomic_fetch_add(&s->dir->held, 1);
    }
    memcpy(w, vals, (size_t)s->def.dim * sizeof(float));
    if (s->sdim) memcpy(sp, st, (size_t)s->sdim * sizeof(float));
}

void cr_dir_set_owner(cr_shard *s, int64_t k, unsigned node) {
    size_t r = (size_t)(k - s->lo);
    s->dir->own[r] = (uint16_t)((s->dir->own[r] & CR_DIR_HERE) | (node & CR_DIR_NODE));
}
