#ifndef CR_REPLICA_H
#define CR_REPLICA_H
/* Replication of hot keys (NuPS section 3.2; docs/management.md,
 * "Replication").
 *
 * Chosen keys of a table have a replica on every node. Workers read and
 * update their node's replica through shared memory (striped locks, never
 * waiting for the network). Each node applies the table's rule (sgd,
 * adagrad, add) to its own replica at once, so a worker reads its own
 * writes, and accumulates the change it made (the value delta, and for
 * adagrad the delta of the squared-gradient sum too). A background thread
 * per node merges the accumulated deltas of all nodes every sync_ms with a
 * sparse all-reduce (recursive doubling; a pairwise exchange on 2 nodes; any
 * node count). After round r, every node's replica holds every node's
 * updates made before that node's snapshot of round r; replicas of all
 * nodes are bitwise equal once no worker updates them. The rule "assign"
 * cannot be replicated (concurrent assignments do not merge). An i32 table
 * (ps/cr_table.h) keeps int32 counts in the same arrays: its values, deltas
 * and sums are added as int32 (exact), every float path left as it was.
 *
 * Home rows: while a key is replicated, its owner (static range placement,
 * cr_shard_owner) writes the agreed value (and optimizer state) into its
 * shard after each round that changed it, so the home row lags the replicas
 * by a few rounds (cr_replicas_settle: exact, once workers are idle). A key must be
 * at its home node (not relocated) when it becomes replicated: the install
 * reads the home shards.
 *
 * Sync messages go from a DEALER per peer, owned by the sync thread, to the
 * peer's data ROUTER; the peer's server thread hands them to
 * cr_replicas_deliver (type CR_D_SYNC in frame 1). With nothing replicated
 * the sync thread sends nothing.
 *
 * Thread safety:
 *   cr_replicas_has, _count: lock-free reads; any thread.
 *   cr_replicas_pull, _push: any worker thread, concurrently (a stripe lock
 *     per row; the sync thread holds a stripe only while it moves that
 *     stripe's changed rows in or out, never across network waits).
 *   cr_replicas_stats, _round, _set_sync_ms, _settle: any thread.
 *   cr_replicas_deliver: the node's server thread (copies, never blocks).
 *   cr_replicas_set: collective (every node calls it with the same keys, in
 *     the same order of tables) from one thread per node, while no worker
 *     of any node uses the table (between commands): it swaps the set that
 *     has/pull/push read. Blocks until the change is done on this node
 *     (three rounds once every node has called it). Every node must call
 *     it, or none: check anything that could refuse the change first (a
 *     node that never calls it makes the others fail after 30 s). Its own
 *     checks (table, keys, rule) give the same answer on every node.
 *   cr_replicas_new/_destroy: the node's main thread (setup / teardown,
 *     after the server thread has stopped). */

#include <stdint.h>

#include "base/cr_err.h"
#include "net/cr_wire.h"
#include "ps/cr_dhdr.h"
#include "ps/cr_peers.h"
#include "ps/cr_shards.h"

typedef struct cr_replicas cr_replicas;

#define CR_REPLICA_SYNC_MS 40 /* default period of the sync thread */

/* Counters of one node (job:stats). All monotonic except keys and sync_ms. */
typedef struct cr_replica_stats {
    int64_t keys;                 /* keys replicated now, all tables */
    int64_t reads, updates;       /* keys read / updated through this node's replicas */
    int64_t syncs;                /* sync rounds completed (incl. those of set changes) */
    int64_t msgs_sent, msgs_recv; /* sync messages */
    int64_t bytes_sent, bytes_recv; /* sync bytes (headers included) */
    int64_t dropped;              /* malformed or unexpected sync messages dropped */
    int64_t sync_ms;              /* current period */
    double round_max_s;           /* longest all-reduce round so far (seconds) */
    double gap_max_s;             /* longest time between the starts of two consecutive timed rounds
                                   * (sync_ms, unless the machine is too busy to keep the period) */
} cr_replica_stats;

/* Replicas of the node that peers describes (its id, node count, address
 * book, keys), over its tables (shards: the node's, borrowed, read from
 * the sync thread and the callers' threads) and its sync thread, started
 * here with period sync_ms (<= 0: CR_REPLICA_SYNC_MS). NULL with a message
 * if the thread or sockets cannot be made. */
cr_replicas *cr_replicas_new(const cr_peers *peers, cr_shards *shards, int sync_ms, cr_err *e);
/* Stop the sync thread, close its sockets, free; NULLs *r, accepts NULL.
 * Replica values not yet synced are lost: call cr_replicas_set(.., 0 keys)
 * first to keep them in the home shards. */
void cr_replicas_destroy(cr_replicas **r);

/* Make keys[0..n) the replicated keys of table `table` (replacing its
 * previous set; n = 0: none). Collective, see above. Steps: a final sync
 * of the old set (all nodes' updates merged), its values are written to
 * the home shards, then the new set starts from the home values (each
 * owner contributes its rows). Duplicate keys are allowed (kept once).
 * -1 with a message, nothing changed, on bad input (no such table, a key
 * out of [0, keys) named with its position, the rule "assign"), if the
 * nodes disagree on the keys, or if a peer does not answer within 30 s. */
int cr_replicas_set(cr_replicas *r, int table, const int64_t *keys, int64_t n, cr_err *e);

/* Wait until the updates made before the call are in every replica and in
 * their home rows, provided no worker of any node updates replicas any
 * more (between commands): three more rounds of this node (rounds on
 * different nodes are at most one apart; the owner writes home before it
 * joins the next round). For GETROWS and checkpoints that must see exact
 * values. 0 at once if nothing is replicated; -1 with a message if the
 * rounds stop (a change pending, a dead peer: after 30 s) or the node
 * stops. Any thread but the sync thread; not collective. */
int cr_replicas_settle(cr_replicas *r, cr_err *e);

/* 1 if key is replicated in table (O(1) expected, lock-free), else 0. */
int cr_replicas_has(const cr_replicas *r, int table, int64_t key);
/* Number of replicated keys of table (0 if none). */
int64_t cr_replicas_count(const cr_replicas *r, int table);

/* Copy the replica rows of keys (all replicated) into out (n * dim floats,
 * rows in key order). -1 with a message naming the first key that is not
 * replicated (nothing copied after it). */
int cr_replicas_pull(cr_replicas *r, int table, const int64_t *keys, int64_t n, float *out, cr_err *e);
/* Apply updates g (n * dim floats) to the replicas of keys (all
 * replicated) with the table's rule and accumulate them for the next sync.
 * Refused whole (-1, nothing applied) if a key is not replicated or g
 * holds a NaN or an infinity. */
int cr_replicas_push(cr_replicas *r, int table, const int64_t *keys, int64_t n, const float *g, cr_err *e);

void cr_replicas_stats(const cr_replicas *r, cr_replica_stats *out);
/* Append the counters to a STATS answer as Lua table text:
 * ",replica={keys=..,reads=..,updates=..,syncs=..,msgs_sent=..,msgs_recv=..,
 * bytes_sent=..,bytes_recv=..,dropped=..,sync_ms=..,round_max_s=..,gap_max_s=..}".
 * Returns what snprintf returns (the length it needed). */
int cr_replicas_stats_put(const cr_replica_stats *t, char *b, size_t cap);
/* Sync rounds this node has completed (a reader that saw round c sees
 * every update another node made before its snapshot of round c - 1). */
int64_t cr_replicas_round(const cr_replicas *r);
/* Change the sync period (ms >= 1), effective from the next round. */
void cr_replicas_set_sync_ms(cr_replicas *r, int ms);

/* Sync messages are data-plane messages of type CR_D_SYNC (ps/cr_dhdr.h:
 * frame 1 is a cr_dhdr of that type; the sender's routing id in frame 0). */
/* Take one sync message received on the data ROUTER (server thread): it is
 * checked and copied into the sync thread's inbox; malformed ones are
 * counted in `dropped`. Never blocks for long, never replies. */
void cr_replicas_deliver(cr_replicas *r, cr_parts *p);

#endif
