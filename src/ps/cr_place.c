#include "ps/cr_place.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

const char *cr_place_kind_name(int kind) {
    return kind == CR_PLACE_RANGE ? "range" : kind == CR_PLACE_HASH ? "hash" : kind == CR_PLACE_FILE ? "file" : "?";
}

static int64_t range_block(int64_t keys, int nodes) {
    int64_t b = (keys + nodes - 1) / nodes;
    return b > 0 ? b : 1;
}

/* Node of key k under p's kind (owner: the file's). */
static inline int64_t node_of(const cr_place *p, const uint32_t *owner, int64_t k) {
    return p->kind == CR_PLACE_HASH ? (int64_t)(cr_place_mix((uint64_t)k) % (uint64_t)p->nodes) : (int64_t)owner[k];
}

/* The id arrays of a hash or file placement. */
static int number(cr_place *p, const uint32_t *owner, const char *what, cr_err *e) {
    for (int64_t k = 0; k < p->keys; k++) {
        int64_t o = node_of(p, owner, k);
        if (o < 0 || o >= p->nodes)
            return cr_errf(e, "%s: key %lld placed on node %lld of %d", what, (long long)k, (long long)o, p->nodes);
        p->cnt[o]++;
    }
    p->block = 1;
    for (int n = 0; n < p->nodes; n++)
        if (p->cnt[n] > p->block) p->block = p->cnt[n];
    size_t ids = (size_t)p->nodes * (size_t)p->block;
    /* checked, not cr_x*: sizes are the user's table */
    p->to_int = malloc((size_t)p->keys * sizeof *p->to_int);
    p->to_user = malloc(ids * sizeof *p->to_user);
    if (!p->to_int || !p->to_user)
        return cr_errf(e, "%s: out of memory for the placement of %lld keys", what, (long long)p->keys);
    memset(p->to_user, 0xff, ids * sizeof *p->to_user); /* -1: a gap */
    int64_t *fill = cr_xcalloc((size_t)p->nodes, sizeof *fill);
    for (int64_t k = 0; k < p->keys; k++) {
        int64_t o = node_of(p, owner, k), id = o * p->block + fill[o]++;
        p->to_int[k] = id;
        p->to_user[id] = k;
    }
    free(fill);
    return 0;
}

cr_place *cr_place_new(int64_t keys, int nodes, int kind, const uint32_t *owner, const char *what, cr_err *e) {
    if (keys <= 0 || nodes <= 0) return cr_errf(e, "%s: placement of %lld keys on %d nodes", what, (long long)keys, nodes), NULL;
    if (kind == CR_PLACE_FILE && !owner) return cr_errf(e, "%s: a file placement needs its key-to-node map", what), NULL;
    if (kind != CR_PLACE_RANGE && kind != CR_PLACE_HASH && kind != CR_PLACE_FILE)
        return cr_errf(e, "%s: unknown placement kind %d", what, kind), NULL;
    cr_place *p = cr_xcalloc(1, sizeof *p);
    p->kind = kind;
    p->nodes = nodes;
    p->keys = keys;
    p->cnt = cr_xcalloc((size_t)nodes, sizeof *p->cnt);
    if (kind == CR_PLACE_RANGE) {
        p->block = range_block(keys, nodes);
        for (int n = 0; n < nodes; n++) {
            int64_t lo = (int64_t)n * p->block, hi = lo + p->block;
            if (lo > keys) lo = keys;
            if (hi > keys) hi = keys;
            p->cnt[n] = hi - lo;
        }
        return p;
    }
    if (number(p, owner, what, e) < 0) cr_place_destroy(&p);
    return p;
}

void cr_place_destroy(cr_place **pp) {
    cr_place *p = pp ? *pp : NULL;
    if (!p) return;
    free(p->cnt);
    free(p->to_int);
    free(p->to_user);
    free(p);
    *pp = NULL;
}
