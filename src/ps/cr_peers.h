#ifndef CR_PEERS_H
#define CR_PEERS_H
/* Who this node is in the job and how it reaches the others: its id, the
 * job's shape, the job's seed, every node's data address, and the ZeroMQ
 * context and CURVE keys to connect with. Filled once by the main thread
 * from the scheduler's WELCOME (cr_link_join), before any other thread
 * starts; read-only afterwards, so every thread reads it without a lock.
 * Part of the node (cr_node_impl.h); the worker client, the server, the
 * replicas and relocation each keep a pointer to it. */

#include <stdint.h>

#include "base/cr_curve.h"
#include "ps/cr_proto.h"

typedef struct cr_peers {
    int id, nodes, wpn;    /* this node, the nodes of the job, workers per node */
    uint64_t seed;         /* the job's seed */
    char **addrs;          /* data address of every node (owned) */
    void *zctx;            /* the node's ZeroMQ context (not owned) */
    const cr_curve *curve; /* the job's CURVE keys (the node's options; on = 0: none) */
} cr_peers;

/* Take a decoded WELCOME: id, job size, seed and the address book (copied:
 * w points into frames that are closed afterwards). */
void cr_peers_take(cr_peers *p, const cr_msg_welcome *w);
/* Free the address book (the rest is not owned); accepts an empty p. */
void cr_peers_free(cr_peers *p);

/* Global id of local worker lw; all workers of the job. */
static inline int cr_peers_gw(const cr_peers *p, int lw) { return p->id * p->wpn + lw; }
static inline int cr_peers_workers(const cr_peers *p) { return p->nodes * p->wpn; }

#endif
