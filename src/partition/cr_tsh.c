/* TSH, the two-step heuristic of paper 000 (spec "TSH"): Algorithm 1 assigns
 * examples, Algorithm 2 parameters. tsh1 = alpha 1, tsh2 = alpha 2.
 *
 * Step 1 keeps, per machine i, the marginal cost A_i(u) = |N(u) \ N(U_i)| of
 * every unassigned u in an indexed binary heap keyed by (cost, id), so the
 * cheapest example with the lowest id is at the root. Costs only decrease:
 * when v enters N(U_i), every unassigned u in N(v) gets A_i(u) -= 1. For
 * alpha = 2 the best pair is searched among pairs that share a new parameter
 * (the only pairs that can beat two singletons), starting from the two
 * cheapest singletons and visiting candidates in cost order while their cost
 * can still beat the best pair (at most PAIR_CANDIDATES of them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "partition/cr_partition.h"
#include "partition/cr_tsh.h"

#define NONE UINT32_MAX
#define PAIR_CANDIDATES 64

typedef struct heap {
    uint32_t n;     /* entries */
    uint32_t *h;    /* heap of example ids */
    uint32_t *pos;  /* id -> position, NONE when not in the heap */
    uint32_t *cost; /* id -> A_i(id) */
} heap;

static int less(const heap *q, uint32_t a, uint32_t b) {
    return q->cost[a] < q->cost[b] || (q->cost[a] == q->cost[b] && a < b);
}

static void place(heap *q, uint32_t p, uint32_t u) {
    q->h[p] = u;
    q->pos[u] = p;
}

static void sift_up(heap *q, uint32_t p) {
    uint32_t u = q->h[p];
    while (p > 0 && less(q, u, q->h[(p - 1) / 2])) {
        place(q, p, q->h[(p - 1) / 2]);
        p = (p - 1) / 2;
    }
    place(q, p, u);
}

static void sift_down(heap *q, uint32_t p) {
    uint32_t u = q->h[p];
    for (;;) {
        uint32_t c = 2 * p + 1;
        if (c >= q->n) break;
        if (c + 1 < q->n && less(q, q->h[c + 1], q->h[c])) c++;
        if (!less(q, q->h[c], u)) break;
        place(q, p, q->h[c]);
        p = c;
    }
    place(q, p, u);
}

static void heap_remove(heap *q, uint32_t u) {
    uint32_t p = q->pos[u];
    if (p == NONE) return;
    q->pos[u] = NONE;
    if (--q->n == p) return;
    uint32_t x = q->h[q->n];
    place(q, p, x);
    sift_down(q, p);
    sift_up(q, q->pos[x]);
}

/* Shared state of step 1. */
typedef struct tsh {
    const cr_bigraph *g;
    uint32_t k, n, words;
    heap *q;           /* k heaps */
    uint64_t *in_s;    /* nv x words bitmask: v in N(U_i) */
    uint32_t *cnt;     /* pair search: shared new parameters with the current a */
    uint32_t *touched; /* ids with cnt > 0 */
    uint32_t *aux;     /* pair search: candidate queue (heap positions) */
} tsh;

static int in_s(const tsh *t, uint32_t v, uint32_t i) {
    return (int)((t->in_s[(uint64_t)v * t->words + i / 64] >> (i % 64)) & 1);
}

/* Assign u to machine i: drop it from every heap, add its parameters to
 * N(U_i) and lower the costs of machine i's remaining examples. */
static void assign(tsh *t, uint32_t u, uint32_t i, uint32_t *u_part) {
    const cr_bigraph *g = t->g;
    u_part[u] = i;
    for (uint32_t j = 0; j < t->k; j++) heap_remove(&t->q[j], u);
    heap *q = &t->q[i];
    for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) {
        uint32_t v = g->u_adj[a];
        if (in_s(t, v, i)) continue;
        t->in_s[(uint64_t)v * t->words + i / 64] |= 1ull << (i % 64);
        for (uint64_t b = g->v_off[v]; b < g->v_off[v + 1]; b++) {
            uint32_t w = g->v_adj[b];
            if (q->pos[w] == NONE) continue;
            q->cost[w]--;
            sift_up(q, q->pos[w]);
        }
    }
}

/* For candidate a on machine i: cnt[b] = |N(a) ∩ N(b) \ N(U_i)| for every
 * unassigned b != a that shares a new parameter with a (allowed: b in the
 * sample when mask is given). Returns the number of touched ids. */
static uint32_t shared_counts(tsh *t, uint32_t a, uint32_t i, const uint32_t *mask, uint32_t stamp) {
    const cr_bigraph *g = t->g;
    const heap *q = &t->q[i];
    uint32_t nt = 0;
    for (uint64_t x = g->u_off[a]; x < g->u_off[a + 1]; x++) {
        uint32_t v = g->u_adj[x];
        if (in_s(t, v, i)) continue;
        for (uint64_t y = g->v_off[v]; y < g->v_off[v + 1]; y++) {
            uint32_t b = g->v_adj[y];
            if (b == a || q->pos[b] == NONE || (mask && mask[b] != stamp)) continue;
            if (t->cnt[b]++ == 0) t->touched[nt++] = b;
        }
    }
    return nt;
}

typedef struct choice {
    double value;  /* f(U_i ∪ S) - f(U_i) - beta |S| */
    uint32_t a, b; /* a < b, or b = NONE for a singleton */
} choice;

static int better(const choice *x, const choice *y) {
    if (x->value != y->value) return x->value < y->value;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}

static choice pair_of(const tsh *t, uint32_t i, uint32_t a, uint32_t b, uint32_t shared, double beta) {
    const uint32_t *c = t->q[i].cost;
    choice ch = {(double)c[a] + c[b] - shared - 2 * beta, a < b ? a : b, a < b ? b : a};
    return ch;
}

/* Try every pair (a, b) with b sharing a new parameter with a. */
static void pairs_from(tsh *t, uint32_t i, uint32_t a, double beta, const uint32_t *mask, uint32_t stamp,
                       choice *best) {
    uint32_t nt = shared_counts(t, a, i, mask, stamp);
    for (uint32_t j = 0; j < nt; j++) {
        uint32_t b = t->touched[j];
        choice c = pair_of(t, i, a, b, t->cnt[b], beta);
        if (better(&c, best)) *best = c;
        t->cnt[b] = 0;
    }
}

static uint32_t shared_with(tsh *t, uint32_t i, uint32_t a, uint32_t b) {
    uint32_t nt = shared_counts(t, a, i, NULL, 0), s = t->cnt[b];
    for (uint32_t j = 0; j < nt; j++) t->cnt[t->touched[j]] = 0;
    return s;
}

/* Best pair on machine i from the heap: seed with the two cheapest
 * singletons, then visit heap entries in (cost, id) order through a small
 * auxiliary heap of positions while cost <= the best pair's marginal. */
static choice best_pair_heap(tsh *t, uint32_t i, double beta) {
    heap *q = &t->q[i];
    uint32_t s1 = q->h[0], s2 = q->h[1];
    if (q->n > 2 && less(q, q->h[2], s2)) s2 = q->h[2];
    choice best = pair_of(t, i, s1, s2, shared_with(t, i, s1, s2), beta);
    /* aux is a binary heap of positions of q ordered by q's key */
    uint32_t na = 0, seen = 0;
    t->aux[na++] = 0;
    while (na > 0 && seen < PAIR_CANDIDATES) {
        uint32_t p = t->aux[0];
        t->aux[0] = t->aux[--na];
        for (uint32_t c = 0, x;;) { /* sift down in aux */
            x = 2 * c + 1;
            if (x >= na) break;
            if (x + 1 < na && less(q, q->h[t->aux[x + 1]], q->h[t->aux[x]])) x++;
            if (!less(q, q->h[t->aux[x]], q->h[t->aux[c]])) break;
            uint32_t tmp = t->aux[x];
            t->aux[x] = t->aux[c], t->aux[c] = tmp, c = x;
        }
        uint32_t a = q->h[p];
        if ((double)q->cost[a] - 2 * beta > best.value) break;
        seen++;
        pairs_from(t, i, a, beta, NULL, 0, &best);
        for (uint32_t c = 2 * p + 1; c <= 2 * p + 2 && c < q->n; c++) { /* push children */
            uint32_t x = na++;
            t->aux[x] = c;
            while (x > 0 && less(q, q->h[t->aux[x]], q->h[t->aux[(x - 1) / 2]])) {
                uint32_t tmp = t->aux[x];
                t->aux[x] = t->aux[(x - 1) / 2], t->aux[(x - 1) / 2] = tmp, x = (x - 1) / 2;
            }
        }
    }
    return best;
}

static int cmp_key(const void *x, const void *y, void *q) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return less(q, a, b) ? -1 : less(q, b, a) ? 1 : 0;
}

/* The sampled variant: best singleton and pair among a random sample T of
 * the unassigned examples, each kept with probability min(1, n / (k |U'|))
 * (Bernoulli sampling by geometric skips, O(|T|)). Pairs are searched as in
 * best_pair_heap: candidates in (cost, id) order while they can still beat
 * the best pair, at most PAIR_CANDIDATES of them. */
static choice best_in_sample(tsh *t, uint32_t i, uint32_t alpha, double beta, cr_rng *r, uint32_t *mask,
                             uint32_t stamp, uint32_t *list) {
    heap *q = &t->q[i];
    double keep = (double)t->n / ((double)t->k * q->n);
    uint32_t m = 0;
    if (keep >= 1.0) {
        for (uint32_t p = 0; p < q->n; p++) list[m++] = q->h[p];
    } else {
        double lk = log1p(-keep);
        for (double p = -1;;) {
            p += 1 + floor(log1p(-cr_rng_uniform(r)) / lk);
            if (p >= q->n) break;
            list[m++] = q->h[(uint32_t)p];
        }
    }
    if (m == 0) list[m++] = q->h[cr_rng_below(r, q->n)];
    uint32_t s1 = NONE, s2 = NONE; /* the two cheapest of T, one linear pass */
    for (uint32_t j = 0; j < m; j++) {
        uint32_t u = list[j];
        mask[u] = stamp;
        if (s1 == NONE || less(q, u, s1)) s2 = s1, s1 = u;
        else if (s2 == NONE || less(q, u, s2)) s2 = u;
    }
    choice best = {(double)q->cost[s1] - beta, s1, NONE};
    if (alpha == 2 && m >= 2) {
        choice pb = pair_of(t, i, s1, s2, shared_with(t, i, s1, s2), beta);
        uint32_t c = 0; /* candidates that can still beat pb, sorted; usually few */
        for (uint32_t j = 0; j < m; j++)
            if ((double)q->cost[list[j]] - 2 * beta <= pb.value) list[c++] = list[j];
        qsort_r(list, c, sizeof *list, cmp_key, q);
        for (uint32_t j = 0; j < c && j < PAIR_CANDIDATES; j++) {
            if ((double)q->cost[list[j]] - 2 * beta > pb.value) break;
            pairs_from(t, i, list[j], beta, mask, stamp, &pb);
        }
        if (better(&pb, &best)) best = pb;
    }
    return best;
}

int cr_tsh_data_step(const cr_bigraph *g, uint32_t k, uint32_t alpha, double beta, int sample, uint64_t seed,
                     uint32_t *u_part, cr_err *e) {
    if (k == 0) return cr_errf(e, "k must be at least 1");
    if (alpha != 1 && alpha != 2) return cr_errf(e, "tsh: alpha must be 1 or 2 (got %u)", alpha);
    uint32_t n = g->nu;
    if (n == 0) return 0;
    if (beta < 0) beta = n;
    uint64_t cap = ((uint64_t)n + k - 1) / k;
    tsh t = {.g = g, .k = k, .n = n, .words = (k + 63) / 64};
    t.q = cr_xcalloc(k, sizeof *t.q);
    uint32_t *store = cr_xmalloc((size_t)k * n * 3 * sizeof *store);
    for (uint32_t i = 0; i < k; i++) {
        heap *q = &t.q[i];
        q->h = store + (size_t)i * n * 3, q->pos = q->h + n, q->cost = q->pos + n, q->n = n;
        for (uint32_t u = 0; u < n; u++) q->cost[u] = (uint32_t)(g->u_off[u + 1] - g->u_off[u]);
        for (uint32_t u = 0; u < n; u++) place(q, u, u);
        for (uint32_t p = n / 2; p-- > 0;) sift_down(q, p);
    }
    t.in_s = cr_xcalloc((size_t)g->nv * t.words + 1, sizeof *t.in_s);
    t.cnt = cr_xcalloc(n, sizeof *t.cnt);
    t.touched = cr_xmalloc((size_t)n * sizeof *t.touched);
    t.aux = cr_xmalloc(((size_t)2 * PAIR_CANDIDATES + 4) * sizeof *t.aux);
    uint64_t *size = cr_xcalloc(k, sizeof *size);
    uint32_t *mask = sample ? cr_xcalloc(n, sizeof *mask) : NULL;
    uint32_t *list = sample ? cr_xmalloc((size_t)n * sizeof *list) : NULL;
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (uint32_t left = n, round = 1; left > 0; round++) {
        uint32_t i = 0;
        for (uint32_t j = 1; j < k; j++)
            if (size[j] < size[i]) i = j;
        heap *q = &t.q[i];
        choice best;
        if (sample) {
            best = best_in_sample(&t, i, alpha, beta, &r, mask, round, list);
        } else {
            best = (choice){(double)q->cost[q->h[0]] - beta, q->h[0], NONE};
            if (alpha == 2 && q->n >= 2) {
                choice pb = best_pair_heap(&t, i, beta);
                if (better(&pb, &best)) best = pb;
            }
        }
        if (best.b != NONE && size[i] + 2 > cap) /* keep the cheaper one of the pair */
            best = (choice){0, less(q, best.b, best.a) ? best.b : best.a, NONE};
        uint32_t a = best.a, b = best.b;
        assign(&t, a, i, u_part);
        size[i]++, left--;
        if (b != NONE) assign(&t, b, i, u_part), size[i]++, left--;
    }
    free(store);
    free(t.q);
    free(t.in_s);
    free(t.cnt);
    free(t.touched);
    free(t.aux);
    free(size);
    free(mask);
    free(list);
    return 0;
}

int cr_tsh_param_step(const cr_bigraph *g, uint32_t k, const uint32_t *u_part, uint32_t *v_part, cr_err *e) {
    if (k == 0) return cr_errf(e, "k must be at least 1");
    uint32_t nv = g->nv;
    uint32_t *cnt = cr_xcalloc((size_t)nv + 1, sizeof *cnt);
    uint64_t *stamp = cr_xcalloc(k, sizeof *stamp);
    uint64_t *len = cr_xcalloc((size_t)k + 1, sizeof *len);
    for (uint32_t v = 0; v < nv; v++) /* cnt[v] = |{i : v in N(U_i)}|, len[i] = |N(U_i)| */
        for (uint64_t j = g->v_off[v]; j < g->v_off[v + 1]; j++) {
            uint32_t c = u_part[g->v_adj[j]];
            if (stamp[c] == (uint64_t)v + 1) continue;
            stamp[c] = (uint64_t)v + 1;
            cnt[v]++;
            len[c + 1]++;
        }
    /* order parameters by (cnt, id) with a counting sort, then deal them to
     * the lists of the machines that need them: each list is sorted too */
    uint32_t *by = cr_xcalloc((size_t)k + 2, sizeof *by);
    for (uint32_t v = 0; v < nv; v++) by[cnt[v] + 1]++;
    for (uint32_t c = 0; c <= k; c++) by[c + 1] += by[c];
    uint32_t *order = cr_xmalloc(((size_t)nv + 1) * sizeof *order);
    for (uint32_t v = 0; v < nv; v++) order[by[cnt[v]]++] = v;
    int64_t *cost = cr_xmalloc(k * sizeof *cost);
    for (uint32_t i = 0; i < k; i++) cost[i] = (int64_t)len[i + 1], len[i + 1] += len[i];
    uint32_t *lists = cr_xmalloc((len[k] + 1) * sizeof *lists);
    uint64_t *ptr = cr_xmalloc(((size_t)k + 1) * sizeof *ptr), *end = cr_xmalloc(((size_t)k + 1) * sizeof *end);
    memcpy(ptr, len, k * sizeof *ptr);
    memset(stamp, 0, k * sizeof *stamp);
    for (uint32_t x = 0; x < nv; x++) {
        uint32_t v = order[x];
        for (uint64_t j = g->v_off[v]; j < g->v_off[v + 1]; j++) {
            uint32_t c = u_part[g->v_adj[j]];
            if (stamp[c] == (uint64_t)v + 1) continue;
            stamp[c] = (uint64_t)v + 1;
            lists[ptr[c]++] = v;
        }
    }
    for (uint32_t i = 0; i < k; i++) end[i] = ptr[i], ptr[i] = len[i];
    for (uint32_t v = 0; v < nv; v++) v_part[v] = NONE;
    uint32_t active = k;
    uint8_t *done = cr_xcalloc(k, 1);
    while (active > 0) {
        uint32_t i = NONE;
        for (uint32_t j = 0; j < k; j++)
            if (!done[j] && (i == NONE || cost[j] < cost[i])) i = j;
        while (ptr[i] < end[i] && v_part[lists[ptr[i]]] != NONE) ptr[i]++;
        if (ptr[i] == end[i]) {
            done[i] = 1, active--;
            continue;
        }
        uint32_t v = lists[ptr[i]++];
        v_part[v] = i;
        cost[i] += (int64_t)cnt[v] - 2;
    }
    uint32_t rr = 0;
    for (uint32_t v = 0; v < nv; v++)
        if (v_part[v] == NONE) v_part[v] = rr++ % k;
    free(cnt), free(stamp), free(len), free(by), free(order), free(cost), free(lists), free(ptr), free(end),
        free(done);
    return 0;
}

static int run_tsh(const cr_bigraph *g, uint32_t k, uint32_t alpha, const cr_part_opts *o, cr_placement *out,
               cr_err *e) {
    if (cr_tsh_data_step(g, k, alpha, o->beta, o->sample, o->seed, out->u_part, e) != 0) return -1;
    return cr_tsh_param_step(g, k, out->u_part, out->v_part, e);
}

int cr_part_tsh1(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_placement *out, cr_err *e) {
    return run_tsh(g, k, 1, o, out, e);
}

int cr_part_tsh2(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_placement *out, cr_err *e) {
    return run_tsh(g, k, 2, o, out, e);
}
