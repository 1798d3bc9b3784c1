#ifndef CR_WSAMPLE_H
#define CR_WSAMPLE_H
/* Sampling in the parameter server, one worker's side: the samplers
 * (ps/cr_sampling.h) of one worker thread, one per distribution, wired to
 * the node's alias tables, the node's sampling scheme, this node's shard and
 * the worker's client (ps/cr_wclient.h) for the rows of keys held elsewhere.
 * The Lua binding (src/lua/l_worker.c: T:prepare_sample, T:pull_sample,
 * T:pull_sample_async) is a thin layer over it.
 *
 * Distributions are declared on every node by the job (DIST message): the
 * node builds the alias tables over all of the table's keys and over its own
 * slice once, and every worker's sampler borrows them read-only.
 *
 * Rows: a sample whose key is in this node's shard is read from shared
 * memory when pulled; the others come from the fetches the sampler started
 * ahead of time (cr_wclient_pull_copy into a buffer of ours): at level 1 at
 * prepare time, at levels 2 and 3 one pool ahead. A pull waits only for
 * fetches that have not arrived; level 3 first postpones such samples
 * (cr_wclient_test is the sampler's `ready`).
 *
 * Scheme changes: the node keeps the scheme the job last sent (SAMPLING) and
 * a generation number. At each prepare, a worker whose sampler for that
 * distribution was made under an older generation retires it and makes a
 * new one with the new configuration. A retired sampler keeps serving the
 * handles it prepared (same keys, same guarantees as when prepared) and is
 * freed once they are all pulled or closed; its counters stay in the
 * worker's totals.
 *
 * Stats: after every call the worker's totals (cr_sampling_stats over all
 * its samplers, retired and freed ones included) are published to the node,
 * which sums them per node for job:stats().
 *
 * Threads: one cr_wsample per worker thread, used by that thread only. */

#include <stdint.h>

#include "base/cr_err.h"
#include "ps/cr_node.h"
#include "ps/cr_sampling.h"
#include "ps/cr_wclient.h"

typedef struct cr_wsample cr_wsample;

/* A prepared handle: the sampler it belongs to and its id there. */
typedef struct cr_shandle {
    uint32_t sampler, id;
} cr_shandle;

/* New sampling state of local worker lw, using its client wc (borrowed:
 * destroy this first). */
cr_wsample *cr_wsample_new(cr_node *n, int lw, cr_wclient *wc);
/* Free every sampler and fetch; sets *w to NULL, accepts NULL. */
void cr_wsample_destroy(cr_wsample **w);

/* Samples in one handle at most (a handle holds 40 bytes per sample, 80 at
 * level 3, outside the model's memory cap). */
#define CR_WSAMPLE_MAX_N (1 << 24)

/* Prepare n samples (0 <= n <= CR_WSAMPLE_MAX_N) of distribution `dist`
 * over table t. Errors:
 *   "prepare_sample: no distribution 'X' (declared: a, b)"
 *   "prepare_sample: distribution 'X' is over table 'E', not table 'R'"
 *   "prepare_sample: bad number of samples N (0 to 16777216 in one handle)"
 *   "prepare_sample: 'X' at level 4 (local): node 1 holds no key ..."
 *   a fetch's error. */
int cr_wsample_prepare(cr_wsample *w, cr_shard *t, const char *dist, int64_t n, cr_shandle *h, cr_err *e);

/* Samples of h not pulled yet, or -1 if h is closed (pulled to the end or
 * closed) or unknown. */
int64_t cr_wsample_left(cr_wsample *w, cr_shandle h);

/* The next m samples of h: keys[0..m) and their rows (m * dim floats of
 * table t). pend NULL: waits until every row is in. Otherwise rows of
 * fetches still on their way are copied by cr_wsample_finish(*pend): *pend
 * is 0 when nothing is left to copy; rows must stay valid until then.
 * Errors: "pull_sample: the handle is closed (...)", "pull_sample: handle
 * of table 'E' used with table 'R'", "pull_sample: N samples left, asked for
 * M", a fetch's error. */
int cr_wsample_pull(cr_wsample *w, cr_shard *t, cr_shandle h, int64_t m, int64_t *keys, float *rows,
                    uint32_t *pend, cr_err *e);
/* Wait for the rows of an asynchronous pull and copy them in. 0, or -1 with
 * a message (also for an unknown pend id). */
int cr_wsample_finish(cr_wsample *w, uint32_t pend, cr_err *e);

/* Drop h and its unpulled samples (unknown or closed: ignored). */
void cr_wsample_close(cr_wsample *w, cr_shandle h);
/* Drop every asynchronous pull not finished: its rows are not copied (the
 * caller is about to free the matrices they were for). */
void cr_wsample_drop_pulls(cr_wsample *w);

/* This worker's counters, over all its samplers so far. */
void cr_wsample_stats(const cr_wsample *w, cr_sampling_stats *out);
/* Fetches alive (tests: 0 once every handle is pulled or closed and no
 * pool is live). */
int64_t cr_wsample_fetches(const cr_wsample *w);

#endif
