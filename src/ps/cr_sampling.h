#ifndef CR_SAMPLING_H
#define CR_SAMPLING_H
/* The sampling manager of one worker (NuPS section 4): which keys a worker
 * gets when it asks for samples from a distribution pi over a table's keys,
 * and where each sample's row comes from.
 *
 * A worker calls prepare(n) to get a handle for n samples and then pulls
 * them in portions (sum of the portions = n). The manager draws the keys
 * (from alias tables the node built once and shares read-only among its
 * workers), asks the caller to fetch the rows of keys held on other nodes
 * ahead of time, and tells the caller, for each pulled sample, whether its
 * row is in this node's shard or in which fetch. It never touches rows, the
 * network or Lua: the caller supplies the fetch through cr_sampling_io, so
 * the same state machine runs under the PS (fetch = an asynchronous pull)
 * and in unit tests (fetch = a fake with controlled arrival).
 *
 * Levels and their guarantees (NuPS 4.1; "node" below is this worker: the
 * guarantees hold per worker, hence per node, since workers draw from
 * independent rng streams):
 *
 *  1 CONFORM   every sample is an independent draw from pi. prepare(n)
 *              draws n keys and fetches the non-local ones at once.
 *  2 BOUNDED   conditional on all but the last B = U*G samples of this
 *              worker, and on other workers' samples, a sample is
 *              distributed as pi (marginals are exactly pi). Keys come from
 *              pools of G independent draws; each pool is traversed U
 *              times, each pass in a fresh random order, so one draw is
 *              used U times, all within U*G consecutive samples. The next
 *              pool is drawn and fetched when the current one starts being
 *              used (one pool ahead, "in the background"): its rows have
 *              the U*G samples of the current pool to arrive. (The spec's
 *              timed trigger, "a new pool when the unused samples fall
 *              below twice the measured fetch time", is not implemented:
 *              the lookahead is this fixed pool.)
 *  3 LONGTERM  the long-run frequency of every key converges to pi at this
 *              worker. Pools as at level 2, plus postponing (if enabled): a
 *              pulled sample whose row is neither local nor arrived yet is
 *              moved to the end of its handle and the next one is served in
 *              its place. A sample is postponed at most once and only within
 *              its handle, so every handle still serves exactly the keys it
 *              was prepared with; only the order changes (which is what
 *              breaks level 2: the order depends on arrival times).
 *  4 LOCAL     keys are drawn only among the keys held on this node, from pi
 *              restricted to them (an alias table over the local slice); no
 *              fetch at all. No guarantee: if pi_k > 1/nodes for some k, the
 *              node not holding k never sees it, so level 3 fails there.
 *
 * Rows of pulled samples: a sample with ticket CR_SAMPLE_LOCAL is read from
 * this node's shard; otherwise its row is row `slot` of fetch `ticket`. A
 * fetch stays alive (not released through io.release) while a prepared,
 * unpulled sample or a live pool refers to it, and until the next call on
 * the sampler after the pull that served its last sample: read the rows of a
 * pull before calling the sampler again.
 *
 * Threads: a sampler belongs to one worker thread. The alias tables it
 * borrows are read-only and shared. */

#include <stdint.h>

#include "base/cr_alias.h"
#include "base/cr_err.h"

typedef enum {
    CR_SAMPLING_CONFORM = 1,
    CR_SAMPLING_BOUNDED = 2,
    CR_SAMPLING_LONGTERM = 3,
    CR_SAMPLING_LOCAL = 4,
} cr_sampling_level;

#define CR_SAMPLING_POOL_DEFAULT 250
#define CR_SAMPLING_REUSE_DEFAULT 16
/* Ticket of a sample whose row is in this node's shard. */
#define CR_SAMPLE_LOCAL UINT64_MAX

/* Plain data: what a scheme script (configs/sampling/NAME.lua) sets. */
typedef struct cr_sampling_conf {
    int level;         /* cr_sampling_level */
    int64_t pool;      /* G: draws per pool (levels 2, 3) */
    int64_t reuse;     /* U: passes over each pool (levels 2, 3) */
    int postpone;      /* 1: postpone samples not yet arrived (level 3 only) */
    int64_t local_lo;  /* keys held on this node: [local_lo, local_hi) ... */
    int64_t local_hi;
    /* ... unless is_local is set (e.g. after relocation): 1 if key is here. */
    int (*is_local)(void *ctx, int64_t key);
    void *local_ctx;
} cr_sampling_conf;

/* Defaults for a level: G = 250, U = 16, postponing on at level 3 only, no
 * local keys (set the range or is_local). */
void cr_sampling_conf_default(cr_sampling_conf *c, cr_sampling_level level);

/* Check a configuration. Returns 0, or -1 with one of:
 *   "sampling: unknown level L (1 conform, 2 bounded, 3 longterm, 4 local)"
 *   "sampling: pool size must be at least 1 (got G)"
 *   "sampling: reuse count must be at least 1 (got U)"
 *   "sampling: postponing needs level 3 (longterm): it breaks level L"
 *   "sampling: bad local key range [LO, HI)"   (lo > hi or lo < 0) */
int cr_sampling_conf_check(const cr_sampling_conf *c, cr_err *e);

/* How the sampler gets rows of keys held elsewhere; supplied by the caller. */
typedef struct cr_sampling_io {
    void *ctx;
    /* Start fetching the rows of n keys (n >= 1, none local, possibly
     * repeated; keys borrowed for the call). Store an id != CR_SAMPLE_LOCAL
     * in *ticket; row i of the fetch is the row of keys[i]. Returns 0, or -1
     * with a message (nothing to release then). */
    int (*fetch)(void *ctx, const int64_t *keys, int64_t n, uint64_t *ticket, cr_err *e);
    /* 1 if the rows of ticket have arrived, 0 if not yet. May be NULL
     * (everything counts as arrived: nothing is ever postponed). */
    int (*ready)(void *ctx, uint64_t ticket);
    /* The sampler no longer refers to ticket: its rows may be freed. */
    void (*release)(void *ctx, uint64_t ticket);
} cr_sampling_io;

/* One pulled sample. */
typedef struct cr_sample {
    int64_t key;
    uint64_t ticket;    /* CR_SAMPLE_LOCAL, or the fetch holding the row */
    int64_t slot;       /* row of the key in that fetch; -1 when local */
    uint64_t draw;      /* serial number of the draw from pi, from 0 */
    uint32_t use;       /* 0 for the first use of the draw, u for pass u */
    uint32_t postponed; /* times it was postponed: 0 or 1 (never more) */
} cr_sample;

/* Counters of one sampler (summed per node by the caller for job:stats()). */
typedef struct cr_sampling_stats {
    uint64_t drawn;     /* keys drawn from pi (or its local slice) */
    uint64_t local;     /* samples served from this node's shard */
    uint64_t pooled;    /* samples served from rows fetched ahead (a pool,
                           or the handle's own fetch at level 1) */
    uint64_t remote;    /* keys whose rows were fetched from other nodes */
    uint64_t reused;    /* samples served that were not their draw's first use */
    uint64_t postponed; /* postponements (each sample at most once) */
    uint64_t localized; /* of `remote`, keys moved here (a relocating table's
                           fetch localizes: cr_wsample.c) instead of copied */
} cr_sampling_stats;

typedef struct cr_sampler cr_sampler;

/* New sampler for one worker. pi (over the table's keys) is required;
 * local_pi (pi restricted to this node's keys, cr_alias_build_range) is
 * required at level 4 and ignored otherwise. pi and local_pi are
 * borrowed for the sampler's life; c and io are copied (io->ctx is
 * borrowed; io may be NULL at level 4, which never fetches). The rng stream is
 * (seed, stream), e.g. stream = global worker id, so draws depend on the
 * seed and the worker only. Returns NULL with a message on a bad
 * configuration ("sampling: level 4 (local) needs the local alias table"
 * or a cr_sampling_conf_check message). Caller owns the sampler. */
cr_sampler *cr_sampler_new(const cr_alias *pi, const cr_alias *local_pi, const cr_sampling_conf *c,
                           const cr_sampling_io *io, uint64_t seed, uint64_t stream, cr_err *e);

/* Release every fetch still referred to, free; sets *s to NULL, accepts NULL. */
void cr_sampler_destroy(cr_sampler **s);

/* Prepare n >= 0 samples: draws their keys now and starts the fetches they
 * need (at levels 2 and 3, possibly the next pool's). Stores a handle id
 * (never 0) in *handle. Returns 0, or -1 with a message ("prepare_sample:
 * bad number of samples N", or the fetch's message; no handle then). */
int cr_sampler_prepare(cr_sampler *s, int64_t n, uint32_t *handle, cr_err *e);

/* The next m samples of handle h into out (m entries, caller-owned). The
 * handle closes itself when its last sample is pulled. Returns 0, or -1:
 *   "pull_sample: no open handle H"
 *   "pull_sample: handle H has N samples left, asked for M" */
int cr_sampler_pull(cr_sampler *s, uint32_t h, int64_t m, cr_sample *out, cr_err *e);

/* Samples of handle h not pulled yet, or -1 if h is not open. */
int64_t cr_sampler_left(const cr_sampler *s, uint32_t h);

/* Release now the fetches no longer referred to, instead of at the next
 * call: for a caller that has read (copied) the rows of its pulls. */
void cr_sampler_flush(cr_sampler *s);

/* Handles open (prepared, not yet pulled to the end or closed). */
int64_t cr_sampler_handles(const cr_sampler *s);

/* Drop handle h and its unpulled samples (e.g. a Lua handle collected
 * early). Unknown or closed handles are ignored. */
void cr_sampler_close(cr_sampler *s, uint32_t h);

/* The counters so far. */
void cr_sampler_stats(const cr_sampler *s, cr_sampling_stats *out);

/* sum += x, field by field (per-node totals over workers and over samplers
 * replaced when the scheme changes). */
void cr_sampling_stats_add(cr_sampling_stats *sum, const cr_sampling_stats *x);

/* One entry of a sampling scheme as the scheduler sends it (SAMPLING,
 * ps/cr_proto.h): the configuration of every distribution (name "", entry
 * 0 only), or of the distribution or table it names. */
#define CR_DIST_NAME_MAX 64 /* a distribution's name, with the NUL */
typedef struct cr_sampling_entry {
    char name[CR_DIST_NAME_MAX];
    int64_t level, pool, reuse, postpone;
} cr_sampling_entry;

#endif
