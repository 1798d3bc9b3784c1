#ifndef CR_ALIAS_H
#define CR_ALIAS_H
/* Walker/Vose alias tables: O(1) draws from a fixed discrete distribution.
 *
 * A table covers the keys [lo, hi) of a key space [0, n) and draws key k
 * with probability w[k] / sum(w[lo .. hi)), or uniformly when there are no
 * weights. The whole space is the range [0, n); a node's share for local
 * sampling is a second table over its slice [lo, hi) of the same weights,
 * so a local draw costs what a global one costs.
 *
 * Complexity: building is O(hi - lo) time with 16 bytes per key kept (an
 * acceptance threshold and an alias) and 8 bytes per key of scratch; a
 * uniform table keeps nothing per key. A draw is two rng calls and one
 * table lookup, whatever the weights.
 *
 * A built table is read-only: any number of threads may draw from it at
 * once, each with its own cr_rng. Draws depend only on the weights and the
 * rng state, so a seeded rng gives the same keys on every run.
 *
 * Allocation is cr_x* (out of memory aborts, see cr_alloc.h); sizes are
 * checked for size_t overflow before allocating. */

#include <stdint.h>

#include "base/cr_err.h"
#include "base/cr_rng.h"

typedef struct cr_alias {
    uint64_t lo, m;  /* keys [lo, lo + m) */
    double total;    /* sum of the weights over the range (m when uniform) */
    double *prob;    /* m acceptance thresholds in [0, 1]; NULL when uniform */
    uint64_t *alias; /* m alias slots (offsets from lo); NULL when uniform */
} cr_alias;

/* Build a table over the keys [0, n) of weights w (n doubles, borrowed for
 * the call), or the uniform table over [0, n) when w is NULL. a is
 * caller-owned storage, released with cr_alias_free. Returns 0, or -1 with
 * a message and a left empty (freeing it is then a no-op):
 *   "no keys to sample from (n = 0)"
 *   "weight of key K is negative (W)"
 *   "weight of key K is not a number"       (NaN)
 *   "weight of key K is infinite"
 *   "all weights are zero"
 *   "sum of weights is not finite"          (overflow) */
int cr_alias_build(cr_alias *a, const double *w, uint64_t n, cr_err *e);

/* Build a table over the slice [lo, hi) of the keys [0, n): w has n entries
 * (or is NULL for uniform) and only w[lo .. hi) is read. Draws return global
 * keys in [lo, hi). Errors as cr_alias_build, plus
 *   "bad key range [LO, HI) for N keys"   (lo >= hi or hi > n)
 *   "all weights in keys [LO, HI) are zero" */
int cr_alias_build_range(cr_alias *a, const double *w, uint64_t n, uint64_t lo, uint64_t hi, cr_err *e);

/* One key drawn from the table (a built, non-empty table). */
static inline uint64_t cr_alias_draw(const cr_alias *a, cr_rng *r) {
    uint64_t i = cr_rng_below(r, a->m);
    if (!a->prob) return a->lo + i;
    return a->lo + (cr_rng_uniform(r) < a->prob[i] ? i : a->alias[i]);
}

/* Probability that a draw returns key k (0 outside the range). O(m): for
 * tests and diagnostics, not for the hot path. */
double cr_alias_p(const cr_alias *a, uint64_t k);

/* Release the table's memory. Idempotent; a may be built again afterwards. */
void cr_alias_free(cr_alias *a);

#endif
