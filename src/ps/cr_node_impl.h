#ifndef CR_NODE_IMPL_H
#define CR_NODE_IMPL_H
/* Internals of cr_node shared by cr_node.c, cr_node_ctl.c and cr_wclient.c only. */

#include <pthread.h>
#include <stdatomic.h>

#include "base/cr_alias.h"
#include "net/cr_auth.h"
#include "net/cr_wire.h"
#include "ps/cr_dhdr.h"
#include "ps/cr_dir.h"
#include "ps/cr_node.h"
#include "ps/cr_pfilter.h"
#include "ps/cr_proto.h"
#include "ps/cr_replica.h"
#include "ps/cr_sampling.h"

#define CR_NODE_MAX_TABLES 256
#define CR_NODE_MAX_DISTS 256

/* A sampling distribution (DIST): alias tables over all keys of its table
 * and over this node's slice, built once, then read-only and shared by the
 * node's workers. local.m == 0 when the slice has no key of positive weight
 * (local_err says so; level 4 cannot sample here then). */
typedef struct cr_dist {
    char name[CR_DIST_NAME_MAX];
    int table;
    cr_alias pi, local;
    char local_err[CR_ERR_MAX];
} cr_dist;

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

typedef struct cr_wstat {
    int64_t clock, barrier;
    double wait_s;
    int64_t max_gap;
    int64_t pulls, pushes;
    uint64_t seen_cmd; /* last command generation taken by this worker */
    cr_sampling_stats samp; /* this worker's samplers, replaced ones included */
    /* accesses (keys) by cause, and served through shared memory (stats'
     * access.direct, .sampling, .local): written by this worker only, with
     * relaxed loads and stores (no locked instruction, no shared line) */
    _Atomic int64_t direct, sampling, shm;
} cr_wstat;

struct cr_node {
    cr_node_opts opts;
    void *zctx;
    int own_ctx;
    int id, nodes, wpn;
    uint64_t seed;
    char **addrs; /* data addresses of all nodes */
    char advertise[256];

    void *sched;   /* DEALER to the scheduler (main thread only) */
    void *data;    /* ROUTER for peers (server thread only) */
    void *srv_stop; /* PAIR, server thread side of the stop pipe */
    void *stop_tx;  /* PAIR, main thread side: one message ends the server thread */
    void *wstop;   /* PUB (main thread only): one message wakes every worker client's wait */
    char wstop_ep[64];
    void *up;      /* PULL from workers (main thread only) */
    void **wup;    /* per worker PUSH into up */
    char up_ep[64];
    cr_zap *zap;
    pthread_t server, *workers;
    int server_started, nstarted;
    atomic_int stop;

    pthread_mutex_t mu;     /* guards everything below */
    pthread_cond_t cmd_cv;  /* new command or stop */
    pthread_cond_t clk_cv;  /* clocks or policy changed or stop */
    uint64_t cmd_gen;
    _Atomic uint64_t cancel_gen; /* the command generation cancelled (0: none) */
    _Atomic uint64_t clk_gen; /* bumped on every clocks/policy change (under mu; read without it by a spinning waiter) */
    cr_cmd cmd;
    char *cmd_buf1, *cmd_buf2;
    int64_t *clocks, *barriers; /* per global worker, from the scheduler */
    int64_t *active;
    cr_wstat *ws; /* per local worker */
    uint64_t pol_gen;
    char *pol_src, *pol_chunk, *pol_opts;
    size_t pol_srcn, pol_optsn;

    cr_shard *tables[CR_NODE_MAX_TABLES];
    atomic_int ntables;
    cr_dist *dists[CR_NODE_MAX_DISTS]; /* added by the main thread, never removed */
    atomic_int ndists;
    /* a weighted DIST whose parts are arriving (main thread only): dpend_w
     * holds dpend_got of its dpend_n weights; NULL when none */
    char dpend_name[CR_DIST_NAME_MAX];
    int dpend_table;
    double *dpend_w;
    int64_t dpend_n, dpend_got;
    /* the sampling scheme (SAMPLING), under mu: nsamp = 0 is conform for all */
    uint64_t samp_gen;
    cr_sampling_entry *samp;
    int nsamp;
    char samp_label[CR_PROTO_MAX_NAME + 1];

    /* relocation, server thread only: DEALERs to the other nodes' servers
     * (NULL for this node), the transit queue, a recall in progress */
    void **fwd;
    cr_deferred *defq;
    int64_t ndef, capdef;
    int recall; /* table being recalled home for the main thread, or -1 */
    atomic_int reloc_broken; /* the server could not connect to its peers: relocation refused */

    atomic_llong progress;
    /* accesses by technique (keys): local (shared memory), remote (served
     * by the home), forwarded (the home sent them on to the holder);
     * relocations (rows) and the relocation protocol's messages and bytes */
    atomic_llong acc_local, acc_remote, acc_fwd, reloc_in, reloc_out, reloc_msgs, reloc_bytes, deferred, deferred_total;
    /* keys of a localize skipped because they are classic in a mixed table */
    atomic_llong reloc_skipped;
    atomic_llong msgs_remote, bytes_remote, msgs_local, bytes_local;
    atomic_llong keys_local, keys_remote, pulls, pushes, served;
    cr_replicas *replicas; /* hot keys replicated on every node (cr_replica.h); set before the server thread starts */
    cr_pfilter *filt;      /* traffic filters: counters, receiver key caches (cr_pfilter.h); set before the threads */
};

/* Body of the server thread (cr_serve.c): serves n->data until a message
 * arrives on n->srv_stop. Every request gets a reply (an error reply when it
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

/* Main thread: bring every key of table s home (through the server
 * thread), heartbeating while it waits. 0 at once when none is away. */
int cr_node_recall(cr_node *n, int table, cr_err *e);

/* Handle one message from the scheduler (src/ps/cr_node_ctl.c): answer it,
 * or answer an ERROR if it is malformed or unknown. Main thread only.
 * Returns 1 when the node must shut down, else 0. */
int cr_node_ctl_handle(cr_node *n, cr_parts *p);

#endif
