#ifndef CR_COUNTERS_H
#define CR_COUNTERS_H
/* The node's traffic and access counters (job:stats). Each is added to where
 * the thing it counts happens (the worker client, the server, relocation)
 * with one atomic add and no lock, and read whole (one atomic load each) by
 * the main thread for STATS. A local worker's own counters are written by
 * that worker only. Part of the node (cr_node_impl.h). */

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* One local worker's counters: pulls and pushes it made, and its accesses
 * (keys) by cause and those served through shared memory (stats'
 * access.direct, .sampling, .local). Written by that worker only, the
 * accesses with relaxed loads and stores (no locked instruction); each
 * worker's on a cache line of its own, so that no two workers share one. */
typedef struct cr_wcounters {
    _Alignas(64) int64_t pulls, pushes;
    _Atomic int64_t direct, sampling, shm;
} cr_wcounters;

typedef struct cr_counters {
    /* data-plane messages and bytes (sent and served), keys served here
     * through shared memory or asked of other nodes, operations */
    atomic_llong msgs_remote, bytes_remote, msgs_local, bytes_local;
    atomic_llong keys_local, keys_remote, pulls, pushes, served;
    /* accesses by technique (keys): local (shared memory), remote (served
     * by the home), forwarded (the home sent them on to the holder);
     * relocations (rows) and the relocation protocol's messages and bytes,
     * requests waiting in transit (now and in all) */
    atomic_llong acc_local, acc_remote, acc_fwd, reloc_in, reloc_out, reloc_msgs, reloc_bytes, deferred, deferred_total;
    /* keys of a localize skipped because they are classic in a mixed table */
    atomic_llong reloc_skipped;
    int nw;
    cr_wcounters *w; /* per local worker (owned) */
} cr_counters;

/* Zeroed counters for wpn local workers; cr_counters_free releases them. */
void cr_counters_init(cr_counters *c, int wpn);
void cr_counters_free(cr_counters *c);

/* STATS text, appended to b (cap bytes); each returns the length added.
 * "messages_remote=...,served=N": the node's traffic. */
size_t cr_counters_put_traffic(const cr_counters *c, char *b, size_t cap);
/* ",pulls=N,pushes=N" of local worker lw. */
size_t cr_counters_put_worker(const cr_counters *c, int lw, char *b, size_t cap);
/* ",access={...},relocation={...}": accesses by technique and the
 * relocation protocol's traffic; held and away: the tables' rows held here
 * for other homes and this node's rows away (their directories). */
size_t cr_counters_put_access(const cr_counters *c, long long held, long long away, char *b, size_t cap);

#endif
