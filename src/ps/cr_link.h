#ifndef CR_LINK_H
#define CR_LINK_H
/* The node's control loop and its link to the scheduler: the DEALER it
 * talks on, the join (REGISTER, then wait for the WELCOME), everything the
 * node sends as itself (answers, ACK, ERROR, heartbeats, progress), the
 * channel on which its workers' messages go up (each worker a PUSH, the
 * main thread the PULL that forwards them as they are), and the loop that
 * ties them together: scheduler messages handed to a handler, heartbeats,
 * progress reports, and the scheduler's silence deadline.
 *
 * Main thread only, except cr_link_send_worker (worker lw's thread, its
 * own PUSH) and cr_link_progress (any worker). Part of the node
 * (cr_node_impl.h: n->link); what happens to a message is the handler's
 * (cr_node_ctl.h). */

#include <stdatomic.h>
#include <stdint.h>

#include "base/cr_err.h"
#include "net/cr_auth.h"
#include "net/cr_wire.h"
#include "ps/cr_peers.h"
#include "ps/cr_proto.h"

typedef struct cr_link {
    void *sched;           /* DEALER to the scheduler */
    const char *endpoint;  /* its control endpoint (the node's options) */
    int inproc;            /* single-node mode: no CURVE on the link */
    int curve_on;          /* the job has CURVE keys (for the join's error) */
    int id;                /* this node's id, stamped on what it sends (set by the join) */
    void *up;              /* PULL: the workers' messages */
    void **wup;            /* per local worker: PUSH into up */
    int nw;
    char up_ep[64];
    atomic_llong progress; /* items the workers processed, not yet reported */
} cr_link;

/* Connect l (zeroed by the caller) to the scheduler at endpoint: over CURVE
 * (keys curve) unless inproc. 0, or -1 with a message (teardown with
 * cr_link_close either way). */
int cr_link_connect(cr_link *l, void *zctx, const char *endpoint, int inproc, const cr_curve *curve, cr_err *e);
/* REGISTER (this process, data address advertise) and wait up to 30 s for
 * the WELCOME, taken into p (cr_peers_take). 0, or -1 with a message (the
 * scheduler gave up, its WELCOME is malformed, or no answer in time). */
int cr_link_join(cr_link *l, const char *advertise, int rank, cr_peers *p, cr_err *e);
/* The workers' channel up, for wpn local workers. 0 or -1 with a message. */
int cr_link_open_up(cr_link *l, void *zctx, int wpn, cr_err *e);
/* Close every socket (accepts a link never connected). */
void cr_link_close(cr_link *l);

/* Send m (its payloads copied) to the scheduler as this node. */
void cr_link_send(cr_link *l, cr_proto_msg *m);
void cr_link_ack(cr_link *l);
void cr_link_error(cr_link *l, const char *msg);
/* A heartbeat: a long wait of the main thread is not silence. */
void cr_link_beat(cr_link *l);
/* Worker lw's message to the scheduler (through the main thread). */
void cr_link_send_worker(cr_link *l, int lw, cr_proto_msg *m);
/* Count items for the scheduler's progress bar (cheap, atomic). */
static inline void cr_link_progress(cr_link *l, int64_t items) { atomic_fetch_add(&l->progress, items); }

/* A scheduler message for the loop's handler: 1 to shut down, else 0. */
typedef int (*cr_link_handler)(void *ctx, cr_parts *p);

/* The loop: scheduler messages to h(ctx, ...), workers' messages up,
 * heartbeats and progress, until h says shut down (returns 0) or the
 * scheduler is silent for timeout seconds (-1 with a message). */
int cr_link_run(cr_link *l, double timeout, cr_link_handler h, void *ctx, cr_err *e);

#endif
