#ifndef CR_NODE_IMPL_H
#define CR_NODE_IMPL_H
/* The node as its threads' code sees it: cr_node.c (setup, teardown, the
 * worker API), the server thread (cr_serve.c, cr_serve_reloc.c), the worker
 * client and sampler (cr_wclient.c, cr_wsample.c). The control handlers
 * (cr_node_ctl.h) get the parts they need instead. */

#include <pthread.h>

#include "net/cr_auth.h"
#include "net/cr_wire.h"
#include "ps/cr_clocks.h"
#include "ps/cr_counters.h"
#include "ps/cr_dhdr.h"
#include "ps/cr_dir.h"
#include "ps/cr_dists.h"
#include "ps/cr_link.h"
#include "ps/cr_node.h"
#include "ps/cr_peers.h"
#include "ps/cr_pfilter.h"
#include "ps/cr_proto.h"
#include "ps/cr_replica.h"
#include "ps/cr_sampling.h"
#include "ps/cr_server.h"
#include "ps/cr_shards.h"

/* A node is a composition of one module per concern, each with its own
 * state, lock (where it needs one) and thread rules, stated in its header:
 * nothing is guarded by a lock of the node as a whole. */
struct cr_node {
    cr_node_opts opts;
    int own_ctx;           /* the ZeroMQ context (peers.zctx) is ours to end */
    char advertise[256];   /* the data address given to the scheduler */
    cr_peers peers;        /* who we are, the job, the address book: read-only once joined */
    cr_link link;          /* the scheduler, the workers' channel up, the control loop (main thread) */
    cr_clocks *clk;        /* commands, clocks, policy and the node's stop */
    cr_server srv;         /* the server thread, its data socket, relocation state */
    cr_shards shards;      /* the shard of every table */
    cr_dists samp;         /* sampling distributions and scheme */
    cr_counters cnt;       /* traffic and access counters (atomics) */
    cr_replicas *replicas; /* hot keys replicated on every node (cr_replica.h); set before the server thread starts */
    cr_pfilter *filt;      /* traffic filters: counters, receiver key caches (cr_pfilter.h); set before the threads */
    cr_zap *zap;           /* the data socket's authentication */
    void *wstop;           /* PUB (main thread only): one message wakes every worker client's wait */
    char wstop_ep[64];
    pthread_t *workers;
    int nstarted;
};

/* Body of the server thread (cr_serve.c): serves n->srv.data until a
 * message arrives on n->srv.srv_stop. Every request gets a reply (an error reply when it
 * is refused). */
void *cr_serve_main(void *arg);

/* Relocation on the server thread (cr_serve_reloc.c). serve: take data
 * message p (frame 0: the sender's routing id) if it is part of the
 * relocation protocol or a request to a relocating table: 1 (taken and
 * answered), 0 (not one: serve it classically). start/stop: the DEALERs to
 * the other servers. recall: bring every key of table home; the server
 * says "D" on its stop pipe once none is away. */
int cr_reloc_serve(cr_node *n, cr_parts *p);
/* A worker's pull (g NULL) or push at this home, keys and gradient checked. */
void cr_reloc_home(cr_node *n, cr_shard *s, int table, const cr_dhdr *h, const int64_t *keys, const float *g);
int cr_reloc_start(cr_node *n);
void cr_reloc_stop(cr_node *n);
void cr_reloc_recall(cr_node *n, int table);

#endif
