#ifndef CR_SHARDS_H
#define CR_SHARDS_H
/* The node's shard of every table, by table id (the order of the
 * scheduler's TABLE messages). Shards are added by the main thread only,
 * between worker commands, and never removed before the node ends: a shard
 * found here stays valid during a command. Readers on any thread (workers,
 * server, replica sync) take no lock: the count goes up only after the
 * shard is stored. Part of the node (cr_node_impl.h), which owns the shards. */

#include <stdatomic.h>
#include <stddef.h>

#include "ps/cr_table.h"

#define CR_NODE_MAX_TABLES 256

typedef struct cr_shards {
    cr_shard *t[CR_NODE_MAX_TABLES];
    atomic_int n;
} cr_shards;

static inline int cr_shards_count(const cr_shards *s) { return atomic_load(&((cr_shards *)s)->n); }

/* The shard of table id, or NULL when there is none. */
static inline cr_shard *cr_shards_at(const cr_shards *s, int id) {
    return id >= 0 && id < cr_shards_count(s) ? s->t[id] : NULL;
}

/* The id of shard sh, or -1 when it is not one of these. */
static inline int cr_shards_id(const cr_shards *s, const cr_shard *sh) {
    int k = cr_shards_count(s);
    for (int i = 0; i < k; i++)
        if (s->t[i] == sh) return i;
    return -1;
}

/* The shard of the table named name, or NULL. */
cr_shard *cr_shards_find(const cr_shards *s, const char *name);
/* Store sh (owned from now on) as the next table: the caller has checked
 * that there is room (count < CR_NODE_MAX_TABLES). */
void cr_shards_add(cr_shards *s, cr_shard *sh);
/* Destroy every shard (the node's end, after its threads). */
void cr_shards_free(cr_shards *s);

#endif
