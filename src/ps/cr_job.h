#ifndef CR_JOB_H
#define CR_JOB_H
/* The job client: what the scheduler side of a job calls (like ps-lite's
 * Customer). It starts and stops the nodes (through cr_sched), declares
 * tables, ships models and policies, runs calls on every worker with result
 * and progress callbacks, cancels, gets and sets rows, sets learning rates
 * and clocks, and collects stats. It is the only user of cr_sched_send and
 * cr_sched_recv outside tests, and knows nothing of Lua.
 *
 * One thread uses a job at a time. Every request waits for all its answers
 * before returning, except when a callback interrupts the wait: the command
 * is then cancelled on every node and its answers are taken (and dropped) at
 * the start of the next request, up to the grace period.
 *
 * Errors: -1 with a one-line message in e (cut at CR_ERR_MAX; the whole
 * message, which may hold a traceback, is cr_job_error). A worker's error
 * leaves the job usable. A dead node, or workers that do not stop within the
 * grace period after a cancel, fail the job: its nodes are ended and every
 * later request fails (cr_job_failed). */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_curve.h"
#include "base/cr_err.h"
#include "ps/cr_node.h"
#include "ps/cr_proto_caps.h"
#include "ps/cr_sampling.h"
#include "ps/cr_table.h"

typedef struct cr_job cr_job;

/* The largest job the core runs: nodes, and workers per node (the wire's
 * caps). The CLI's --nodes and --workers ranges are these, so the command
 * line accepts what cr.job{} does. */
#define CR_JOB_MAX_NODES CR_PROTO_MAX_NODES
#define CR_JOB_MAX_WORKERS CR_PROTO_MAX_WPN

/* Refuse a job the machine cannot run, with a message naming the limit:
 * 1 <= nodes <= CR_JOB_MAX_NODES, 0 <= workers <= CR_JOB_MAX_WORKERS per
 * node, and nodes * max(workers, 1) worker
 * threads at most max(32, 16 per online CPU) (4 nodes of 8 workers fit on 2
 * CPUs). A job with workers = 0 holds tables only: cr_job_model and
 * cr_job_call refuse to run on it. Returns 0 or -1. */
int cr_job_check_size(int nodes, int workers, cr_err *e);

typedef struct cr_job_opts {
    int nodes, workers;   /* checked with cr_job_check_size */
    uint64_t seed;
    const char *listen;   /* control endpoint (NULL: tcp://127.0.0.1:*) */
    int spawn;            /* 1: start the nodes; 0: wait for hand-started ones */
    int local_nodes;      /* spawn = 0: of those, start this many here (see cr_sched_opts) */
    int min_nodes;        /* see cr_sched_opts */
    const char *exe;      /* binary to start as a node (NULL: /proc/self/exe) */
    const cr_node_hooks *hooks; /* worker body of the in-process node (nodes == 1) */
    int exit_on_death;
    double timeout, join_timeout; /* see cr_sched_opts */
    double grace;         /* seconds the other workers get to stop after an error or an interrupt (0: 10) */
    cr_curve curve;       /* who may join (cr_job_curve_from_env); on = 0: nobody checked */
    /* Called once the control endpoint is bound (tests start node threads
     * there); may be NULL. See cr_sched_opts. */
    void (*on_listen)(const char *endpoint, void *arg);
    void *on_listen_arg;
    /* A node died (see cr_sched_opts): the caller decides what to print and
     * whether to end the process; may be NULL. */
    void (*on_death)(const char *msg, void *arg);
    void *on_death_arg;
    /* The scheduler waits for hand-started nodes on endpoint; may be NULL. */
    void (*on_wait)(const char *endpoint, int nodes, void *arg);
    void *on_wait_arg;
} cr_job_opts;

/* The job's keys as the environment gives them (CRESCENT_CURVE_PUBLIC and
 * _SECRET, or CRESCENT_JOB_SECRET; net/cr_auth.h checks them), into c for
 * cr_job_opts.curve: c->on = 0 when none is set. 0, or -1 with a message. */
int cr_job_curve_from_env(cr_curve *c, cr_err *e);

/* Start the scheduler and the nodes; NULL with a message (nothing left
 * running). The caller owns the job (cr_job_close). */
cr_job *cr_job_start(const cr_job_opts *o, cr_err *e);
/* Shut the nodes down and free the job; NULLs *j; accepts NULL. */
void cr_job_close(cr_job **j);
/* The same, asking nodes a launcher started to join the job's next run
 * (crescent run --restarts). */
void cr_job_close_rejoin(cr_job **j);

const char *cr_job_endpoint(const cr_job *j);
int cr_job_nodes(const cr_job *j);
int cr_job_workers(const cr_job *j); /* per node */
/* 1 once the job cannot go on (a node died, or it was ended after a grace period). */
int cr_job_failed(const cr_job *j);
/* The whole message of the last failed request (owned by j, valid until the
 * next request), "" if none. */
const char *cr_job_error(const cr_job *j);

/* Callbacks of a waiting request; any may be NULL. A callback returning -1
 * (message in e) interrupts the wait: the command is cancelled and the
 * request fails with that message.
 *   result:   one REPLY (worker id, or -1 for a node's), serialized data
 *   progress: items processed since the last call
 *   tick:     about every 100 ms while nothing arrives (e.g. to notice Ctrl-C)
 *   first_error: the first worker error, if other answers are still owed a
 *             second later (to show it before the grace period runs) */
typedef struct cr_job_cb {
    int (*result)(void *arg, int worker, const char *data, size_t n, cr_err *e);
    int (*progress)(void *arg, int64_t items, cr_err *e);
    int (*tick)(void *arg, cr_err *e);
    void (*first_error)(void *arg, const char *msg);
    void *arg;
} cr_job_cb;


/* Create table `id` (the next id: 0, 1, ...) on every node. */
int cr_job_table(cr_job *j, int id, const cr_table_def *d, cr_err *e);
/* The same for any placement: owner (d->keys entries) is the node of each
 * key for a file placement (d->placement CR_PLACE_FILE), else NULL. */
int cr_job_table_placed(cr_job *j, int id, const cr_table_def *d, const uint32_t *owner, cr_err *e);
/* Load a model script on every worker (chunk: its name in messages; opts: a
 * serialized Lua value). */
int cr_job_model(cr_job *j, const char *src, size_t srcn, const char *chunk, size_t chunkn, const char *opts,
                 size_t optsn, const cr_job_cb *cb, cr_err *e);
/* Switch the consistency policy at each worker's next clock boundary (no answer). */
int cr_job_policy(cr_job *j, const char *src, size_t srcn, const char *chunk, size_t chunkn, const char *opts,
                  size_t optsn, cr_err *e);
/* Run model function fn(args) on every worker; results through cb->result. */
int cr_job_call(cr_job *j, const char *fn, size_t fnn, const char *args, size_t argsn, const cr_job_cb *cb,
                cr_err *e);
/* Ask every node to end the running command (no answer). */
int cr_job_cancel(cr_job *j, cr_err *e);
int cr_job_set_lr(cr_job *j, int table, double lr, cr_err *e);
/* Set every worker's clock and barrier count (nodes * workers each), between commands. */
int cr_job_set_clocks(cr_job *j, const int64_t *clocks, const int64_t *barriers, cr_err *e);
/* One serialized stats table per node, through cb->result (worker -1). */
int cr_job_stats(cr_job *j, const cr_job_cb *cb, cr_err *e);
/* Rows [lo, lo + count) of table `table`, all on node `node`: values
 * (count * dim floats) and optimizer state (count * sdim) copied out / in.
 * set_rows with state NULL keeps the state. */
int cr_job_get_rows(cr_job *j, int table, int node, int64_t lo, int64_t count, int32_t dim, int32_t sdim,
                    float *values, float *state, cr_err *e);
int cr_job_set_rows(cr_job *j, int table, int node, int64_t lo, int64_t count, int32_t dim, int32_t sdim,
                    const float *values, const float *state, cr_err *e);
/* A sparse table's rows by key (ps/cr_proto.h, cr_msg_rows): get_keys
 * copies out the rows of n keys, all on `node` (initial values for keys
 * not stored); set_keys stores them (state NULL: kept, or initial for a new
 * key). dump copies out at most max stored rows from *cursor (0: the start)
 * into keys, values and state, sets *got and moves *cursor
 * (CR_SHARD_DUMP_END: every row of the node was given). */
int cr_job_get_keys(cr_job *j, int table, int node, const int64_t *keys, int64_t n, int32_t dim, int32_t sdim,
                    float *values, float *state, cr_err *e);
int cr_job_set_keys(cr_job *j, int table, int node, const int64_t *keys, int64_t n, int32_t dim, int32_t sdim,
                    const float *values, const float *state, cr_err *e);
int cr_job_dump(cr_job *j, int table, int node, uint64_t *cursor, int64_t max, int32_t dim, int32_t sdim,
                int64_t *keys, float *values, float *state, int64_t *got, cr_err *e);
/* Declare sampling distribution `name` over the keys of table `table` on
 * every node: weights (nweights doubles, one per key, checked by the caller:
 * finite, >= 0, positive sum; at most CR_PROTO_MAX_WEIGHTS) or uniform when
 * weights is NULL. Each node builds its alias tables before it answers. */
int cr_job_distribution(cr_job *j, int table, const char *name, const double *weights, int64_t nweights, cr_err *e);
/* Set the sampling scheme on every node (count entries, entry 0 the
 * default; see cr_msg_sampling). Workers use it from their next prepare. */
int cr_job_sampling(cr_job *j, const char *label, const cr_sampling_entry *entries, int count, cr_err *e);
/* Set table's technique on every node, between commands (docs/management.md):
 * mode 0 classic, 1 relocate, for keys not among the nrepl replicated ones.
 * Going classic (or replicating keys) brings moved keys home first. */
int cr_job_manage(cr_job *j, int table, int mode, const int64_t *repl, int64_t nrepl, cr_err *e);
/* The same, with the keys managed by relocation (mode 0 only: every
 * other key not replicated is classic; reloc NULL or nreloc 0: none). The
 * nodes check the keys: in range, none twice, none replicated. */
int cr_job_manage_keys(cr_job *j, int table, int mode, const int64_t *repl, int64_t nrepl, const int64_t *reloc,
                       int64_t nreloc, cr_err *e);

/* Count accesses per key to table on every node (on = 1: fresh zeroed
 * sketches, one per worker; 0: stop and free), between commands
 * (docs/management.md, Counters). */
int cr_job_count(cr_job *j, int table, int on, cr_err *e);
/* Each node's counts of table since counting started, its workers'
 * sketches merged: fn(arg, node, bytes, n) once per node, in the order
 * they arrive (bytes in cr_sketch_write's format, valid during the call).
 * -1 with a message when counting is off. */
typedef int (*cr_job_counts_fn)(void *arg, int node, const void *bytes, size_t n, cr_err *e);
int cr_job_counts(cr_job *j, int table, cr_job_counts_fn fn, void *arg, cr_err *e);

#endif
