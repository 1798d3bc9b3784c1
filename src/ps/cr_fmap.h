#ifndef CR_FMAP_H
#define CR_FMAP_H
/* A hash map from int64 keys to rows: one stripe's map of a shard, used by
 * the relocation directory (rows of keys relocated here, ps/cr_dir.h) and by
 * sparse tables (every row a node stores, ps/cr_table.h). Not thread-safe:
 * the owner takes the stripe's lock around every call.
 *
 * Open addressing with linear probing over cells holding a key and its
 * slot (12 bytes), the capacity a power of two, doubled when more than 3/4
 * of the cells are used (so a grown map has 3/8 to 3/4 of them holding
 * keys: 16 to 32 bytes of cells a key); deleted keys
 * leave tombstones, cleaned out when the map is rebuilt. Every key is
 * allowed: the two that mark empty (-1) and deleted (-2) cells are kept
 * beside the cells (xslot). A row is `stride` floats (the values, then the
 * optimizer state) in slabs of 8, 16, 32, ... rows up to about
 * CR_FMAP_SLAB_BYTES (a power of two of rows, at least 8), then of that
 * size: rows never move, growth allocates one slab (so at most about half
 * the rows, or one big slab, are allocated but unused), and a deleted key's
 * slot is reused. Out of memory aborts (cr_x* helpers): rows are added by pushes. */

#include <stddef.h>
#include <stdint.h>

#define CR_FMAP_SLAB_BYTES (64u << 10)

/* A cell: a key (-1 empty, -2 deleted) and its row's slot, side by side
 * (one cache line read per probe). */
typedef struct __attribute__((packed)) cr_fcell {
    int64_t key;
    int32_t slot;
} cr_fcell;

typedef struct cr_fmap {
    cr_fcell *cell;    /* cap cells */
    uint32_t cap, used, live; /* used: cells not empty (keys and tombstones); live: keys (with xslot's) */
    int32_t xslot[2];  /* slot + 1 of key -1 and of key -2 (0: absent) */
    float **slab;      /* nslab slabs of per_slab rows */
    int32_t nslab, per_slab, stride; /* slabs of 8, 16, ... rows up to per_slab, then per_slab */
    int32_t capslot;   /* rows the slabs hold */
    int32_t nslot;     /* slots handed out */
    int32_t *freeslot, nfree, capfree;
} cr_fmap;

/* Row of key k, or NULL. */
float *cr_fmap_get(const cr_fmap *f, int64_t k);
/* New row for key k, which must be absent (contents undefined). stride: the
 * row's floats (the first call fixes it; later calls pass the same). */
float *cr_fmap_add(cr_fmap *f, int64_t k, int32_t stride);
/* Drop key k (absent: nothing). */
void cr_fmap_del(cr_fmap *f, int64_t k);
/* Visit the keys: start with *pos = 0; returns 1 with the next key in *k
 * and its row in *row, or 0 at the end. Positions stay valid while no key
 * is added or deleted (then a walk may see keys twice or miss some). */
int cr_fmap_next(const cr_fmap *f, uint64_t *pos, int64_t *k, float **row);
/* Bytes the map holds (cells, slabs and the free list), for stats. */
size_t cr_fmap_bytes(const cr_fmap *f);
void cr_fmap_free(cr_fmap *f);

#endif
