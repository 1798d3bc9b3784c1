#include "ps/cr_shards.h"

#include <string.h>

cr_shard *cr_shards_find(const cr_shards *s, const char *name) {
    int k = cr_shards_count(s);
    for (int i = 0; i < k; i++)
        if (!strcmp(s->t[i]->def.name, name)) return s->t[i];
    return NULL;
}

void cr_shards_add(cr_shards *s, cr_shard *sh) {
    s->t[cr_shards_count(s)] = sh;
    atomic_fetch_add(&s->n, 1);
}

void cr_shards_free(cr_shards *s) {
    for (int i = 0; i < cr_shards_count(s); i++) cr_shard_destroy(&s->t[i]);
}
