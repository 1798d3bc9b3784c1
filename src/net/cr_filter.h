#ifndef CR_FILTER_H
#define CR_FILTER_H
/* Traffic filters (thesis 3.3): pure functions and their state, no sockets.
 * The parameter server (src/ps/cr_wclient.c, cr_serve.c) calls them where a
 * data message is encoded and decoded; docs/filters.md says what each does
 * for a job, docs/internals.md ("Traffic filters on the wire") the format.
 *
 *   key caching   a key list a receiver has seen travels as its hash and
 *                 length (cr_kcache: the same cache code runs on both sides,
 *                 in lockstep, and every answer is verified)
 *   zero removal  a value frame as a bitmap or an index list of its nonzero
 *                 values, whichever is smaller, and those values
 *   half          a value frame as IEEE half floats (base/cr_half.h), 2 bytes
 *                 a value instead of 4
 *   sigmod        a push sends only the coordinates whose change since the
 *                 last push exceeds a threshold; the rest wait in a residual
 *                 (cr_sigmod), a general row rule (cr_filter_rule) drives it
 *
 * Which of these a message used is said by flags of its header, which the
 * parameter server owns (ps/cr_dhdr.h: CR_D_KSTORE, CR_D_KHASH, CR_D_KRESET,
 * CR_D_ZEROS, CR_D_HALF); the functions here take what they need as plain
 * arguments. */

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"

/* ---------- key caching ----------
 * One cache per (sender worker, receiver node, table) on each side. The
 * sender runs cr_kcache_send before each request; the receiver runs
 * cr_kcache_store on each CR_D_KSTORE request and cr_kcache_find on each
 * CR_D_KHASH one, in the order sent (one DEALER->ROUTER connection keeps
 * the order). Both sides run the same code on the same sequence, so they
 * hold the same lists and evict the same ones (least recently used first,
 * under the same byte cap). Every store has a serial number, carried in
 * the header: the receiver answers a hash only with the list stored under
 * that serial, of that hash and length, else it reports a miss (an error
 * reply, never a wrong list). The sender compares the whole list (memcmp)
 * with the one it cached under the hash before sending the hash: a hash
 * collision goes out in full and replaces the cached list on both sides. */

#define CR_KC_FRAME 12         /* hash (8 bytes) + length (uint32) */
#define CR_KC_MIN_KEYS 2       /* shorter lists go in full, uncached: 8 bytes < CR_KC_FRAME */
#define CR_KC_ENTRY_BYTES 64   /* bookkeeping charged per cached list, on top of its keys */
#define CR_KC_DEFAULT_CAP (16u << 20)

typedef struct cr_kcache cr_kcache;

/* A new empty cache holding at most cap bytes of lists (keys + CR_KC_ENTRY_BYTES
 * each). Caller owns it (cr_kcache_destroy). */
cr_kcache *cr_kcache_new(size_t cap);
void cr_kcache_destroy(cr_kcache **c);

/* Hash of a key list (64-bit, seeded with its length). */
uint64_t cr_kcache_hash(const int64_t *keys, int64_t n);

/* What the sender does with a list: */
enum { CR_KC_FULL = 0, CR_KC_STORE, CR_KC_HASH };
typedef struct cr_kc_out {
    int action;       /* CR_KC_*: send in full uncached / in full, stored / as hash */
    uint32_t serial;  /* STORE: the new list's serial; HASH: the cached list's */
    int reset;        /* 1 on the cache's first store: set CR_D_KRESET */
    int collision;    /* 1: a different list was cached under this hash (replaced) */
    int64_t evicted;  /* lists evicted to make room */
} cr_kc_out;

/* Sender: decide how n keys travel and update the cache. */
void cr_kcache_send(cr_kcache *c, const int64_t *keys, int64_t n, cr_kc_out *o);
/* As cr_kcache_send with the hash given (tests force collisions with it). */
void cr_kcache_send_h(cr_kcache *c, const int64_t *keys, int64_t n, uint64_t h, cr_kc_out *o);

/* Receiver: a CR_D_KSTORE list with its serial (reset: CR_D_KRESET set).
 * Returns the cached copy (valid until the next call on c), or NULL when
 * the list cannot be cached (too short or over the cap: a sender never
 * stores it). *resync = 1 when the serial was out of sequence: earlier
 * lists were lost, so every older list is dropped (this one is whole). */
const int64_t *cr_kcache_store(cr_kcache *c, const int64_t *keys, int64_t n, uint32_t serial, int reset, int *resync);
/* Receiver: the list of a CR_D_KHASH frame (CR_KC_FRAME bytes at frame),
 * cached under serial, with n keys: the cache's copy (valid until the next
 * call on c), or NULL with a message (a miss). */
const int64_t *cr_kcache_find(cr_kcache *c, const void *frame, int64_t n, uint32_t serial, cr_err *e);
/* The hash frame of list (h, n). */
void cr_kcache_frame(uint64_t h, int64_t n, unsigned char out[CR_KC_FRAME]);
/* Bytes held (keys + bookkeeping), lists held. */
size_t cr_kcache_bytes(const cr_kcache *c);
int64_t cr_kcache_count(const cr_kcache *c);

/* ---------- zero removal ----------
 * A frame of n 4-byte values (float32 or int32 bit patterns: a value is
 * zero when all its bits are, so -0.0f is kept and decoding is bit-exact)
 * becomes
 *   uint32 kind (1: bitmap, 2: index list), uint32 nnz,
 *   kind 1: ceil(n/8) bytes, bit i%8 of byte i/8 set when value i is nonzero
 *   kind 2: nnz uint32 positions, ascending
 *   then the nnz nonzero values in order,
 * whichever kind is smaller (the bitmap on a tie). */

/* Size of the zero-removed frame of n values with nnz nonzero ones. */
size_t cr_zeros_size(size_t n, size_t nnz);
/* Encode n values; returns the new buffer (malloc'd, caller frees) and its
 * size in *outn, or NULL when the encoding would not be smaller than 4n
 * bytes (send the values as they are). *nnz: the nonzero values counted. */
void *cr_zeros_encode(const void *vals, size_t n, size_t *outn, size_t *nnz);
/* Decode a frame of fn bytes into out (exactly n values). Returns 0, or -1
 * with a message on a frame that is malformed for n values (sizes, kind,
 * positions out of order or range, a bitmap whose count is not nnz). */
int cr_zeros_decode(const void *frame, size_t fn, void *out, size_t n, cr_err *e);

/* A value frame as received (zlib: deflated, zeros: zero-removed, either,
 * both or neither): into out, exactly outb bytes; raw: its size before zlib
 * (the header's raw_bytes). 0 or -1 with a message. */
int cr_filter_frame_in(int zlib, int zeros, const void *frame, size_t fn, int64_t raw, void *out, size_t outb,
                       cr_err *e);

/* ---------- push-side rules, significantly-modified filter ----------
 * A rule sees each row of a push (key, gradient g of dim values) and
 * writes the row to send into out: it may zero coordinates (they are not
 * sent) and returns how many coordinates it keeps; 0 drops the row. */
typedef int (*cr_filter_rule)(void *ctx, int64_t key, const float *g, float *out, int dim);

/* Apply rule to n rows: the kept rows go to okeys / ovals (room for n rows,
 * caller's); returns how many. *coords: coordinates kept in all. */
int64_t cr_filter_rows(cr_filter_rule rule, void *ctx, const int64_t *keys, int64_t n, const float *vals, int dim,
                       int64_t *okeys, float *ovals, int64_t *coords);

/* The significantly-modified filter of one worker and table: a residual
 * row per key pushed (a hash map: 8 + 4 bytes of index per slot, dim * 4
 * bytes per row), created at the key's first push, zeroed when sent, kept
 * until the filter is destroyed: at most (keys pushed) * (dim * 4 + 24)
 * bytes. A coordinate is sent when |residual + g| > threshold. */
typedef struct cr_sigmod cr_sigmod;
cr_sigmod *cr_sigmod_new(int dim, float threshold);
void cr_sigmod_destroy(cr_sigmod **s);
/* The rule (ctx: a cr_sigmod): residual += g; coordinates over the
 * threshold go to out and leave the residual, the others are 0 in out. */
int cr_sigmod_rule(void *ctx, int64_t key, const float *g, float *out, int dim);
/* Rows whose residual is not all zero: their keys and residuals (malloc'd
 * arrays, caller frees; NULL when none), and the residual zeroed. Returns
 * the row count. */
int64_t cr_sigmod_flush(cr_sigmod *s, int64_t **keys, float **vals);
size_t cr_sigmod_bytes(const cr_sigmod *s);

/* ---------- counters ----------
 * Per node and table, written by the node's threads (atomics), read by
 * the stats. bytes_before / bytes_after: what the filter was given and
 * what it let through, in bytes of the frames it works on (key frames,
 * value frames; sigmod: rows of 8 bytes of key + dim * 4 of values). */
typedef struct cr_filter_stats {
    atomic_llong kc_lists, kc_hashed, kc_stored, kc_collisions, kc_evicted, kc_misses, kc_before, kc_after;
    atomic_llong z_frames, z_encoded, z_zeros, z_before, z_after;
    atomic_llong zl_frames, zl_before, zl_after;
    atomic_llong h_frames, h_before, h_after, h_overflows;
    atomic_llong sg_rows, sg_dropped, sg_coords_held, sg_flushed, sg_before, sg_after;
} cr_filter_stats;

/* Lua table text of s ("key_cache={...},zeros={...},..."), the parts whose
 * filter is on. Returns the length written (snprintf's). */
int cr_filter_stats_put(const cr_filter_stats *s, int key_cache, int zeros, int sigmod, int zlib, int half,
                        char *b, size_t cap);

/* ---------- half floats ----------
 * A value frame of n = outb / 4 floats sent as n IEEE half floats
 * (base/cr_half.h). Receiver: frame (fn bytes, raw its size before zlib)
 * into out (outb bytes of floats): inflated when zlib, then widened. -1
 * with a message on a frame of the wrong size or one that does not inflate. */
int cr_filter_half_in(int zlib, const void *frame, size_t fn, int64_t raw, float *out, size_t outb, cr_err *e);

#endif
