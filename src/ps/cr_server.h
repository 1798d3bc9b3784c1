#ifndef CR_SERVER_H
#define CR_SERVER_H
/* A node's server thread as the rest of the node sees it: the data ROUTER
 * it serves, the thread, the stop pipe it polls with the ROUTER (as CZMQ's
 * actors do), and the relocation state only that thread touches (the
 * DEALERs to the other servers, the transit queue, a recall in progress).
 * What the thread does with a message is cr_serve.c's and
 * cr_serve_reloc.c's (declared in cr_node_impl.h).
 *
 * Threads: cr_server_pipe, _start, _stop, _recall and _close are the main
 * thread's; fwd, defq, ndef, capdef and recall are the server thread's
 * only; reloc_broken is written by the server thread and read by the main
 * thread (atomic). Part of the node (cr_node_impl.h: n->srv), which owns it. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/cr_err.h"
#include "ps/cr_link.h"
#include "ps/cr_shards.h"

/* A request on a key that is on its way to this node (Lapse's transit
 * queue, server thread only): applied, in arrival order, when the row
 * arrives. op: CR_D_PULL, CR_D_PUSH or CR_D_GIVE. */
typedef struct cr_deferred {
    int64_t key;
    uint16_t table;
    uint8_t op;
    int32_t gw, part, idx, to; /* reply to worker gw (request req, part, position idx); GIVE: to node `to` */
    uint32_t req;
    float *row; /* PUSH: the gradient row (owned) */
} cr_deferred;

typedef struct cr_server {
    void *data;     /* ROUTER for peers (server thread only once started; NULL in single-node mode) */
    void *srv_stop; /* PAIR, server thread side of the stop pipe */
    void *stop_tx;  /* PAIR, main thread side: one message ends the server thread */
    pthread_t thread;
    int started;
    /* relocation, server thread only: DEALERs to the other nodes' servers
     * (NULL for this node), the transit queue, a recall in progress */
    void **fwd;
    cr_deferred *defq;
    int64_t ndef, capdef;
    int recall; /* table being recalled home for the main thread, or -1 */
    atomic_int reloc_broken; /* the server could not connect to its peers: relocation refused */
} cr_server;

/* The stop pipe, in zmq context zctx. 0 or -1 with a message. */
int cr_server_pipe(cr_server *s, void *zctx, cr_err *e);
/* Start the thread: body(arg) until a message arrives on srv_stop. 0 or -1. */
int cr_server_start(cr_server *s, void *(*body)(void *), void *arg, cr_err *e);
/* End the thread (if started) and wait for it. */
void cr_server_stop(cr_server *s);
/* Close the sockets (after cr_server_stop). */
void cr_server_close(cr_server *s);

/* Main thread: bring every key of table `table` (shard sh) home through the
 * server thread, heartbeating on link while it waits (up to 60 s). 0 at
 * once when none is away or there is no server thread; -1 with a message. */
int cr_server_recall(cr_server *s, int table, const cr_shard *sh, cr_link *link, cr_err *e);

#endif
