#ifndef CR_SCHED_H
#define CR_SCHED_H
/* The scheduler runtime: control plane only (membership, address book,
 * clocks, heartbeats, failure detection). It never touches parameters.
 *
 * cr_sched_start binds a ROUTER, starts the nodes (fork+exec of
 * /proc/self/exe "node --scheduler ENDPOINT" with PR_SET_PDEATHSIG, or one
 * in-process node thread when nodes == 1), waits until all N registered and
 * sends them the address book. A background thread then answers heartbeats,
 * keeps every worker's clock, broadcasts clock vectors, and watches for dead
 * nodes. The caller (the job, on one thread) sends commands with
 * cr_sched_send and reads node answers with cr_sched_recv. */

#include <stdint.h>

#include "base/cr_err.h"
#include "net/cr_auth.h"
#include "net/cr_wire.h"
#include "ps/cr_node.h"
#include "ps/cr_proto.h"

typedef struct cr_sched cr_sched;

typedef struct cr_sched_opts {
    int nodes, workers;        /* nodes >= 1, workers per node >= 0 */
    uint64_t seed;
    const char *listen;        /* endpoint to bind (NULL: tcp://127.0.0.1:*) */
    int spawn;                 /* 1: start the node processes; 0: wait for external ones */
    int local_nodes;           /* spawn = 0: start this many of the nodes here all the same (a
                                * launcher's rank 0 hosts one; the others join from their hosts) */
    const char *exe;           /* binary to start as a node (NULL: /proc/self/exe) */
    const cr_node_hooks *hooks; /* worker body for the in-process node (nodes == 1) */
    /* A node's death reaches the caller as CR_M_DEAD (cr_sched_recv returns
     * -1). With exit_on_death = 1 the scheduler thread first shuts the other
     * nodes down and reaps the spawned ones; then on_death (if set) is called
     * on that thread with the message, even while the caller is not waiting
     * (e.g. idle at the REPL): the caller decides there to print and end the
     * process. It is also called from cr_sched_close when the in-process
     * node (nodes = 1) could not stop a worker stuck in C code. The core
     * itself never prints or exits. */
    int exit_on_death;
    void (*on_death)(const char *msg, void *arg);
    void *on_death_arg;
    double timeout;            /* node silence that counts as death (0: 3 s) */
    double join_timeout;       /* seconds to wait for registrations (0: 30) */
    int min_nodes;             /* > 0: after join_timeout, go on with the nodes that joined if at least
                                * this many (a job restarted under a launcher without a lost rank) */
    /* Called once the control endpoint is bound, before waiting for nodes
     * (e.g. to start node threads in tests); may be NULL. */
    void (*on_listen)(const char *endpoint, void *arg);
    void *on_listen_arg;
    /* Called once, when nodes are to be started by hand (spawn = 0, no
     * on_listen), with the endpoint they must connect to; may be NULL. */
    void (*on_wait)(const char *endpoint, int nodes, void *arg);
    void *on_wait_arg;
    /* Who may join. curve.on: the cluster key pair (CRESCENT_CURVE_*),
     * required for nodes started by hand, and for any bind off loopback.
     * Without it, spawned nodes get a secret made for this job alone
     * (PLAIN on loopback; passed in their environment, never on the command
     * line), so that no other local process can register or reach their
     * data sockets; nodes
     * started by on_listen in this process need none; nodes = 1 with spawn
     * runs in-process and uses no sockets off the process at all. */
    cr_curve curve;
} cr_sched_opts;

/* Start; returns NULL with a message on failure (nothing left running). */
cr_sched *cr_sched_start(const cr_sched_opts *o, cr_err *e);

/* Endpoint nodes connect to (e.g. "tcp://127.0.0.1:40123"). */
const char *cr_sched_endpoint(const cr_sched *s);
int cr_sched_nodes(const cr_sched *s);
int cr_sched_workers(const cr_sched *s); /* per node */

/* Send an encoded message (src/ps/cr_proto.h) to node `node` (-1: every
 * node). Payloads are copied: m may be freed after. A CALL or MODEL marks
 * every worker active. Returns 0 or -1 with a message. */
int cr_sched_send(cr_sched *s, int node, const cr_proto_msg *m, cr_err *e);

/* Next answer from a node (REPLY, ERROR, ACK, ROWS, PROGRESS). Blocks up to
 * timeout_ms (-1: forever); returns 1 with the frames in p (caller closes
 * them) and m viewing them (decode with the cr_proto_decode_* of its type),
 * 0 on timeout, -1 if a node died (message in e; the job cannot continue).
 * Messages reach the caller only after the scheduler thread checked them. */
int cr_sched_recv(cr_sched *s, cr_parts *p, cr_proto_msg *m, long timeout_ms, cr_err *e);

/* 1 once a node has died (the job cannot continue). Any thread. */
int cr_sched_failed(const cr_sched *s);

/* Shut every node down, reap children (SIGKILL after 3 s), free s. */
void cr_sched_close(cr_sched **s);
/* The same, telling launcher-started nodes to join the job's next run. */
void cr_sched_close_rejoin(cr_sched **s, int rejoin);

#endif
