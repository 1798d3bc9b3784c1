/* Dynamic parameter reallocation (paper 001, Algorithms 3-4). */
#include "partition/cr_realloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

/* ---- LRU: entries in a fixed array, a doubly linked recency list, and an
 * open-addressing index id -> entry (linear probing, backward-shift delete). */
typedef struct lru_ent {
    uint64_t id;
    uint32_t *idx, *keys;
    float *val;
    uint32_t nfeat, nkeys;
    double norm2;
    int32_t prev, next; /* towards more / less recent; -1 = none */
} lru_ent;

struct cr_lru {
    uint32_t cap, n;
    lru_ent *ent;
    int32_t head, tail; /* most / least recent */
    uint32_t *slot;     /* entry index + 1, 0 = empty */
    uint32_t mask;
};

cr_lru *cr_lru_new(uint32_t capacity) {
    if (capacity == 0) capacity = 1;
    cr_lru *l = cr_xcalloc(1, sizeof *l);
    l->cap = capacity;
    l->ent = cr_xcalloc(capacity, sizeof *l->ent);
    l->head = l->tail = -1;
    uint32_t sz = 4;
    while (sz < 2ull * capacity) sz *= 2;
    l->slot = cr_xcalloc(sz, sizeof *l->slot);
    l->mask = sz - 1;
    return l;
}

static void ent_clear(lru_ent *x) {
    free(x->idx);
    free(x->val);
    free(x->keys);
    x->idx = x->keys = NULL;
    x->val = NULL;
}

void cr_lru_destroy(cr_lru **lp) {
    if (!lp || !*lp) return;
    cr_lru *l = *lp;
    for (uint32_t i = 0; i < l->n; i++) ent_clear(&l->ent[i]);
    free(l->ent);
    free(l->slot);
    free(l);
    *lp = NULL;
}

uint32_t cr_lru_size(const cr_lru *l) { return l->n; }
uint32_t cr_lru_capacity(const cr_lru *l) { return l->cap; }

/* Slot holding id, or the empty slot where it would go. */
static uint32_t find_slot(const cr_lru *l, uint64_t id) {
    uint32_t s = (uint32_t)cr_mix64(id) & l->mask;
    while (l->slot[s] && l->ent[l->slot[s] - 1].id != id) s = (s + 1) & l->mask;
    return s;
}

int cr_lru_contains(const cr_lru *l, uint64_t id) { return l->slot[find_slot(l, id)] != 0; }

uint64_t cr_lru_bytes(const cr_lru *l) {
    uint64_t b = sizeof *l + (uint64_t)l->cap * sizeof *l->ent + ((uint64_t)l->mask + 1) * sizeof *l->slot;
    for (uint32_t i = 0; i < l->n; i++) {
        const lru_ent *x = &l->ent[i];
        b += ((uint64_t)x->nfeat + 1) * (sizeof *x->idx + sizeof *x->val) + ((uint64_t)x->nkeys + 1) * sizeof *x->keys;
    }
    return b;
}

static void slot_delete(cr_lru *l, uint32_t s) {
    l->slot[s] = 0;
    for (uint32_t j = (s + 1) & l->mask; l->slot[j]; j = (j + 1) & l->mask) {
        uint32_t home = (uint32_t)cr_mix64(l->ent[l->slot[j] - 1].id) & l->mask;
        /* move j back into s when its home is not in the cyclic range (s, j] */
        if (((j - home) & l->mask) >= ((j - s) & l->mask)) {
            l->slot[s] = l->slot[j];
            l->slot[j] = 0;
            s = j;
        }
    }
}

static void unlink_ent(cr_lru *l, int32_t i) {
    lru_ent *x = &l->ent[i];
    if (x->prev >= 0) l->ent[x->prev].next = x->next;
    else l->head = x->next;
    if (x->next >= 0) l->ent[x->next].prev = x->prev;
    else l->tail = x->prev;
}

static void push_front(cr_lru *l, int32_t i) {
    l->ent[i].prev = -1;
    l->ent[i].next = l->head;
    if (l->head >= 0) l->ent[l->head].prev = i;
    l->head = i;
    if (l->tail < 0) l->tail = i;
}

int cr_lru_put(cr_lru *l, uint64_t id, const uint32_t *idx, const float *val, uint32_t nfeat,
               const uint32_t *keys, uint32_t nkeys, cr_err *e) {
    for (uint32_t i = 1; i < nfeat; i++)
        if (idx[i] <= idx[i - 1])
            return cr_errf(e, "lru: sample %llu: feature indices not strictly increasing at %u",
                           (unsigned long long)id, i);
    uint32_t s = find_slot(l, id);
    int32_t i;
    if (l->slot[s]) { /* replace */
        i = (int32_t)l->slot[s] - 1;
        unlink_ent(l, i);
        ent_clear(&l->ent[i]);
    } else if (l->n < l->cap) {
        i = (int32_t)l->n++;
        l->slot[s] = (uint32_t)i + 1;
    } else { /* evict the least recent, reuse its entry */
        i = l->tail;
        unlink_ent(l, i);
        slot_delete(l, find_slot(l, l->ent[i].id));
        ent_clear(&l->ent[i]);
        l->slot[find_slot(l, id)] = (uint32_t)i + 1;
    }
    lru_ent *x = &l->ent[i];
    x->id = id;
    x->nfeat = nfeat;
    x->nkeys = nkeys;
    x->idx = cr_xmalloc(((size_t)nfeat + 1) * sizeof *x->idx);
    x->val = cr_xmalloc(((size_t)nfeat + 1) * sizeof *x->val);
    x->keys = cr_xmalloc(((size_t)nkeys + 1) * sizeof *x->keys);
    if (nfeat) memcpy(x->idx, idx, nfeat * sizeof *idx), memcpy(x->val, val, nfeat * sizeof *val);
    if (nkeys) memcpy(x->keys, keys, nkeys * sizeof *keys);
    x->norm2 = 0;
    for (uint32_t j = 0; j < nfeat; j++) x->norm2 += (double)val[j] * val[j];
    push_front(l, i);
    return 0;
}

void cr_realloc_opts_default(cr_realloc_opts *o) {
    *o = (cr_realloc_opts){.r = 5, .c = 0.1, .threshold = 0.0, .horizon = 1.0, .max_moves = 0};
}

/* Squared Euclidean distance between a sample and a cached entry. */
static double dist2(const cr_sample *a, double an2, const lru_ent *b) {
    double dot = 0;
    uint32_t i = 0, j = 0;
    while (i < a->nnz && j < b->nfeat) {
        if (a->idx[i] < b->idx[j]) i++;
        else if (a->idx[i] > b->idx[j]) j++;
        else dot += (double)a->val[i++] * b->val[j++];
    }
    double d = an2 + b->norm2 - 2 * dot;
    return d > 0 ? d : 0;
}

int cr_realloc_estimate(const cr_lru *l, const cr_sample *batch, uint32_t nbatch,
                        const cr_realloc_opts *o, uint32_t nkeys, double *w, uint64_t *edges,
                        cr_err *e) {
    if (o->r == 0) return cr_errf(e, "realloc: r must be >= 1");
    for (int32_t i = l->head; i >= 0; i = l->ent[i].next)
        for (uint32_t j = 0; j < l->ent[i].nkeys; j++)
            if (l->ent[i].keys[j] >= nkeys)
                return cr_errf(e, "realloc: cached sample %llu accessed key %u >= %u keys",
                               (unsigned long long)l->ent[i].id, l->ent[i].keys[j], nkeys);
    for (uint32_t d = 0; d < nbatch; d++)
        for (uint32_t j = 1; j < batch[d].nnz; j++)
            if (batch[d].idx[j] <= batch[d].idx[j - 1])
                return cr_errf(e, "realloc: batch sample %u: feature indices not strictly increasing", d);
    uint32_t r = o->r < l->n ? o->r : l->n;
    int32_t *nb = cr_xmalloc(((size_t)r + 1) * sizeof *nb);
    double *nd = cr_xmalloc(((size_t)r + 1) * sizeof *nd);
    double *acc = cr_xcalloc((size_t)nkeys + 1, sizeof *acc);
    uint32_t *touched = NULL;
    size_t tcap = 0;
    uint64_t kept = 0;
    for (uint32_t d = 0; d < nbatch && r > 0; d++) {
        const cr_sample *s = &batch[d];
        double an2 = 0;
        for (uint32_t j = 0; j < s->nnz; j++) an2 += (double)s->val[j] * s->val[j];
        uint32_t m = 0; /* r nearest, most recent first on ties */
        for (int32_t i = l->head; i >= 0; i = l->ent[i].next) {
            double dd = dist2(s, an2, &l->ent[i]);
            if (m == r && dd >= nd[m - 1]) continue;
            uint32_t p = m < r ? m++ : m - 1;
            while (p > 0 && nd[p - 1] > dd) nd[p] = nd[p - 1], nb[p] = nb[p - 1], p--;
            nd[p] = dd, nb[p] = i;
        }
        double ssum = 0;
        size_t nt = 0;
        for (uint32_t q = 0; q < m; q++) {
            const lru_ent *x = &l->ent[nb[q]];
            double sl = 1.0 / (sqrt(nd[q]) + 1e-9);
            ssum += sl;
            for (uint32_t j = 0; j < x->nkeys; j++) {
                uint32_t p = x->keys[j];
                if (acc[p] == 0) {
                    if (nt == tcap) tcap = tcap ? 2 * tcap : 64, touched = cr_xrealloc(touched, tcap * sizeof *touched);
                    touched[nt++] = p;
                }
                acc[p] += sl;
            }
        }
        for (size_t t = 0; t < nt; t++) {
            uint32_t p = touched[t];
            double f = acc[p] / ssum;
            if (f > 1) f = 1; /* a key listed twice by one sample */
            if (f > o->c) w[p] += f, kept++;
            acc[p] = 0;
        }
    }
    free(nb);
    free(nd);
    free(acc);
    free(touched);
    if (edges) *edges = kept;
    return 0;
}

void cr_realloc_result_free(cr_realloc_result *r) {
    free(r->key);
    free(r->from);
    free(r->to);
    r->key = r->from = r->to = NULL;
}

static void extremes(const double *L, uint32_t k, uint32_t *jmax, uint32_t *jmin) {
    *jmax = *jmin = 0;
    for (uint32_t j = 1; j < k; j++) {
        if (L[j] > L[*jmax]) *jmax = j;
        if (L[j] < L[*jmin]) *jmin = j;
    }
}

int cr_realloc_run(uint32_t k, uint32_t nkeys, uint32_t *server, const double *w,
                   const double *size, const cr_realloc_opts *o, cr_realloc_result *res,
                   cr_err *e) {
    memset(res, 0, sizeof *res);
    if (k == 0) return cr_errf(e, "realloc: k must be >= 1");
    for (uint32_t p = 0; p < nkeys; p++) {
        if (server[p] >= k) return cr_errf(e, "realloc: key %u on server %u >= k = %u", p, server[p], k);
        if (!(w[p] >= 0)) return cr_errf(e, "realloc: key %u has weight %g < 0", p, w[p]);
        if (size && !(size[p] >= 0)) return cr_errf(e, "realloc: key %u has size %g < 0", p, size[p]);
    }
    double *L = cr_xcalloc(k, sizeof *L);
    for (uint32_t p = 0; p < nkeys; p++) L[server[p]] += w[p];
    uint32_t jmax, jmin;
    extremes(L, k, &jmax, &jmin);
    res->max_before = res->max_after = L[jmax];
    res->min_before = res->min_after = L[jmin];
    size_t cap = 0;
    int go = L[jmax] - L[jmin] > o->threshold;
    while (go && jmax != jmin && (o->max_moves == 0 || res->moves < o->max_moves)) {
        double half = (L[jmax] - L[jmin]) / 2, bestd = INFINITY;
        uint32_t best = UINT32_MAX;
        for (uint32_t p = 0; p < nkeys; p++) {
            if (server[p] != jmax || w[p] <= 0) continue;
            double dd = fabs(w[p] - half);
            if (dd < bestd) bestd = dd, best = p;
        }
        if (best == UINT32_MAX) break;
        double other = -INFINITY;
        for (uint32_t j = 0; j < k; j++)
            if (j != jmax && j != jmin && L[j] > other) other = L[j];
        double after = fmax(fmax(L[jmax] - w[best], L[jmin] + w[best]), other);
        double delta = L[jmax] - after, cost = size ? size[best] : 1.0;
        if (!(o->horizon * delta > cost)) break;
        if (res->moves == cap) {
            cap = cap ? 2 * cap : 16;
            res->key = cr_xrealloc(res->key, cap * sizeof *res->key);
            res->from = cr_xrealloc(res->from, cap * sizeof *res->from);
            res->to = cr_xrealloc(res->to, cap * sizeof *res->to);
        }
        res->key[res->moves] = best, res->from[res->moves] = jmax, res->to[res->moves] = jmin;
        res->moves++;
        res->migration_volume += cost;
        L[jmax] -= w[best];
        L[jmin] += w[best];
        server[best] = jmin;
        extremes(L, k, &jmax, &jmin);
    }
    res->max_after = L[jmax];
    res->min_after = L[jmin];
    free(L);
    return 0;
}
