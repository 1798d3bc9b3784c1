#ifndef CR_NODE_CTL_H
#define CR_NODE_CTL_H
/* The node's answers to the scheduler's control messages: one small handler
 * per message type, found in a table by type. A handler gets the parts of
 * the node it works on (below), not the node: the control loop (cr_node.c)
 * fills this once it has joined and hands each message over.
 *
 * Main thread only. The parts are the node's (cr_node_impl.h), borrowed. */

#include "ps/cr_clocks.h"
#include "ps/cr_counters.h"
#include "ps/cr_dists.h"
#include "ps/cr_link.h"
#include "ps/cr_peers.h"
#include "ps/cr_pfilter.h"
#include "ps/cr_proto.h"
#include "ps/cr_replica.h"
#include "ps/cr_server.h"
#include "ps/cr_shards.h"

typedef struct cr_node_ctl {
    const cr_peers *peers;
    cr_link *link;         /* answers go up on it */
    cr_clocks *clk;        /* CLOCKS, SETCLOCKS, POLICY, MODEL, CALL, CANCEL */
    cr_shards *shards;     /* TABLE adds to it; rows, rates, techniques, counts */
    cr_dists *samp;        /* DIST, SAMPLING */
    cr_server *srv;        /* recalls before rows are read or techniques change */
    cr_replicas *replicas; /* MANAGE */
    cr_pfilter *filt;      /* STATS */
    cr_counters *cnt;      /* STATS */
    int rejoin;            /* set by a SHUTDOWN that asks the node to join the job's next run */
} cr_node_ctl;

/* Handle one message from the scheduler: answer it, or answer an ERROR if
 * it is malformed or unknown. Returns 1 when the node must shut down, else
 * 0 (a cr_link_handler, with c as its context). */
int cr_node_ctl_handle(void *c, cr_parts *p);

#endif
