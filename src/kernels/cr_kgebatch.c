/* KGE training batches: see cr_kgebatch.h. */
#include "kernels/cr_kgebatch.h"

#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

/* Open-addressing map from global id to local row, cleared in O(1) per batch
 * by a generation stamp: a slot is in use when its stamp is the current one. */
typedef struct idmap {
    uint64_t mask;  /* capacity - 1, capacity a power of two >= 2 x keys */
    int64_t *key, *val;
    uint32_t *stamp;
    uint32_t gen;
} idmap;

struct cr_kgebatch {
    int64_t n, batch, neg, entities, relations;
    int negrows;
    int64_t *s, *r, *o; /* the triples */
    uint64_t *walk;     /* this epoch's order */
    int64_t at;         /* walk position (positives handed out) */
    cr_rng rng;         /* uniform negatives */
    idmap em, rm;
    /* per-batch buffers, sized for a full batch */
    int64_t *bs, *br, *bo, *ekeys, *rkeys, *negs;
    float *by;
};

static void idmap_init(idmap *m, int64_t keys) {
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)keys) cap *= 2;
    m->mask = cap - 1;
    m->key = cr_xmalloc(cap * sizeof *m->key);
    m->val = cr_xmalloc(cap * sizeof *m->val);
    m->stamp = cr_xcalloc(cap, sizeof *m->stamp);
    m->gen = 0;
}

static void idmap_free(idmap *m) {
    free(m->key);
    free(m->val);
    free(m->stamp);
}

/* Forget every key. O(1), except once every 2^32 - 1 calls. */
static void idmap_clear(idmap *m) {
    if (++m->gen == 0) {
        memset(m->stamp, 0, (m->mask + 1) * sizeof *m->stamp);
        m->gen = 1;
    }
}

/* The slot of id: where it is, or the free slot where it would go. */
static uint64_t idmap_slot(const idmap *m, int64_t id) {
    uint64_t h = cr_mix64((uint64_t)id) & m->mask;
    while (m->stamp[h] == m->gen && m->key[h] != id) h = (h + 1) & m->mask;
    return h;
}

/* Add id (if new) to the map and to keys[*nk]. */
static void idmap_add(idmap *m, int64_t id, int64_t *keys, int64_t *nk) {
    uint64_t h = idmap_slot(m, id);
    if (m->stamp[h] == m->gen) return;
    m->stamp[h] = m->gen;
    m->key[h] = id;
    keys[(*nk)++] = id;
}

static int64_t idmap_get(const idmap *m, int64_t id) { return m->val[idmap_slot(m, id)]; }

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sort keys[0..n) and make each key's map value its sorted position. */
static void sort_keys(idmap *m, int64_t *keys, int64_t n) {
    qsort(keys, (size_t)n, sizeof *keys, cmp_i64);
    for (int64_t k = 0; k < n; k++) m->val[idmap_slot(m, keys[k])] = k;
}

static int check_opts(const cr_kgebatch_opts *o, cr_err *e) {
    if (o->batch < 1) return cr_errf(e, "batch must be >= 1 (got %lld)", (long long)o->batch);
    if (o->neg < 0) return cr_errf(e, "neg must be >= 0 (got %lld)", (long long)o->neg);
    if (o->entities < 1) return cr_errf(e, "entities must be >= 1 (got %lld)", (long long)o->entities);
    if (o->relations < 1) return cr_errf(e, "relations must be >= 1 (got %lld)", (long long)o->relations);
    if (o->parts > 1 && (o->part < 0 || o->part >= o->parts))
        return cr_errf(e, "part %lld is not in [0, %lld)", (long long)o->part, (long long)o->parts);
    const int64_t lim = (int64_t)1 << 31;
    if (o->neg >= lim || o->batch > lim / (1 + 2 * o->neg))
        return cr_errf(e, "batch %lld with neg %lld makes more than 2^31 triples per batch", (long long)o->batch,
                       (long long)o->neg);
    return 0;
}

static int check_ids(const int64_t *v, int64_t n, int64_t lim, const char *what, cr_err *e) {
    for (int64_t i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= lim)
            return cr_errf(e, "triple %lld: %s %lld is not in [0, %lld)", (long long)i + 1, what, (long long)v[i],
                           (long long)lim);
    return 0;
}

/* The ids v[i] with i % parts == part (all when parts <= 1); *kept gets their count. */
static int64_t *copy_ids(const int64_t *v, int64_t n, int64_t part, int64_t parts, int64_t *kept) {
    if (parts < 1) parts = 1, part = 0;
    int64_t k = n > part ? (n - part + parts - 1) / parts : 0;
    int64_t *c = cr_xmalloc((size_t)(k ? k : 1) * sizeof *c);
    for (int64_t i = 0; i < k; i++) c[i] = v[part + i * parts];
    *kept = k;
    return c;
}

static double idmap_bytes(int64_t keys) {
    double cap = 16;
    while (cap < 2 * (double)keys) cap *= 2;
    return cap * (2 * sizeof(int64_t) + sizeof(uint32_t));
}

double cr_kgebatch_bytes(int64_t n, const cr_kgebatch_opts *o) {
    int64_t part = o->parts > 1 ? o->part : 0, parts = o->parts > 1 ? o->parts : 1;
    double k = n > part ? (double)((n - part + parts - 1) / parts) : 0;
    double B = (double)o->batch < k ? (double)o->batch : (k > 0 ? k : 1), neg = (double)o->neg;
    double m = B * (1 + 2 * neg), ne = B * (2 + 2 * neg);
    return (3 * (k + 1) + (k + 1)) * 8 + m * (3 * sizeof(int64_t) + sizeof(float)) + ne * 8 + B * 8 +
           (2 * B * neg + 1) * 8 + idmap_bytes((int64_t)ne) + idmap_bytes((int64_t)B);
}

/* The per-batch buffers and maps, for B = min(batch, n) positives
 * (cr_kgebatch_bytes counts them the same way). */
static void alloc_buffers(cr_kgebatch *kb) {
    int64_t B = kb->batch < kb->n ? kb->batch : (kb->n ? kb->n : 1);
    kb->batch = B;
    int64_t m = B * (1 + 2 * kb->neg), ne = B * (2 + 2 * kb->neg);
    kb->bs = cr_xmalloc((size_t)m * sizeof *kb->bs);
    kb->br = cr_xmalloc((size_t)m * sizeof *kb->br);
    kb->bo = cr_xmalloc((size_t)m * sizeof *kb->bo);
    kb->by = cr_xmalloc((size_t)m * sizeof *kb->by);
    kb->ekeys = cr_xmalloc((size_t)ne * sizeof *kb->ekeys);
    kb->rkeys = cr_xmalloc((size_t)B * sizeof *kb->rkeys);
    kb->negs = cr_xmalloc((size_t)(2 * B * kb->neg + 1) * sizeof *kb->negs);
    idmap_init(&kb->em, ne);
    idmap_init(&kb->rm, B);
}

cr_kgebatch *cr_kgebatch_new(const int64_t *s, const int64_t *r, const int64_t *o, int64_t n,
                             const cr_kgebatch_opts *opts, cr_err *e) {
    if (n < 0) {
        cr_errf(e, "triples: count %lld is negative", (long long)n);
        return NULL;
    }
    if (check_opts(opts, e) || check_ids(s, n, opts->entities, "subject", e) ||
        check_ids(r, n, opts->relations, "relation", e) || check_ids(o, n, opts->entities, "object", e))
        return NULL;
    cr_kgebatch *kb = cr_xcalloc(1, sizeof *kb);
    kb->batch = opts->batch;
    kb->negrows = opts->negrows != 0;
    kb->neg = opts->neg;
    kb->entities = opts->entities;
    kb->relations = opts->relations;
    kb->s = copy_ids(s, n, opts->part, opts->parts, &kb->n);
    kb->r = copy_ids(r, n, opts->part, opts->parts, &kb->n);
    kb->o = copy_ids(o, n, opts->part, opts->parts, &kb->n);
    kb->walk = cr_xmalloc((size_t)(kb->n ? kb->n : 1) * sizeof *kb->walk);
    alloc_buffers(kb);
    cr_kgebatch_shuffle(kb, opts->seed);
    return kb;
}

void cr_kgebatch_destroy(cr_kgebatch **kbp) {
    cr_kgebatch *kb = kbp ? *kbp : NULL;
    if (!kb) return;
    free(kb->s);
    free(kb->r);
    free(kb->o);
    free(kb->walk);
    free(kb->bs);
    free(kb->br);
    free(kb->bo);
    free(kb->by);
    free(kb->ekeys);
    free(kb->rkeys);
    free(kb->negs);
    idmap_free(&kb->em);
    idmap_free(&kb->rm);
    free(kb);
    *kbp = NULL;
}

int64_t cr_kgebatch_count(const cr_kgebatch *kb) { return kb->n; }

int64_t cr_kgebatch_batches(const cr_kgebatch *kb) { return (kb->n + kb->batch - 1) / kb->batch; }

void cr_kgebatch_shuffle(cr_kgebatch *kb, uint64_t seed) {
    for (int64_t i = 0; i < kb->n; i++) kb->walk[i] = (uint64_t)i;
    cr_rng g;
    cr_rng_seed2(&g, seed, 0);
    cr_rng_shuffle_u64(&g, kb->walk, (uint64_t)kb->n);
    cr_rng_seed2(&kb->rng, seed, 1);
    kb->at = 0;
}

void cr_kgebatch_rewind(cr_kgebatch *kb) { kb->at = 0; }

static int64_t next_pos(const cr_kgebatch *kb) {
    int64_t left = kb->n - kb->at;
    return left < kb->batch ? left : kb->batch;
}

int64_t cr_kgebatch_needs(const cr_kgebatch *kb) { return 2 * kb->neg * next_pos(kb); }

void cr_kgebatch_uniform(cr_kgebatch *kb, int64_t *out, int64_t n) { cr_kgebatch_draw(&kb->rng, kb->entities, out, n); }

void cr_kgebatch_draw(cr_rng *r, int64_t entities, int64_t *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = (int64_t)cr_rng_below(r, (uint64_t)entities);
}

/* Fill bs/br/bo/by with global ids for positives walk[at .. at + pos). With
 * negrows, a negative's entity is written as -1 - (its position in negs). */
static void fill_global(cr_kgebatch *kb, int64_t pos, const int64_t *negs) {
    int64_t w = 1 + 2 * kb->neg, k = kb->neg, mark = kb->negrows;
    for (int64_t i = 0; i < pos; i++) {
        uint64_t t = kb->walk[kb->at + i];
        for (int64_t j = 0; j < w; j++) {
            int64_t x = i * w + j;
            kb->bs[x] = kb->s[t], kb->br[x] = kb->r[t], kb->bo[x] = kb->o[t];
            kb->by[x] = j == 0 ? 1.0f : 0.0f;
            int64_t q = 2 * k * i + j - 1, ng = mark ? -1 - q : j ? negs[q] : 0;
            if (j >= 1 && j <= k) kb->bs[x] = ng;
            if (j > k) kb->bo[x] = ng;
        }
    }
}

/* Collect, sort and map the batch's keys; turn bs/br/bo into local rows. */
static void localize(cr_kgebatch *kb, int64_t m, cr_kgebatch_out *out) {
    int64_t ne = 0, nr = 0;
    idmap_clear(&kb->em);
    idmap_clear(&kb->rm);
    for (int64_t x = 0; x < m; x++) {
        if (kb->bs[x] >= 0) idmap_add(&kb->em, kb->bs[x], kb->ekeys, &ne);
        if (kb->bo[x] >= 0) idmap_add(&kb->em, kb->bo[x], kb->ekeys, &ne);
        idmap_add(&kb->rm, kb->br[x], kb->rkeys, &nr);
    }
    sort_keys(&kb->em, kb->ekeys, ne);
    sort_keys(&kb->rm, kb->rkeys, nr);
    for (int64_t x = 0; x < m; x++) { /* a marked negative -1 - q becomes row ne + q */
        kb->bs[x] = kb->bs[x] >= 0 ? idmap_get(&kb->em, kb->bs[x]) : ne - 1 - kb->bs[x];
        kb->bo[x] = kb->bo[x] >= 0 ? idmap_get(&kb->em, kb->bo[x]) : ne - 1 - kb->bo[x];
        kb->br[x] = idmap_get(&kb->rm, kb->br[x]);
    }
    out->ne = ne;
    out->nr = nr;
    out->ekeys = kb->ekeys;
    out->rkeys = kb->rkeys;
    out->b = (cr_kge_batch){m, kb->bs, kb->br, kb->bo, kb->by};
}

int cr_kgebatch_next(cr_kgebatch *kb, const int64_t *negs, int64_t nneg, cr_kgebatch_out *out, cr_err *e) {
    int64_t pos = next_pos(kb), need = 2 * kb->neg * pos;
    if (pos == 0) return 0;
    if (!negs) {
        cr_kgebatch_draw(&kb->rng, kb->entities, kb->negs, need);
        negs = kb->negs;
    } else if (nneg != need) {
        return cr_errf(e, "negatives: got %lld ids, the batch needs %lld", (long long)nneg, (long long)need);
    } else {
        for (int64_t i = 0; i < need; i++)
            if (negs[i] < 0 || negs[i] >= kb->entities)
                return cr_errf(e, "negative %lld: entity %lld is not in [0, %lld)", (long long)i + 1,
                               (long long)negs[i], (long long)kb->entities);
    }
    fill_global(kb, pos, negs);
    localize(kb, pos * (1 + 2 * kb->neg), out);
    out->pos = pos;
    out->negs = negs;
    kb->at += pos;
    return 1;
}
