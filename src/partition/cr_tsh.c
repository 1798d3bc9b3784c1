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
 * can still beat the best pair (at most pair_cap of them when pair_cap > 0).
 * A candidate's partners come from the parameter -> examples lists of a
 * prefix of its new parameters, rarest first (pairs_from). The sampled
 * variant walks the same heap and skips examples whose coin says they are
 * not in this step's sample (in_t). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"
#include "partition/cr_partition.h"
#include "partition/cr_tsh.h"

#define NONE UINT32_MAX

/* A heap entry is its key: cost in the high 32 bits, example id in the low
 * ones, so comparing entries is comparing (cost, id) and reading a sampled
 * position needs no second load. */
#define KEY(c, u) ((uint64_t)(c) << 32 | (u))
#define ID(x) ((uint32_t)(x))
#define COST(x) ((uint32_t)((x) >> 32))

typedef struct heap {
    uint32_t n;    /* entries */
    uint64_t *h;   /* heap of keys */
    uint32_t *pos; /* id -> position, NONE when not in the heap */
} heap;

static uint32_t cost_of(const heap *q, uint32_t u) { return COST(q->h[q->pos[u]]); }

static void place(heap *q, uint32_t p, uint64_t x) {
    q->h[p] = x;
    q->pos[ID(x)] = p;
}

static void sift_up(heap *q, uint32_t p) {
    uint64_t x = q->h[p];
    while (p > 0 && x < q->h[(p - 1) / 2]) {
        place(q, p, q->h[(p - 1) / 2]);
        p = (p - 1) / 2;
    }
    place(q, p, x);
}

static void sift_down(heap *q, uint32_t p) {
    uint64_t x = q->h[p];
    for (;;) {
        uint32_t c = 2 * p + 1;
        if (c >= q->n) break;
        if (c + 1 < q->n && q->h[c + 1] < q->h[c]) c++;
        if (!(q->h[c] < x)) break;
        place(q, p, q->h[c]);
        p = c;
    }
    place(q, p, x);
}

static void heap_remove(heap *q, uint32_t u) {
    uint32_t p = q->pos[u];
    if (p == NONE) return;
    q->pos[u] = NONE;
    if (--q->n == p) return;
    uint64_t x = q->h[q->n];
    place(q, p, x);
    sift_down(q, p);
    sift_up(q, q->pos[ID(x)]);
}

/* Shared state of step 1. */
typedef struct tsh {
    const cr_bigraph *g;
    uint32_t k, n, words;
    heap *q;        /* k heaps */
    uint64_t *in_s; /* nv x words bitmask: v in N(U_i) */
    /* pair search (alpha = 2) */
    uint32_t *radj; /* each example's parameters, rarest (lowest degree, then id) first */
    uint32_t *mark; /* nv: = visit when v is a new parameter of the current candidate */
    uint32_t *cnt;  /* n: a candidate's parameters in the scanned prefix, per partner */
    uint32_t *touched; /* partners with cnt > 0 */
    uint32_t *aux;  /* walk_next: heap positions to visit */
    uint32_t na, visit;
    int all;        /* T = every unassigned example */
    uint64_t tkey, thr; /* else u is in T iff mix64(tkey + u) < thr */
    uint32_t cap;   /* candidates per pair search, UINT32_MAX = no cap */
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
            uint32_t p = q->pos[g->v_adj[b]];
            if (p == NONE) continue;
            q->h[p] -= 1ull << 32;
            sift_up(q, p);
        }
    }
}

typedef struct choice {
    double value;   /* f(U_i ∪ S) - f(U_i) - beta |S| */
    uint32_t a, b;  /* a < b, or b = NONE for a singleton */
    uint32_t union_; /* f(U_i ∪ S) - f(U_i) = |N(S) \ N(U_i)| */
} choice;

static int better(const choice *x, const choice *y) {
    if (x->value != y->value) return x->value < y->value;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}

/* Mark a's new parameters on machine i (for shared()) with a new visit
 * number (on wrap-around, old marks are cleared first). */
static void mark_new(tsh *t, uint32_t i, uint32_t a) {
    const cr_bigraph *g = t->g;
    if (++t->visit == 0) memset(t->mark, 0, ((size_t)g->nv + 1) * sizeof *t->mark), t->visit = 1;
    for (uint64_t x = g->u_off[a]; x < g->u_off[a + 1]; x++)
        if (!in_s(t, g->u_adj[x], i)) t->mark[g->u_adj[x]] = t->visit;
}

/* |N(a) ∩ N(b) \ N(U_i)| for the a last given to mark_new. */
static uint32_t shared(const tsh *t, uint32_t b) {
    const cr_bigraph *g = t->g;
    uint32_t s = 0;
    for (uint64_t x = g->u_off[b]; x < g->u_off[b + 1]; x++) s += t->mark[g->u_adj[x]] == t->visit;
    return s;
}

static choice pair_of(const tsh *t, uint32_t i, uint32_t a, uint32_t b, uint32_t sh, double beta) {
    const heap *q = &t->q[i];
    uint32_t ca = cost_of(q, a), cb = cost_of(q, b);
    choice ch = {(double)ca + cb - sh - 2 * beta, a < b ? a : b, a < b ? b : a, ca + cb - sh};
    return ch;
}

/* The pair of the two cheapest examples x1, x2 (keys): the best of all pairs
 * that share no new parameter, and the first bound for the search. */
static choice first_pair(tsh *t, uint32_t i, uint64_t x1, uint64_t x2, double beta) {
    mark_new(t, i, ID(x1));
    return pair_of(t, i, ID(x1), ID(x2), shared(t, ID(x2)), beta);
}

/* Can candidate a (key ka), or any candidate after it in (cost, id) order,
 * still give a pair at least as good as *best? A pair (a, b) with b after a
 * costs |N(a) ∪ N(b) \ N(U_i)| >= A(b) >= A(a); at A(a) = best's cost it can
 * only tie, with a as its smaller id. */
static int can_beat(uint64_t ka, const choice *best) {
    return COST(ka) < best->union_ || (COST(ka) == best->union_ && ID(ka) <= best->a);
}

/* In the sample T of this step? A hash coin per (seed, step, example) with
 * P(heads) = keep: independent over examples, so T is never drawn as a set;
 * the search below asks only about the examples it visits. */
static int in_t(const tsh *t, uint32_t u) { return t->all || cr_mix64(t->tkey + u) < t->thr; }

/* Every pair (a, b), b after a in (cost, id) order and in T, that can beat *best; updates *best. A pair costing at most
 * B = best's cost must share s >= A(a) + A(b) - B >= 2 A(a) - B new
 * parameters, so b has one of a's first A(a) - s + 1 new parameters in any
 * fixed order (the prefix filter of set-similarity joins): with the rarest
 * first, only short lists are scanned. cnt[b] counts b's hits in the prefix;
 * with r of a's new parameters left unscanned, s <= cnt[b] + r, so only
 * partners that can still reach the bound are checked in full. */
static void pairs_from(tsh *t, uint32_t i, uint64_t ka, double beta, choice *best) {
    const cr_bigraph *g = t->g;
    const heap *q = &t->q[i];
    uint32_t a = ID(ka), ca = COST(ka), used = 0, nt = 0;
    for (uint64_t x = g->u_off[a]; x < g->u_off[a + 1] && used < ca && used <= best->union_ - ca; x++) {
        uint32_t v = t->radj[x];
        if (in_s(t, v, i)) continue;
        used++;
        for (uint64_t y = g->v_off[v]; y < g->v_off[v + 1]; y++) {
            uint32_t b = g->v_adj[y], p = q->pos[b];
            if (p == NONE || q->h[p] <= ka || COST(q->h[p]) > best->union_ || !in_t(t, b)) continue;
            if (t->cnt[b]++ == 0) t->touched[nt++] = b;
        }
    }
    uint32_t rest = ca - used;
    if (rest > 0) mark_new(t, i, a);
    for (uint32_t j = 0; j < nt; j++) {
        uint32_t b = t->touched[j], hits = t->cnt[b], cb = cost_of(q, b);
        t->cnt[b] = 0;
        if ((uint64_t)hits + rest + best->union_ < (uint64_t)ca + cb) continue; /* cannot reach the bound */
        choice c = pair_of(t, i, a, b, rest ? shared(t, b) : hits, beta);
        if (better(&c, best)) *best = c;
    }
}

/* The next heap position of q in (cost, id) order whose example is in T, or
 * NONE: a walk down the heap with the positions to visit in the auxiliary
 * heap aux (na entries), O(log) per visited entry. */
static uint32_t walk_next(tsh *t, const heap *q) {
    const uint64_t *h = q->h;
    uint32_t *aux = t->aux;
    while (t->na > 0) {
        uint32_t p = aux[0];
        aux[0] = aux[--t->na];
        for (uint32_t c = 0, x;;) { /* sift down */
            x = 2 * c + 1;
            if (x >= t->na) break;
            if (x + 1 < t->na && h[aux[x + 1]] < h[aux[x]]) x++;
            if (!(h[aux[x]] < h[aux[c]])) break;
            uint32_t tmp = aux[x];
            aux[x] = aux[c], aux[c] = tmp, c = x;
        }
        for (uint32_t c = 2 * p + 1; c <= 2 * p + 2 && c < q->n; c++) { /* push children */
            uint32_t x = t->na++;
            aux[x] = c;
            while (x > 0 && h[aux[x]] < h[aux[(x - 1) / 2]]) {
                uint32_t tmp = aux[x];
                aux[x] = aux[(x - 1) / 2], aux[(x - 1) / 2] = tmp, x = (x - 1) / 2;
            }
        }
        if (in_t(t, ID(h[p]))) return p;
    }
    return NONE;
}

/* The unassigned example of rank r in id order (T was empty). O(n), rare. */
static uint64_t nth_unassigned(const heap *q, uint64_t r) {
    for (uint32_t u = 0;; u++)
        if (q->pos[u] != NONE && r-- == 0) return q->h[q->pos[u]];
}

/* The step's choice on machine i: the cheapest example of T, and for
 * alpha = 2 the best pair, starting from the two cheapest examples of T and
 * visiting T in (cost, id) order while a candidate can still beat the best
 * pair, at most t->cap candidates. T empty: one unassigned example drawn
 * uniformly by r. */
static choice best_choice(tsh *t, uint32_t i, uint32_t alpha, double beta, cr_rng *r) {
    heap *q = &t->q[i];
    t->aux[0] = 0, t->na = 1;
    uint32_t p1 = walk_next(t, q);
    uint64_t x1 = p1 != NONE ? q->h[p1] : nth_unassigned(q, cr_rng_below(r, q->n));
    choice best = {(double)COST(x1) - beta, ID(x1), NONE, COST(x1)};
    uint32_t p2 = alpha == 2 && p1 != NONE ? walk_next(t, q) : NONE;
    if (p2 == NONE) return best;
    uint64_t first[2] = {x1, q->h[p2]};
    choice pb = first_pair(t, i, x1, first[1], beta);
    for (uint32_t j = 0, seen = 0; seen < t->cap; j++, seen++) {
        uint32_t p = j < 2 ? 0 : walk_next(t, q);
        if (p == NONE) break;
        uint64_t x = j < 2 ? first[j] : q->h[p];
        if (!can_beat(x, &pb)) break;
        pairs_from(t, i, x, beta, &pb);
    }
    if (better(&pb, &best)) best = pb;
    return best;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* radj: every example's parameters ordered by (degree, id), for the prefix
 * filter of pairs_from. */
static uint32_t *rarest_first(const cr_bigraph *g) {
    uint32_t nv = g->nv, *rank = cr_xmalloc(((size_t)nv + 1) * sizeof *rank);
    uint64_t *by = cr_xmalloc(((size_t)nv + 1) * sizeof *by);
    for (uint32_t v = 0; v < nv; v++) by[v] = (g->v_off[v + 1] - g->v_off[v]) << 32 | v;
    qsort(by, nv, sizeof *by, cmp_u64);
    for (uint32_t r = 0; r < nv; r++) rank[ID(by[r])] = r;
    uint32_t *radj = cr_xmalloc((g->u_off[g->nu] + 1) * sizeof *radj);
    for (uint32_t u = 0; u < g->nu; u++) {
        uint64_t lo = g->u_off[u], d = g->u_off[u + 1] - lo;
        for (uint64_t x = 0; x < d; x++) by[x] = (uint64_t)rank[g->u_adj[lo + x]] << 32 | g->u_adj[lo + x];
        qsort(by, d, sizeof *by, cmp_u64);
        for (uint64_t x = 0; x < d; x++) radj[lo + x] = ID(by[x]);
    }
    free(rank), free(by);
    return radj;
}

int cr_tsh_data_step(const cr_bigraph *g, uint32_t k, uint32_t alpha, double beta, int sample, uint32_t pair_cap,
                     uint64_t seed, uint32_t *u_part, cr_err *e) {
    if (k == 0) return cr_errf(e, "k must be at least 1");
    if (alpha != 1 && alpha != 2) return cr_errf(e, "tsh: alpha must be 1 or 2 (got %u)", alpha);
    uint32_t n = g->nu;
    if (n == 0) return 0;
    if (beta < 0) beta = n;
    uint64_t cap = ((uint64_t)n + k - 1) / k;
    tsh t = {.g = g, .k = k, .n = n, .words = (k + 63) / 64, .cap = pair_cap ? pair_cap : UINT32_MAX};
    t.q = cr_xcalloc(k, sizeof *t.q);
    uint64_t *keys = cr_xmalloc((size_t)k * n * sizeof *keys);
    uint32_t *pos = cr_xmalloc((size_t)k * n * sizeof *pos);
    for (uint32_t i = 0; i < k; i++) {
        heap *q = &t.q[i];
        q->h = keys + (size_t)i * n, q->pos = pos + (size_t)i * n, q->n = n;
        for (uint32_t u = 0; u < n; u++) place(q, u, KEY(g->u_off[u + 1] - g->u_off[u], u));
        for (uint32_t p = n / 2; p-- > 0;) sift_down(q, p);
    }
    t.in_s = cr_xcalloc((size_t)g->nv * t.words + 1, sizeof *t.in_s);
    if (alpha == 2) {
        t.radj = rarest_first(g);
        t.mark = cr_xcalloc((size_t)g->nv + 1, sizeof *t.mark);
        t.cnt = cr_xcalloc(n, sizeof *t.cnt);
        t.touched = cr_xmalloc((size_t)n * sizeof *t.touched);
    }
    if (alpha == 2 || sample) t.aux = cr_xmalloc(((size_t)n + 4) * sizeof *t.aux);
    uint64_t *size = cr_xcalloc(k, sizeof *size);
    cr_rng r;
    cr_rng_seed(&r, seed);
    for (uint32_t left = n, round = 1; left > 0; round++) {
        uint32_t i = 0;
        for (uint32_t j = 1; j < k; j++)
            if (size[j] < size[i]) i = j;
        heap *q = &t.q[i];
        choice best = {(double)COST(q->h[0]) - beta, ID(q->h[0]), NONE, COST(q->h[0])};
        if (alpha == 2 || sample) {
            double keep = sample ? (double)n / ((double)k * q->n) : 1.0; /* T: each kept with keep */
            t.all = keep >= 1.0;
            t.thr = t.all ? 0 : (uint64_t)(keep * 0x1.0p64);
            t.tkey = cr_mix64(cr_mix64(seed) + round);
            best = best_choice(&t, i, alpha, beta, &r);
        }
        if (best.b != NONE && size[i] + 2 > cap) /* keep the cheaper one of the pair */
            best = (choice){0, q->h[q->pos[best.b]] < q->h[q->pos[best.a]] ? best.b : best.a, NONE, 0};
        uint32_t a = best.a, b = best.b;
        assign(&t, a, i, u_part);
        size[i]++, left--;
        if (b != NONE) assign(&t, b, i, u_part), size[i]++, left--;
    }
    free(keys);
    free(pos);
    free(t.q);
    free(t.in_s);
    free(t.radj);
    free(t.mark);
    free(t.cnt);
    free(t.touched);
    free(t.aux);
    free(size);
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

static int run_tsh(const cr_bigraph *g, uint32_t k, uint32_t alpha, const cr_part_opts *o, cr_assign *out,
               cr_err *e) {
    if (cr_tsh_data_step(g, k, alpha, o->beta, o->sample, o->pair_cap, o->seed, out->u_part, e) != 0) return -1;
    return cr_tsh_param_step(g, k, out->u_part, out->v_part, e);
}

int cr_part_tsh1(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e) {
    return run_tsh(g, k, 1, o, out, e);
}

int cr_part_tsh2(const cr_bigraph *g, uint32_t k, const cr_part_opts *o, cr_assign *out, cr_err *e) {
    return run_tsh(g, k, 2, o, out, e);
}
