#ifndef CR_NODE_H
#define CR_NODE_H
/* The node runtime: one per process (or one thread of the scheduler process
 * in single-node mode). It registers with the scheduler, holds a shard of
 * every table, serves pull/push requests from other nodes (server thread),
 * and runs W worker threads whose body is supplied by the caller (the Lua
 * layer: src/lua/l_worker.c) through cr_node_hooks, so that this module does
 * not depend on Lua.
 *
 * Worker threads use the functions below; each worker index lw (0-based
 * local) must be used by exactly one thread. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"
#include "ps/cr_cmd.h"
#include "base/cr_curve.h"
#include "ps/cr_table.h"

typedef struct cr_node cr_node;

typedef struct cr_node_hooks {
    /* Body of local worker lw. Loops on cr_node_next_cmd until it returns -1,
     * answering each command with exactly one cr_node_reply. */
    void (*worker_main)(cr_node *n, int lw);
} cr_node_hooks;

typedef struct cr_node_opts {
    const char *scheduler; /* control endpoint of the scheduler */
    const char *bind;      /* data plane bind endpoint (NULL: tcp://127.0.0.1:*) */
    const char *advertise; /* address given to peers (NULL: the bound endpoint; "tcp://HOST:*": that host
                            * with the bound port) */
    void *zctx;            /* ZeroMQ context to share (in-process node), or NULL */
    int inproc;            /* 1: single-node mode, no data socket at all */
    double timeout;        /* seconds of scheduler silence before giving up (0: 3) */
    const cr_node_hooks *hooks;
    cr_curve curve;        /* cluster CURVE pair or per-job secret (base/cr_curve.h); on = 0: none */
    int rank;              /* rank given by a cluster launcher, told to the scheduler (0 here: none) */
    int has_rank;
    int *rejoin;           /* if set: 1 after a shutdown that asks the node to join the job's next run
                            * (crescent run --restarts under a launcher), else 0 */
} cr_node_opts;

/* Join the scheduler and serve until it says shutdown (returns 0) or it goes
 * silent / the connection fails (returns -1 with a message in e). Blocks.
 * Also -1 if a worker does not stop within 5 s at the end (stuck in C code):
 * then the node's memory and sockets are left in place for that thread, and
 * the caller must end the process. Never prints, never exits. */
int cr_node_run(const cr_node_opts *o, cr_err *e);

/* Block until the next command for worker lw; -1 when the node stops. */
int cr_node_next_cmd(cr_node *n, int lw, cr_cmd *c);
/* Answer the current command: ok = 1 with a serialized result, 0 with an
 * error message. Marks the worker idle (excluded from clock minima). */
void cr_node_reply(cr_node *n, int lw, int ok, const char *payload, size_t len);

int cr_node_id(const cr_node *n);
int cr_node_count(const cr_node *n);
int cr_node_workers_per_node(const cr_node *n);
uint64_t cr_node_seed(const cr_node *n);
/* 1 once the node is shutting down (long-running worker code should stop). */
int cr_node_stopping(const cr_node *n);

/* Tables known to the node, by name or index (NULL if none). Tables are only
 * added between worker commands, so a pointer stays valid during a command. */
cr_shard *cr_node_table(cr_node *n, const char *name);
cr_shard *cr_node_table_at(cr_node *n, int i, int *id);
int cr_node_table_count(cr_node *n);
/* The node's replicas of hot keys (ps/cr_replica.h); never NULL while workers run. */
struct cr_replicas *cr_node_replicas(cr_node *n);

/* The consistency policy is shipped as Lua source; the node only stores it.
 * A worker keeps the generation it loaded in *gen; if the node holds a newer
 * policy, load(arg, source, n, chunkname, serialized opts, optsn) is called
 * (outside the node's lock, with copies that live only during the call) and
 * on success *gen is updated. Returns load's result, or 0 if unchanged.
 * (cr_policy_load_fn, cr_decide_fn, cr_cmd: ps/cr_cmd.h.) */
int cr_node_policy_refresh(cr_node *n, uint64_t *gen, cr_policy_load_fn load, void *arg);

/* End of one clock tick for worker lw: report the new clock, then wait until
 * decide() allows it to proceed (re-asked whenever clocks or the policy
 * change). Records wait time and the clock gap at proceed time. Returns 0,
 * or -1 with a message (decide failed, node stopping). */
int cr_node_clock(cr_node *n, int lw, cr_decide_fn decide, void *arg, cr_err *e);
/* All active workers meet. Returns 0 or -1 if the node stops. */
int cr_node_barrier(cr_node *n, int lw, cr_err *e);
/* Sleep up to `seconds` on worker lw's thread (a timed condition wait, no
 * polling). Returns 0 after the full time, or -1 at once with
 * CR_NODE_CANCELLED_MSG (the command was cancelled) or "node stopping" in e. */
int cr_node_sleep(cr_node *n, int lw, double seconds, cr_err *e);
/* Current clock of local worker lw. */
int64_t cr_node_worker_clock(cr_node *n, int lw);
/* Add processed items for the scheduler's progress bar (cheap, atomic). */
void cr_node_progress(cr_node *n, int64_t items);
/* 1 if the command local worker lw is running was cancelled (CR_M_CANCEL:
 * another worker failed, or the user interrupted the wait at the REPL).
 * Cheap (one atomic load). cr_node_clock and cr_node_barrier then return -1
 * with CR_NODE_CANCELLED_MSG in e; model code should stop (the bindings raise). */
int cr_node_cancelled(cr_node *n, int lw);

#endif
