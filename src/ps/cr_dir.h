#ifndef CR_DIR_H
#define CR_DIR_H
/* The per-key technique directory and the relocation state of one shard
 * (Lapse, as NuPS uses it; see docs/management.md).
 *
 * Every key has a home node (the range owner of cr_table.h). The home knows
 * where each of its keys is: `own[k - lo] & CR_DIR_NODE` is the node the
 * home last gave it to (where it sends requests on), and CR_DIR_HERE says
 * whether the row is physically at the home now. The two differ while a
 * row travels: given to the home but not arrived (NODE = home, no HERE). A node holds
 * the rows of keys relocated to it (keys of other homes) in per-stripe hash
 * maps with a slab of rows and optimizer state; a stripe's map and slab are
 * read and written only under that stripe's lock (the shard's striped
 * locks), so the workers of the node reach relocated rows through shared
 * memory exactly as home rows, and the one latch taken for an access also
 * answers "is it here?".
 *
 * The technique of a key: replicated if its bit is set (served by the
 * replica module), else the table's mode: classic (never moves) or
 * relocate. In classic mode nothing here is consulted on the data path.
 *
 * Writers: the node's server thread moves rows in and out (install / take)
 * and changes own[]; the node's main thread changes the mode and the
 * replicated set, only between commands (no worker is mid-call). */

#include <stdatomic.h>
#include <stdint.h>

#include "ps/cr_fmap.h"
#include "ps/cr_table.h"

/* CR_DIR_HERE, CR_DIR_NODE, CR_TECH_*, struct cr_dir: ps/cr_table.h (the
 * shard's layout, of which the directory is part). */


static inline int cr_dir_relocating(const cr_shard *s) {
    return atomic_load_explicit(&s->dir->mode, memory_order_relaxed) == CR_TECH_RELOCATE;
}
static inline int cr_dir_is_home(const cr_shard *s, int64_t k) { return k >= s->lo && k < s->hi; }

/* Technique of key k (any key of the table). */
int cr_dir_tech(const cr_shard *s, int64_t k);

/* ---- the caller holds the stripe lock of k ---- */

/* Rows of key k if it is here (home and present, or relocated here), else
 * NULL. *state gets the optimizer state row. */
float *cr_dir_row(cr_shard *s, int64_t k, float **state);
/* Take the row of k out (it must be here): values and state copied to vals
 * and st; a home key is marked not here (its directory entry is the
 * caller's: cr_dir_set_owner), a relocated one is dropped. */
void cr_dir_take(cr_shard *s, int64_t k, float *vals, float *st);
/* Put the row of k here (it must not be): a home key becomes present, a
 * key of another home is stored in its stripe's map. */
void cr_dir_install(cr_shard *s, int64_t k, const float *vals, const float *st);
/* Home key k: the node it was last given to (requests go there). */
static inline unsigned cr_dir_owner(const cr_shard *s, int64_t k) { return s->dir->own[k - s->lo] & CR_DIR_NODE; }
/* Home key k is given to `node` (the row keeps its HERE bit). */
void cr_dir_set_owner(cr_shard *s, int64_t k, unsigned node);

/* ---- main thread, between commands ---- */

/* Set the replicated keys (n keys, checked in range by the caller; n = 0:
 * none). */
void cr_dir_set_replicated(cr_shard *s, const int64_t *keys, int64_t n);

#endif
