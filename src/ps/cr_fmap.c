#include "ps/cr_fmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

/* Cell of a key. The shard's stripe is key % 64 and a sparse table's node a
 * splitmix64 of the key: the cell hash is independent of both (another
 * seed), so a stripe's keys spread over all of its cells. */
static inline uint32_t cell_hash(int64_t k) {
    uint64_t x = (uint64_t)k ^ 0x5851f42d4c957f2dULL;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return (uint32_t)(x ^ (x >> 33));
}

static inline int special(int64_t k) { return k == -1 || k == -2; }

static int64_t find(const cr_fmap *f, int64_t k) {
    if (!f->cap) return -1;
    for (uint32_t i = cell_hash(k) & (f->cap - 1), n = 0; n < f->cap; i = (i + 1) & (f->cap - 1), n++) {
        if (f->cell[i].key == k) return i;
        if (f->cell[i].key == -1) return -1;
    }
    return -1;
}

/* Slabs grow: 8, 16, 32, ... rows up to per_slab (a power of two), then
 * per_slab each; a small map stays small. Slab and row of a slot. */
static inline int32_t rows_in(const cr_fmap *f, int32_t i) {
    int32_t r = (int32_t)8 << (i < 24 ? i : 24);
    return r < f->per_slab ? r : f->per_slab;
}

static inline float *row_at(const cr_fmap *f, int32_t slot) {
    int32_t grow = f->per_slab - 8; /* slots in the growing slabs 8 .. per_slab / 2 */
    int32_t i, off;
    if (slot < grow) {
        i = 31 - __builtin_clz((uint32_t)(slot / 8 + 1));
        off = slot - 8 * ((1 << i) - 1);
    } else {
        int32_t g = 31 - __builtin_clz((uint32_t)(f->per_slab / 8));
        i = g + (slot - grow) / f->per_slab;
        off = (slot - grow) % f->per_slab;
    }
    return f->slab[i] + (size_t)off * (size_t)f->stride;
}

float *cr_fmap_get(const cr_fmap *f, int64_t k) {
    if (special(k)) {
        int32_t s = f->xslot[-k - 1];
        return s ? row_at(f, s - 1) : NULL;
    }
    int64_t i = find(f, k);
    return i < 0 ? NULL : row_at(f, f->cell[i].slot);
}

static void put(cr_fmap *f, int64_t k, int32_t slot) {
    uint32_t i = cell_hash(k) & (f->cap - 1);
    while (f->cell[i].key >= 0 || f->cell[i].key < -2) i = (i + 1) & (f->cap - 1);
    if (f->cell[i].key == -1) f->used++;
    f->cell[i].key = k;
    f->cell[i].slot = slot;
}

/* Room for one more key: rebuild (doubling, or cleaning out tombstones) once
 * more than 3/4 of the cells are used; after it at most half hold keys (a
 * map that grew holds 3/8 to 3/4 of its cells). */
static void reserve(cr_fmap *f) {
    if (f->cap && (uint64_t)(f->used + 1) * 4 <= (uint64_t)f->cap * 3) return;
    uint64_t cap = f->cap ? f->cap : 16;
    while ((uint64_t)(f->live + 1) * 2 > cap) cap *= 2;
    cr_fcell *old = f->cell;
    uint32_t ocap = f->cap;
    f->cell = cr_xmalloc((size_t)cap * sizeof *f->cell);
    memset(f->cell, 0xff, (size_t)cap * sizeof *f->cell); /* keys -1 */
    f->cap = (uint32_t)cap;
    f->used = 0;
    for (uint32_t i = 0; i < ocap; i++)
        if (old[i].key >= 0 || old[i].key < -2) put(f, old[i].key, old[i].slot);
    free(old);
}

static int32_t new_slot(cr_fmap *f) {
    if (f->nfree) return f->freeslot[--f->nfree];
    if (f->nslot == f->capslot) {
        int32_t r = rows_in(f, f->nslab);
        f->slab = cr_xrealloc(f->slab, (size_t)(f->nslab + 1) * sizeof *f->slab);
        f->slab[f->nslab++] = cr_xmalloc((size_t)r * (size_t)f->stride * sizeof(float) + 1);
        f->capslot += r;
    }
    return f->nslot++;
}

float *cr_fmap_add(cr_fmap *f, int64_t k, int32_t stride) {
    if (!f->per_slab) {
        f->stride = stride;
        size_t bytes = (size_t)(stride > 0 ? stride : 1) * sizeof(float);
        size_t per = 8;
        while (per * 2 * bytes <= CR_FMAP_SLAB_BYTES) per *= 2;
        f->per_slab = (int32_t)per;
    }
    int32_t slot;
    if (special(k)) {
        slot = new_slot(f);
        f->xslot[-k - 1] = slot + 1;
    } else {
        reserve(f);
        slot = new_slot(f);
        put(f, k, slot);
    }
    f->live++;
    return row_at(f, slot);
}

static void free_slot(cr_fmap *f, int32_t slot) {
    if (f->nfree == f->capfree) {
        f->capfree = f->capfree ? 2 * f->capfree : 16;
        f->freeslot = cr_xrealloc(f->freeslot, (size_t)f->capfree * sizeof *f->freeslot);
    }
    f->freeslot[f->nfree++] = slot;
    f->live--;
}

void cr_fmap_del(cr_fmap *f, int64_t k) {
    if (special(k)) {
        int32_t s = f->xslot[-k - 1];
        if (s) free_slot(f, s - 1);
        f->xslot[-k - 1] = 0;
        return;
    }
    int64_t i = find(f, k);
    if (i < 0) return;
    free_slot(f, f->cell[i].slot);
    f->cell[i].key = -2;
}

int cr_fmap_next(const cr_fmap *f, uint64_t *pos, int64_t *k, float **row) {
    for (; *pos < 2; (*pos)++) /* the two keys beside the cells first */
        if (f->xslot[*pos]) {
            *k = -(int64_t)*pos - 1;
            *row = row_at(f, f->xslot[*pos] - 1);
            (*pos)++;
            return 1;
        }
    for (; *pos < 2 + (uint64_t)f->cap; (*pos)++) {
        int64_t c = f->cell[*pos - 2].key;
        if (c >= 0 || c < -2) {
            *k = c;
            *row = row_at(f, f->cell[*pos - 2].slot);
            (*pos)++;
            return 1;
        }
    }
    return 0;
}

size_t cr_fmap_bytes(const cr_fmap *f) {
    return (size_t)f->cap * sizeof *f->cell + (size_t)f->capslot * (size_t)f->stride * sizeof(float) +
           (size_t)f->nslab * sizeof *f->slab + (size_t)f->capfree * sizeof *f->freeslot;
}

void cr_fmap_free(cr_fmap *f) {
    free(f->cell);
    for (int32_t i = 0; i < f->nslab; i++) free(f->slab[i]);
    free(f->slab);
    free(f->freeslot);
    memset(f, 0, sizeof *f);
}
