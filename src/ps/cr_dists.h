#ifndef CR_DISTS_H
#define CR_DISTS_H
/* A node's sampling state (docs/sampling.md): the distributions the
 * scheduler sent (DIST), the one whose weights are still arriving, the
 * sampling scheme (SAMPLING) and each local worker's sampling counters.
 *
 * Threads and locks: distributions are added by the main thread only and
 * never removed before the node ends; readers on worker threads take no
 * lock (the count goes up only after the distribution is stored, and a
 * stored one is read-only). The pending distribution is the main thread's
 * only. The scheme, its generation and the workers' counters are under mu.
 * Part of the node (cr_node_impl.h: n->samp), which owns it. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/cr_alias.h"
#include "base/cr_err.h"
#include "ps/cr_proto.h"
#include "ps/cr_sampling.h"

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

typedef struct cr_dists {
    cr_dist *d[CR_NODE_MAX_DISTS];
    atomic_int n;
    /* a weighted DIST whose parts are arriving (main thread only): pend_w
     * holds pend_got of its pend_n weights; NULL when none */
    char pend_name[CR_DIST_NAME_MAX];
    int pend_table;
    double *pend_w;
    int64_t pend_n, pend_got;

    pthread_mutex_t mu; /* guards the rest */
    /* the sampling scheme (SAMPLING): nscheme = 0 is conform for all */
    uint64_t gen;
    cr_sampling_entry *scheme;
    int nscheme;
    char label[CR_PROTO_MAX_NAME + 1];
    cr_sampling_stats *ws; /* per local worker: its samplers, replaced ones included */
    int nw;
} cr_dists;

/* Empty state for wpn local workers; cr_dists_free releases it (after the
 * workers). */
void cr_dists_init(cr_dists *s, int wpn);
void cr_dists_free(cr_dists *s);

static inline int cr_dists_count(const cr_dists *s) { return atomic_load(&((cr_dists *)s)->n); }
/* The distribution named by the len bytes at name, or NULL. */
cr_dist *cr_dists_find(const cr_dists *s, const char *name, size_t len);
/* Store x (owned from now on) as the next distribution: the caller has
 * checked there is room (count < CR_NODE_MAX_DISTS). Main thread. */
void cr_dists_add(cr_dists *s, cr_dist *x);

/* A new scheme (v: count entries, owned from now on), label as given. */
void cr_dists_set_scheme(cr_dists *s, cr_sampling_entry *v, int count, const char *label, size_t labeln);
/* The scheme's generation (a worker rebuilds its samplers when it moved). */
uint64_t cr_dists_gen(cr_dists *s);
/* The entry for distribution dname of table tname (its own, else its
 * table's, else entry 0) copied to *out: 1, or 0 when the scheme is empty
 * (conform). *gen: the generation it belongs to. */
int cr_dists_entry(cr_dists *s, const char *dname, const char *tname, cr_sampling_entry *out, uint64_t *gen);

/* Local worker lw's sampling counters: set (by that worker), read (stats). */
void cr_dists_set_stats(cr_dists *s, int lw, const cr_sampling_stats *st);
void cr_dists_stats(cr_dists *s, int lw, cr_sampling_stats *out);

#endif
