#ifndef CR_CLOCKS_H
#define CR_CLOCKS_H
/* What a node's main thread tells its workers and what the workers wait
 * for: the current command (MODEL, CALL) and its cancellation, the clock
 * and barrier vectors of every worker of the job, the consistency policy's
 * source, and the node's stop. One mutex guards it all, with two condition
 * variables: cmd_cv (a new command, or stop) and clk_cv (clocks, policy,
 * command or cancel changed, or stop). Nothing else of the node is under
 * that mutex.
 *
 * Threads: cr_clocks_post, _cancel, _set_policy, _raise, _set and _stop are
 * the main thread's (the scheduler's messages); the cr_clocks_* functions
 * taking a local worker lw are that worker's thread's only. The node owns
 * it (cr_node_impl.h: n->clk); the worker API of cr_node.h reaches it. */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"
#include "ps/cr_cmd.h"
#include "ps/cr_proto.h"

typedef struct cr_clocks cr_clocks;

/* The state of node id of a job of `nodes` nodes with wpn workers each:
 * no command, clocks and barriers 0, no policy. Owned by the caller
 * (cr_clocks_destroy, once no worker uses it; NULLs *c, accepts NULL). */
cr_clocks *cr_clocks_new(int id, int nodes, int wpn);
void cr_clocks_destroy(cr_clocks **c);

/* ---------- main thread ---------- */

/* A new command for every worker (the payloads are copied), every worker of
 * the job active again. */
void cr_clocks_post(cr_clocks *c, int type, const void *p1, size_t n1, const void *p2, size_t n2);
/* Cancel the current command: waiting workers return CR_NODE_CANCELLED_MSG. */
void cr_clocks_cancel(cr_clocks *c);
/* A new policy (copied); workers load it at their next refresh. */
void cr_clocks_set_policy(cr_clocks *c, const cr_msg_script *s);
/* The scheduler's vectors (CLOCKS): clocks and barriers only go up (a late
 * vector must not undo a newer one); the active flags are taken. */
void cr_clocks_raise(cr_clocks *c, const cr_msg_clocks *m);
/* Between commands (SETCLOCKS, job:load): clocks and barriers set, the
 * local workers' own counts too. */
void cr_clocks_set(cr_clocks *c, const cr_msg_clocks *m);
/* The node stops: every wait ends now, and every later one at once. */
void cr_clocks_stop(cr_clocks *c);

/* Local worker lw's counts for STATS (read under the lock). */
typedef struct cr_clock_stat {
    int64_t clock, barrier, max_gap;
    double wait_s;
} cr_clock_stat;
void cr_clocks_stat(cr_clocks *c, int lw, cr_clock_stat *out);

/* ---------- worker lw's thread ---------- */

/* 1 once the node is stopping (one atomic load; any thread). */
int cr_clocks_stopping(const cr_clocks *c);
/* 1 if the command worker lw is running was cancelled (one atomic load). */
int cr_clocks_cancelled(cr_clocks *c, int lw);
/* Block until the next command for worker lw; -1 when the node stops. */
int cr_clocks_next_cmd(cr_clocks *c, int lw, cr_cmd *cmd);
/* Worker lw's current clock. */
int64_t cr_clocks_worker(cr_clocks *c, int lw);
/* cr_node_policy_refresh (cr_node.h): load() runs outside the lock, on copies. */
int cr_clocks_policy_refresh(cr_clocks *c, uint64_t *gen, cr_policy_load_fn load, void *arg);
/* Advance worker lw's clock (barrier = 0) or barrier count (1), record it
 * in the vector and fill *st with both counts (for the scheduler). Returns
 * the new value. */
int64_t cr_clocks_advance(cr_clocks *c, int lw, int barrier, cr_msg_state *st);
/* Wait at clock `mine` until decide() allows worker lw to proceed
 * (cr_node_clock, cr_node.h). 0, or -1 with a message in e. */
int cr_clocks_wait(cr_clocks *c, int lw, int64_t mine, cr_decide_fn decide, void *arg, cr_err *e);
/* Wait until every active worker has reached barrier `mine`. 0 or -1. */
int cr_clocks_barrier(cr_clocks *c, int lw, int64_t mine, cr_err *e);
/* cr_node_sleep (cr_node.h). */
int cr_clocks_sleep(cr_clocks *c, int lw, double seconds, cr_err *e);

#endif
