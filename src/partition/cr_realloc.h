#ifndef CR_REALLOC_H
#define CR_REALLOC_H
/* Dynamic parameter reallocation for models whose access pattern changes
 * (paper 001, Algorithms 3 and 4; docs/partitioning-mbp-dppa.md).
 *
 * Keys are dense ids in [0, nkeys); a placement is server[key] in [0, k).
 * An LRU cache remembers, for recently trained samples, their feature vector
 * and the keys they accessed. For a new batch, the expected accesses of every
 * key are estimated from each sample's r nearest cached neighbours
 * (Algorithm 3); when the servers' loads drift apart by more than a
 * threshold, keys move from the most to the least loaded server while the
 * traffic saved pays for the move (Algorithm 4). */

#include <stdint.h>

#include "base/cr_err.h"

/* ---- LRU cache of recent samples (bounded: at most `capacity` entries) ---- */
typedef struct cr_lru cr_lru;

/* A new empty cache; capacity >= 1. Caller owns (cr_lru_destroy). */
cr_lru *cr_lru_new(uint32_t capacity);
void cr_lru_destroy(cr_lru **lp);

/* Record sample `id`: its sparse feature vector (idx strictly increasing,
 * nfeat entries) and the keys it accessed (nkeys entries). Copies the
 * arrays. A known id is replaced and becomes most recent; when full, the
 * least recently put sample is evicted. Returns 0, or -1 with e filled when
 * idx is not strictly increasing. */
int cr_lru_put(cr_lru *l, uint64_t id, const uint32_t *idx, const float *val, uint32_t nfeat,
               const uint32_t *keys, uint32_t nkeys, cr_err *e);
uint32_t cr_lru_size(const cr_lru *l);
uint32_t cr_lru_capacity(const cr_lru *l);
/* 1 if id is cached (does not refresh it). */
int cr_lru_contains(const cr_lru *l, uint64_t id);
/* Bytes the cache holds: its fixed tables (sized by capacity) plus the rows
 * of the samples cached now. Bounded by the capacity times the largest
 * rows put; lets callers check that memory does not grow with the stream. */
uint64_t cr_lru_bytes(const cr_lru *l);

/* ---- estimation and reallocation ---- */
typedef struct cr_realloc_opts {
    uint32_t r;         /* nearest neighbours per sample (default 5) */
    double c;           /* keep edge (d, p) only if f(d, p) > c (default 0.1) */
    double threshold;   /* reallocate only if max load - min load > threshold (default 0) */
    double horizon;     /* batches a move pays off over: benefit = horizon * traffic saved (default 1) */
    uint64_t max_moves; /* 0 = no limit */
} cr_realloc_opts;

void cr_realloc_opts_default(cr_realloc_opts *o);

/* A batch sample's feature vector (idx strictly increasing). */
typedef struct cr_sample {
    const uint32_t *idx;
    const float *val;
    uint32_t nnz;
} cr_sample;

/* Algorithm 3. For each batch sample d, its r nearest cached samples by
 * Euclidean distance, s_l = 1 / (dist_l + 1e-9), and
 * f(d, p) = sum_l s_l q_l(p) / sum_l s_l (1 when all neighbours accessed p).
 * Adds f(d, p) to w[p] for every edge with f > c (w: nkeys entries, caller
 * owned, NOT cleared first); *edges (may be NULL) gets the number of edges
 * kept. Returns 0, or -1 with e filled (a cached key >= nkeys, unsorted
 * sample indices, bad options). An empty cache adds nothing. */
int cr_realloc_estimate(const cr_lru *l, const cr_sample *batch, uint32_t nbatch,
                        const cr_realloc_opts *o, uint32_t nkeys, double *w, uint64_t *edges,
                        cr_err *e);

typedef struct cr_realloc_result {
    uint64_t moves;           /* keys moved */
    double migration_volume;  /* sum of the sizes of the keys moved */
    double max_before, min_before, max_after, min_after; /* server loads */
    uint32_t *key, *from, *to; /* the moves in order (moves entries, owned) */
} cr_realloc_result;

void cr_realloc_result_free(cr_realloc_result *r);

/* Algorithm 4 on loads L_j = sum of w[p] over keys p on server j. If
 * max - min > threshold: repeatedly take the key p of the most loaded server
 * whose move to the least loaded one leaves them closest to equal, compute
 * the bottleneck decrease
 *   delta = L_max - max(L_max - w[p], L_min + w[p], max other L_j),
 * and move it while horizon * delta > size[p] (size NULL: 1 per key).
 * Updates server in place and fills res (caller frees with
 * cr_realloc_result_free). Returns 0, or -1 with e filled (server entry
 * >= k, k == 0, negative size or weight). */
int cr_realloc_run(uint32_t k, uint32_t nkeys, uint32_t *server, const double *w,
                   const double *size, const cr_realloc_opts *o, cr_realloc_result *res,
                   cr_err *e);

#endif
