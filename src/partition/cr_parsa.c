/* Parsa (paper 002, Algorithms 2 and 3; spec "Parsa").
 *
 * U side: per partition i the neighbour set S_i is a bit per (parameter, i);
 * the marginal cost A_i(u) = |N(u) \ S_i| of each unassigned example of the
 * current block sits in a doubly linked list per cost value with a head
 * pointer for every cost 0..theta and one overflow list above theta. Moving
 * an example after A_i(u) -= 1 is O(1) (unlink, push to the front of the
 * next lower list), so a block costs O(k |E_block|) plus the scans for the
 * lowest non-empty bucket. Only the current block's sub-CSR (parameter ->
 * block examples) is in memory besides the graph. */
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_csr.h"
#include "base/cr_rng.h"
#include "partition/cr_parsa.h"

#define NONE UINT32_MAX

/* One example's place in one partition's bucket lists: the three fields an
 * O(1) move touches share a cache line. */
typedef struct node {
    uint32_t next, prev, cost;
} node;

typedef struct parsa {
    const cr_bigraph *g;
    uint32_t k, words, theta;
    uint64_t *s;      /* nv x words: bit i of v = v in S_i */
    uint64_t *usize;  /* |U_i| */
    uint64_t *ssize;  /* |S_i| */
    int select_neighbours;
    /* the current block */
    uint32_t nb;
    const uint32_t *ids; /* local -> global example id (sorted) */
    uint64_t *voff;      /* nv + 1 offsets of the sub-CSR */
    uint32_t *vadj;      /* local example ids per parameter */
    node *nd;            /* k x nb: partition i's entry of example x at i * nb + x */
    uint32_t *head;      /* k x (theta + 2); [theta + 1] = overflow */
    uint32_t *minb;      /* lowest possibly non-empty bucket per partition */
    uint8_t *assigned;   /* nb */
} parsa;

static int in_s(const parsa *p, uint32_t v, uint32_t i) {
    return (int)((p->s[(uint64_t)v * p->words + i / 64] >> (i % 64)) & 1);
}

static uint32_t bucket_of(const parsa *p, uint32_t c) {
    return c > p->theta ? p->theta + 1 : c;
}

static void unlink_x(parsa *p, uint32_t i, uint32_t x) {
    size_t base = (size_t)i * p->nb;
    uint32_t nx = p->nd[base + x].next, pv = p->nd[base + x].prev;
    if (pv != NONE) p->nd[base + pv].next = nx;
    else p->head[(size_t)i * (p->theta + 2) + bucket_of(p, p->nd[base + x].cost)] = nx;
    if (nx != NONE) p->nd[base + nx].prev = pv;
}

static void push_front(parsa *p, uint32_t i, uint32_t x) {
    size_t base = (size_t)i * p->nb;
    uint32_t b = bucket_of(p, p->nd[base + x].cost);
    uint32_t *h = &p->head[(size_t)i * (p->theta + 2) + b];
    p->nd[base + x].prev = NONE;
    p->nd[base + x].next = *h;
    if (*h != NONE) p->nd[base + *h].prev = x;
    *h = x;
    if (b < p->minb[i]) p->minb[i] = b;
}

/* Partition to serve next: fewest examples (or fewest neighbours), lowest id. */
static uint32_t pick_partition(const parsa *p) {
    const uint64_t *key = p->select_neighbours ? p->ssize : p->usize;
    uint32_t i = 0;
    for (uint32_t j = 1; j < p->k; j++)
        if (key[j] < key[i]) i = j;
    return i;
}

/* The cheapest unassigned example of partition i (see the tie rule in
 * cr_parsa.h); the block is not empty. */
static uint32_t cheapest(parsa *p, uint32_t i) {
    const uint32_t *h = &p->head[(size_t)i * (p->theta + 2)];
    while (p->minb[i] <= p->theta && h[p->minb[i]] == NONE) p->minb[i]++;
    if (p->minb[i] <= p->theta) return h[p->minb[i]];
    size_t base = (size_t)i * p->nb;
    uint32_t best = NONE;
    for (uint32_t x = h[p->theta + 1]; x != NONE; x = p->nd[base + x].next)
        if (best == NONE || p->nd[base + x].cost < p->nd[base + best].cost) best = x;
    return best;
}

static void assign(parsa *p, uint32_t x, uint32_t i, uint32_t *u_part) {
    const cr_bigraph *g = p->g;
    uint32_t u = p->ids[x];
    u_part[u] = i;
    p->usize[i]++;
    p->assigned[x] = 1;
    for (uint32_t j = 0; j < p->k; j++) unlink_x(p, j, x);
    size_t base = (size_t)i * p->nb;
    for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) {
        uint32_t v = g->u_adj[a];
        if (in_s(p, v, i)) continue;
        p->s[(uint64_t)v * p->words + i / 64] |= 1ull << (i % 64);
        p->ssize[i]++;
        for (uint64_t b = p->voff[v]; b < p->voff[v + 1]; b++) {
            uint32_t y = p->vadj[b];
            if (p->assigned[y]) continue;
            unlink_x(p, i, y);
            p->nd[base + y].cost--;
            push_front(p, i, y);
        }
    }
}

/* Algorithm 3 on one block (ids sorted ascending). */
static void run_block(parsa *p, const uint32_t *ids, uint32_t nb, uint32_t *u_part) {
    const cr_bigraph *g = p->g;
    uint32_t k = p->k;
    p->nb = nb, p->ids = ids;
    /* sub-CSR parameter -> block examples (cr_csr; cannot fail: ids < nv) */
    cr_csr_build cb;
    (void)cr_csr_begin(&cb, g->nv, NULL);
    uint64_t ne = 0;
    for (uint32_t x = 0; x < nb; x++)
        for (uint64_t a = g->u_off[ids[x]]; a < g->u_off[ids[x] + 1]; a++) cr_csr_count(&cb, g->u_adj[a]), ne++;
    (void)cr_csr_offsets(&cb, NULL, 0, &p->voff, NULL);
    p->vadj = cr_xmalloc((ne + 1) * sizeof *p->vadj);
    for (uint32_t x = 0; x < nb; x++)
        for (uint64_t a = g->u_off[ids[x]]; a < g->u_off[ids[x] + 1]; a++) p->vadj[cr_csr_slot(&cb, g->u_adj[a])] = x;
    cr_csr_end(&cb);
    p->nd = cr_xcalloc((size_t)k * nb + 1, sizeof *p->nd);
    p->assigned = cr_xcalloc((size_t)nb + 1, 1);
    for (uint32_t x = 0; x < nb; x++)
        for (uint64_t a = g->u_off[ids[x]]; a < g->u_off[ids[x] + 1]; a++)
            for (uint32_t i = 0; i < k; i++) p->nd[(size_t)i * nb + x].cost += !in_s(p, g->u_adj[a], i);
    /* counting-sort build: pushing in decreasing id order leaves every
     * bucket in increasing id order */
    for (size_t j = 0; j < (size_t)k * (p->theta + 2); j++) p->head[j] = NONE;
    for (uint32_t i = 0; i < k; i++) {
        p->minb[i] = p->theta + 1;
        for (uint32_t x = nb; x-- > 0;) push_front(p, i, x);
    }
    for (uint32_t left = nb; left > 0; left--) {
        uint32_t i = pick_partition(p);
        assign(p, cheapest(p, i), i, u_part);
    }
    free(p->voff), free(p->vadj), free(p->nd), free(p->assigned);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int cr_parsa_assign_u(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, uint32_t theta, uint32_t *u_part,
                      cr_err *e) {
    if (k == 0) return cr_errf(e, "k must be at least 1");
    if (o->blocks == 0) return cr_errf(e, "parsa: blocks must be at least 1");
    if (o->init_blocks > o->blocks) return cr_errf(e, "parsa: init_blocks (%u) > blocks (%u)", o->init_blocks, o->blocks);
    if (o->global_sample < 0 || o->global_sample > 1) return cr_errf(e, "parsa: global_sample must be in [0, 1]");
    uint32_t n = g->nu;
    parsa p = {.g = g, .k = k, .words = (k + 63) / 64, .theta = theta, .select_neighbours = o->select_neighbours};
    p.s = cr_xcalloc((size_t)g->nv * p.words + 1, sizeof *p.s);
    p.usize = cr_xcalloc(k, sizeof *p.usize);
    p.ssize = cr_xcalloc(k, sizeof *p.ssize);
    p.head = cr_xmalloc((size_t)k * (theta + 2) * sizeof *p.head);
    p.minb = cr_xmalloc(k * sizeof *p.minb);
    /* random blocks: a seeded permutation cut into b pieces, each sorted */
    uint32_t *perm = cr_xmalloc(((size_t)n + 1) * sizeof *perm);
    for (uint32_t u = 0; u < n; u++) perm[u] = u;
    cr_rng r;
    cr_rng_seed(&r, o->seed);
    uint32_t b = o->blocks;
    if (b > 1) cr_rng_shuffle_u32(&r, perm, n);
    uint64_t *start = cr_xmalloc(((size_t)b + 1) * sizeof *start);
    for (uint32_t j = 0; j <= b; j++) start[j] = (uint64_t)n * j / b;
    for (uint32_t j = 0; j < b; j++) qsort(perm + start[j], start[j + 1] - start[j], sizeof *perm, cmp_u32);
    if (o->global_sample > 0) { /* seed S_i from a partitioned sample */
        uint32_t *smp = cr_xmalloc(((size_t)n + 1) * sizeof *smp), m = 0;
        for (uint32_t u = 0; u < n; u++)
            if (cr_rng_uniform(&r) < o->global_sample) smp[m++] = u;
        run_block(&p, smp, m, u_part);
        free(smp);
        memset(p.usize, 0, k * sizeof *p.usize);
    }
    for (uint32_t j = 0; j < o->init_blocks; j++) /* warm-up: keep S_i, drop assignments */
        run_block(&p, perm + start[j], (uint32_t)(start[j + 1] - start[j]), u_part);
    if (o->init_blocks) memset(p.usize, 0, k * sizeof *p.usize);
    for (uint32_t j = 0; j < b; j++) run_block(&p, perm + start[j], (uint32_t)(start[j + 1] - start[j]), u_part);
    free(perm), free(start), free(p.s), free(p.usize), free(p.ssize), free(p.head), free(p.minb);
    return 0;
}

/* One improving sweep: move v from its owner o to another machine y that
 * needs it when that lowers max(cost_o, cost_y). Returns the number of moves. */
static uint64_t improve_sweep(const cr_bigraph *g, const uint32_t *u_part, const uint32_t *order,
                              int64_t *cost, uint64_t *stamp, uint32_t *cand, uint32_t *v_part) {
    uint64_t moves = 0;
    for (uint32_t x = 0; x < g->nv; x++) {
        uint32_t v = order[x], c = 0, o = v_part[v];
        for (uint64_t j = g->v_off[v]; j < g->v_off[v + 1]; j++) {
            uint32_t m = u_part[g->v_adj[j]];
            if (stamp[m] != (uint64_t)v + 1) stamp[m] = (uint64_t)v + 1, cand[c++] = m;
        }
        if (c < 2) continue;
        int64_t old = cost[o], best = -1, best_max = 0;
        for (uint32_t j = 0; j < c; j++) {
            uint32_t y = cand[j];
            if (y == o) continue;
            int64_t no = cost[o] - c + 2, ny = cost[y] + c - 2;
            int64_t mx = no > ny ? no : ny, om = old > cost[y] ? old : cost[y];
            if (mx < om && (best < 0 || mx < best_max || (mx == best_max && y < (uint32_t)best))) best = y, best_max = mx;
        }
        if (best < 0) continue;
        cost[o] -= c - 2, cost[best] += c - 2, v_part[v] = (uint32_t)best, moves++;
    }
    return moves;
}

int cr_parsa_assign_v(const cr_bigraph *g, uint32_t k, const uint32_t *u_part, uint64_t seed, int sweeps,
                      uint32_t *v_part, cr_err *e) {
    if (k == 0) return cr_errf(e, "k must be at least 1");
    uint32_t nv = g->nv;
    int64_t *cost = cr_xcalloc(k, sizeof *cost);
    uint64_t *stamp = cr_xcalloc(k, sizeof *stamp);
    uint32_t *cand = cr_xmalloc(k * sizeof *cand);
    for (uint32_t v = 0; v < nv; v++) /* cost_i = |N(U_i)| */
        for (uint64_t j = g->v_off[v]; j < g->v_off[v + 1]; j++) {
            uint32_t m = u_part[g->v_adj[j]];
            if (stamp[m] != (uint64_t)v + 1) stamp[m] = (uint64_t)v + 1, cost[m]++;
        }
    uint32_t *order = cr_xmalloc(((size_t)nv + 1) * sizeof *order);
    for (uint32_t v = 0; v < nv; v++) order[v] = v;
    cr_rng r;
    cr_rng_seed2(&r, seed, 2);
    cr_rng_shuffle_u32(&r, order, nv);
    memset(stamp, 0, k * sizeof *stamp);
    uint32_t rr = 0;
    for (uint32_t x = 0; x < nv; x++) {
        uint32_t v = order[x], c = 0, best = NONE;
        for (uint64_t j = g->v_off[v]; j < g->v_off[v + 1]; j++) {
            uint32_t m = u_part[g->v_adj[j]];
            if (stamp[m] != (uint64_t)v + 1) stamp[m] = (uint64_t)v + 1, cand[c++] = m;
        }
        for (uint32_t j = 0; j < c; j++)
            if (best == NONE || cost[cand[j]] < cost[best] || (cost[cand[j]] == cost[best] && cand[j] < best)) best = cand[j];
        if (best == NONE) { v_part[v] = NONE; continue; }
        v_part[v] = best;
        cost[best] += (int64_t)c - 2;
    }
    for (uint32_t v = 0; v < nv; v++)
        if (v_part[v] == NONE) v_part[v] = rr++ % k;
    int max_sweeps = sweeps < 0 ? 100 : sweeps;
    for (int s = 0; s < max_sweeps; s++) {
        memset(stamp, 0, k * sizeof *stamp);
        if (improve_sweep(g, u_part, order, cost, stamp, cand, v_part) == 0) break;
    }
    free(cost), free(stamp), free(cand), free(order);
    return 0;
}

int cr_part_parsa(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e) {
    if (cr_parsa_assign_u(g, k, o, CR_PARSA_THETA, out->u_part, e) != 0) return -1;
    return cr_parsa_assign_v(g, k, out->u_part, o->seed, o->v_sweeps, out->v_part, e);
}
