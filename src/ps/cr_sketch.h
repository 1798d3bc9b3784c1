#ifndef CR_SKETCH_H
#define CR_SKETCH_H
/* Access counts per key of one table, for the automatic choice of a
 * management technique per key (docs/management.md, "The automatic choice").
 *
 * A count-min sketch (Cormode & Muthukrishnan 2005): `depth` rows of
 * `width` counters; a key adds 1 to one counter per row (column = the
 * row's multiply-shift hash of the key); its estimate is the least of its
 * counters. Estimates never undercount; with multiply-shift hashing
 * (collision probability <= 2/width) an estimate exceeds the true count by
 * more than 2e/width * total with probability <= e^-depth (width 4096,
 * depth 4: 0.13% of the total, for 98% of the keys).
 *
 * Exact mode: a table of at most width * depth keys gets one row of one
 * counter per key (column = key) instead, in no more memory than the sketch
 * would take: its counts are exact and its heavy hitters found by a scan.
 *
 * Heavy hitters: a sketch cannot enumerate keys, so it keeps beside it the
 * `topk` candidate keys of largest estimate seen so far (a min-heap with a
 * hash index, told of a key whose estimate passes the heap's least when
 * that estimate is a multiple of 8: one count in 8, so a hot key's place
 * there lags by a few counts, at an eighth of the cost).
 * cr_sketch_heavy answers from the candidates, re-estimated.
 *
 * Threads: ONE writer (the worker that owns it: one sketch per worker and
 * table, so no counter is shared and an add is plain loads and stores);
 * any number of readers (cr_sketch_merge / _clone / _write from the node's
 * control thread) at the same time. Counters are relaxed atomics written
 * by load + store (no locked instruction); a reader sees each counter
 * whole, some adds of a batch in progress maybe not yet. Candidate keys
 * read during a heap update may repeat or miss one key; readers dedupe and
 * re-estimate them.
 *
 * Counters are 32-bit and wrap; merged or differenced sketches (counts of
 * a window = the sketch at its end minus the one at its start, exact since
 * the sketch is linear) are right as long as one counter of the window
 * stays below 2^32. Memory is fixed at creation: cr_sketch_bytes. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"

#define CR_SKETCH_DEFAULT_WIDTH 4096
#define CR_SKETCH_DEFAULT_DEPTH 4
#define CR_SKETCH_DEFAULT_TOPK 1024 /* = auto.lua's default cap */
/* Tables the nodes count exactly (one 32-bit counter per key) when they
 * count accesses (cr_node_ctl.c): up to 2^17 keys, 512 KiB per worker. */
#define CR_COUNTS_EXACT_KEYS (1 << 17)
#define CR_SKETCH_MAX_WIDTH (1 << 22)
#define CR_SKETCH_MAX_DEPTH 8
#define CR_SKETCH_MAX_TOPK (1 << 16)

typedef struct cr_sketch cr_sketch;

typedef struct cr_sketch_hit {
    int64_t key;
    uint64_t count; /* estimate */
} cr_sketch_hit;

/* A zeroed sketch for a table of nkeys keys: width a power of two in
 * [64, CR_SKETCH_MAX_WIDTH], depth in [1, CR_SKETCH_MAX_DEPTH], topk in
 * [0, CR_SKETCH_MAX_TOPK]; the seed picks the hash functions (sketches
 * merged together need the same shape and seed). Exact mode when nkeys <=
 * width * depth. Owned by the caller (cr_sketch_destroy); NULL with e set
 * on a bad argument. */
cr_sketch *cr_sketch_new(int64_t nkeys, int width, int depth, int topk, uint64_t seed, cr_err *e);
/* Free; sets *sk to NULL; accepts NULL. */
void cr_sketch_destroy(cr_sketch **sk);

/* Count one access to each of keys[0..n) (repeats count each time). Keys
 * outside [0, nkeys) are not counted. Only the owning writer calls it. */
void cr_sketch_add_keys(cr_sketch *sk, const int64_t *keys, int64_t n);

/* The estimated count of key (exact in exact mode); 0 out of range. */
uint64_t cr_sketch_estimate(const cr_sketch *sk, int64_t key);
/* Distinct keys counted: exact in exact mode; otherwise a lower bound,
 * the most non-empty columns of a row (each holds at least one key): near
 * the truth while the keys are few next to width, at most width. */
int64_t cr_sketch_distinct(const cr_sketch *sk);
/* Accesses counted (wraps at 2^64). */
uint64_t cr_sketch_total(const cr_sketch *sk);
/* 1 in exact mode. */
int cr_sketch_exact(const cr_sketch *sk);
/* Bytes held (counters, candidates, index, the struct): fixed at creation. */
size_t cr_sketch_bytes(const cr_sketch *sk);
/* The error bound of an estimate, as a count: 2e/width * total (0 in exact
 * mode); exceeded with probability <= e^-depth per key. */
double cr_sketch_bound(const cr_sketch *sk);

/* dst += src: counters, total and the union of candidates (the topk of
 * largest merged estimate are kept). src may be written meanwhile; dst
 * must have no writer. -1 with e set when shape or seed differ. */
int cr_sketch_merge(cr_sketch *dst, const cr_sketch *src, cr_err *e);
/* dst -= older, to count a window (older: an earlier clone of the same
 * sketch, or of the same merge); candidates re-estimated. dst must have no
 * writer. -1 with e set when shape or seed differ. */
int cr_sketch_sub(cr_sketch *dst, const cr_sketch *older, cr_err *e);
/* A copy (read as cr_sketch_merge reads src), owned by the caller. */
cr_sketch *cr_sketch_clone(const cr_sketch *src);

/* The keys whose estimate exceeds threshold, largest first (ties: smaller
 * key first), at most max of them into out; returns how many. Exact mode
 * scans every key; otherwise only candidates can be returned, so a key
 * can be missed when more than topk keys pass the heap's least count. */
int cr_sketch_heavy(const cr_sketch *sk, uint64_t threshold, cr_sketch_hit *out, int max);

/* Serialised form (for a STATS answer), native byte order: header, then
 * the counters, then the candidate keys. */
size_t cr_sketch_wire_size(const cr_sketch *sk); /* at most, for a buffer */
/* Write into buf (cap bytes); returns the bytes written, 0 if cap is too
 * small. Reads sk as cr_sketch_merge reads src. */
size_t cr_sketch_write(const cr_sketch *sk, void *buf, size_t cap);
/* A sketch from n bytes written by cr_sketch_write; NULL with e set (what
 * is wrong) when they are not one. */
cr_sketch *cr_sketch_read(const void *buf, size_t n, cr_err *e);

#endif
