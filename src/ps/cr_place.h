#ifndef CR_PLACE_H
#define CR_PLACE_H
/* Placement of a dense table's keys on nodes (docs/placement.md): the
 * runtime key map of one table (owner node and internal id of each key).
 * What a partitioner computes for a whole job, examples and keys, is an
 * assignment (data/cr_assign.h); a "file" placement is built from its
 * key lines.
 *
 * "range" (the default): node i owns the keys [i*block, (i+1)*block), block =
 * ceil(keys / nodes) (cr_table_block). "hash": key k goes to node
 * cr_place_hash(k) % nodes. "file": each key's node comes from the `v` lines
 * of a placement file (crescent partition --out).
 *
 * Inside the PS every key is an internal id: node n's keys are numbered
 * n*block + rank, rank 0, 1, ... in increasing user key order, with block
 * the largest node's key count. So a node's keys are the contiguous ids
 * [n*block, n*block + count[n]), the owner of an id is id / block (O(1)),
 * and a shard indexes its rows by id - lo, exactly as under range placement,
 * where the internal id IS the user key (no arrays: to_int == NULL). The
 * user key is translated at the boundary (worker tables, T:get/T:set,
 * checkpoints); initial values are computed from the user key. */

#include <stdint.h>

#include "base/cr_err.h"

enum { CR_PLACE_RANGE = 0, CR_PLACE_HASH = 1, CR_PLACE_FILE = 2 };

typedef struct cr_place {
    int kind, nodes;
    int64_t keys, block; /* ids [n*block, n*block + cnt[n]) are node n's */
    int64_t *cnt;        /* nodes entries: keys per node */
    int64_t *to_int;     /* keys entries: user key -> id (NULL: range, identity) */
    int64_t *to_user;    /* nodes*block entries: id -> user key, -1 in the gaps (NULL: range) */
} cr_place;

/* A 64-bit mix of key k (the splitmix64 finalizer): hash placement's node
 * is cr_place_mix(k) % nodes. */
static inline uint64_t cr_place_mix(uint64_t k) {
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ULL;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebULL;
    return k ^ (k >> 31);
}

/* Node of key k of a sparse table (any int64 bit pattern, read as uint64):
 * hash placement mix(k) % nodes, range placement floor(k * nodes / 2^64)
 * (contiguous ranges of the uint64 space). */
static inline int cr_place_sparse_owner(int kind, int nodes, int64_t k) {
    if (kind == CR_PLACE_RANGE) return (int)(((unsigned __int128)(uint64_t)k * (unsigned)nodes) >> 64);
    return (int)(cr_place_mix((uint64_t)k) % (unsigned)nodes);
}

/* Name of a placement kind: "range", "hash", "file"; "?" if unknown. */
const char *cr_place_kind_name(int kind);

/* Placement of `keys` keys on `nodes` nodes. owner (keys entries in
 * [0, nodes)) is required for CR_PLACE_FILE and ignored otherwise. NULL with
 * a message (naming `what`) when memory is short or an owner is out of range. */
cr_place *cr_place_new(int64_t keys, int nodes, int kind, const uint32_t *owner, const char *what, cr_err *e);
void cr_place_destroy(cr_place **p);

/* User key k (in [0, keys)) -> internal id, and back (id of a key). */
static inline int64_t cr_place_id(const cr_place *p, int64_t k) { return p->to_int ? p->to_int[k] : k; }
static inline int64_t cr_place_user(const cr_place *p, int64_t id) { return p->to_user ? p->to_user[id] : id; }
/* Node of user key k. */
static inline int cr_place_owner(const cr_place *p, int64_t k) { return (int)(cr_place_id(p, k) / p->block); }
/* First id of node n (its keys are [lo, lo + cnt[n])). */
static inline int64_t cr_place_lo(const cr_place *p, int n) { return (int64_t)n * p->block; }
/* 1 if id is some key's internal id. */
static inline int cr_place_valid(const cr_place *p, int64_t id) {
    if (id < 0) return 0;
    if (!p->to_user) return id < p->keys;
    return id < (int64_t)p->nodes * p->block && p->to_user[id] >= 0;
}

#endif
