/* k-way FM refinement of a bipartite placement (MBP step 3). Gains are the
 * decrease in the estimated T_sum (see cr_mbp.h): machine j needs
 * need(v, j) = min(w(v), cnt_j(v)) of the originals inside coarse parameter
 * v, an upper bound that is exact on the finest level. Highest gain first through a
 * lazy max-heap: a popped vertex's gain is recomputed and the vertex is
 * pushed back when it went down, so no eager update of every
 * neighbour-of-neighbour is needed after a move. */
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "partition/cr_mbp.h"

static inline int64_t need(uint32_t w, uint32_t c) { return c < w ? c : w; }

int cr_fm_init(cr_fm *fm, const cr_wgraph *g, uint32_t k, uint32_t *up, uint32_t *vp,
               uint64_t ubound, uint64_t mem_bound, cr_err *e) {
    memset(fm, 0, sizeof *fm);
    fm->g = g;
    fm->k = k;
    fm->up = up;
    fm->vp = vp;
    fm->ubound = ubound;
    fm->mem_bound = mem_bound;
    fm->cnt = cr_xcalloc((size_t)g->nv * k + 1, sizeof *fm->cnt);
    fm->uload = cr_xcalloc(k, sizeof *fm->uload);
    fm->vload = cr_xcalloc(k, sizeof *fm->vload);
    fm->mem = cr_xcalloc(k, sizeof *fm->mem);
    fm->scratch = cr_xcalloc(2 * (size_t)k, sizeof *fm->scratch);
    for (uint32_t u = 0; u < g->nu; u++) {
        fm->uload[up[u]] += g->uw[u];
        for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) {
            uint32_t *c = &fm->cnt[(size_t)g->u_adj[a] * k + up[u]];
            if (*c > UINT32_MAX - g->u_mul[a]) {
                cr_fm_free(fm);
                return cr_errf(e, "mbp: edge multiplicity overflow");
            }
            *c += g->u_mul[a];
        }
    }
    for (uint32_t v = 0; v < g->nv; v++) {
        fm->vload[vp[v]] += g->vw[v];
        for (uint32_t j = 0; j < k; j++) fm->mem[j] += (uint64_t)need(g->vw[v], fm->cnt[(size_t)v * k + j]);
    }
    /* one unit of excess memory outweighs any T_sum change of one move */
    int64_t maxdeg = 0;
    for (uint32_t u = 0; u < g->nu; u++) {
        int64_t d = 0;
        for (uint64_t a = g->u_off[u]; a < g->u_off[u + 1]; a++) d += g->vw[g->u_adj[a]];
        if (d > maxdeg) maxdeg = d;
    }
    fm->penalty = 4 * maxdeg + 2;
    return 0;
}

void cr_fm_free(cr_fm *fm) {
    free(fm->cnt);
    free(fm->uload);
    free(fm->vload);
    free(fm->mem);
    free(fm->scratch);
    fm->cnt = NULL;
    fm->uload = fm->vload = fm->mem = NULL;
    fm->scratch = NULL;
}

/* Cost change at machine j (not the owner) when cnt_j(v) goes c -> c + d. */
static inline int64_t dneed(uint32_t w, uint32_t c, int64_t d) {
    return need(w, (uint32_t)((int64_t)c + d)) - need(w, c);
}

int64_t cr_fm_gain_u(const cr_fm *fm, uint32_t u, uint32_t b) {
    const cr_wgraph *g = fm->g;
    uint32_t a = fm->up[u], k = fm->k;
    if (a == b) return 0;
    int64_t gain = 0;
    for (uint64_t i = g->u_off[u]; i < g->u_off[u + 1]; i++) {
        uint32_t v = g->u_adj[i], s = fm->vp[v], w = g->vw[v], m = g->u_mul[i];
        const uint32_t *c = &fm->cnt[(size_t)v * k];
        if (s != a) gain -= dneed(w, c[a], -(int64_t)m);
        if (s != b) gain -= dneed(w, c[b], m);
    }
    return 2 * gain;
}

int64_t cr_fm_gain_v(const cr_fm *fm, uint32_t v, uint32_t b) {
    uint32_t a = fm->vp[v], w = fm->g->vw[v];
    const uint32_t *c = &fm->cnt[(size_t)v * fm->k];
    return 2 * (need(w, c[b]) - need(w, c[a]));
}

uint64_t cr_fm_tsum(const cr_fm *fm) {
    uint64_t t = 0;
    for (uint32_t v = 0; v < fm->g->nv; v++) {
        const uint32_t *c = &fm->cnt[(size_t)v * fm->k];
        for (uint32_t j = 0; j < fm->k; j++)
            if (j != fm->vp[v]) t += (uint64_t)need(fm->g->vw[v], c[j]);
    }
    return 2 * t;
}

void cr_fm_move_u(cr_fm *fm, uint32_t u, uint32_t b) {
    const cr_wgraph *g = fm->g;
    uint32_t a = fm->up[u], k = fm->k;
    if (a == b) return;
    for (uint64_t i = g->u_off[u]; i < g->u_off[u + 1]; i++) {
        uint32_t v = g->u_adj[i];
        uint32_t *c = &fm->cnt[(size_t)v * k], w = g->vw[v], m = g->u_mul[i];
        fm->mem[a] = (uint64_t)((int64_t)fm->mem[a] + dneed(w, c[a], -(int64_t)m));
        fm->mem[b] = (uint64_t)((int64_t)fm->mem[b] + dneed(w, c[b], m));
        c[a] -= m;
        c[b] += m;
    }
    fm->uload[a] -= g->uw[u];
    fm->uload[b] += g->uw[u];
    fm->up[u] = b;
}

void cr_fm_move_v(cr_fm *fm, uint32_t v, uint32_t b) {
    fm->vload[fm->vp[v]] -= fm->g->vw[v];
    fm->vload[b] += fm->g->vw[v];
    fm->vp[v] = b;
}

static int64_t excess(const cr_fm *fm, int64_t m) {
    int64_t x = m - (int64_t)fm->mem_bound;
    return x > 0 ? x : 0;
}

/* Best feasible move of u: target in *to, returns its gain (INT64_MIN when
 * no target keeps the balance bound). With a memory bound the gain is that
 * of the penalised objective T_sum + penalty * sum_j max(0, mem_j - bound),
 * so moves that shrink an overfull machine come first. Ties: the lighter
 * target, then the lower id. */
static int64_t best_u(const cr_fm *fm, uint32_t u, uint32_t *to) {
    const cr_wgraph *g = fm->g;
    uint32_t a = fm->up[u], k = fm->k;
    /* addm[b]: memory increase at b; own[b]: the part of it on parameters b
     * owns, which costs no traffic (T increase = addm - own) */
    int64_t *addm = fm->scratch, *own = fm->scratch + k;
    memset(fm->scratch, 0, 2 * (size_t)k * sizeof *fm->scratch);
    int64_t rel = 0, relm = 0;
    for (uint64_t i = g->u_off[u]; i < g->u_off[u + 1]; i++) {
        uint32_t v = g->u_adj[i], s = fm->vp[v], w = g->vw[v], m = g->u_mul[i];
        const uint32_t *c = &fm->cnt[(size_t)v * k];
        int64_t r = -dneed(w, c[a], -(int64_t)m);
        relm += r;
        if (s != a) rel += r;
        for (uint32_t b = 0; b < k; b++) { /* branch-free: min(w - c, m) when c < w, else 0 */
            uint32_t room = c[b] < w ? w - c[b] : 0;
            addm[b] += room < m ? room : m;
        }
        own[s] += c[s] < w ? (w - c[s] < m ? w - c[s] : m) : 0;
    }
    int64_t *addt = own;
    for (uint32_t b = 0; b < k; b++) addt[b] = addm[b] - own[b];
    int64_t best = INT64_MIN, pen_a = 0;
    if (fm->mem_bound)
        pen_a = fm->penalty * (excess(fm, (int64_t)fm->mem[a]) - excess(fm, (int64_t)fm->mem[a] - relm));
    for (uint32_t b = 0; b < k; b++) {
        if (b == a || fm->uload[b] + g->uw[u] > fm->ubound) continue;
        int64_t gn = 2 * (rel - addt[b]);
        if (fm->mem_bound)
            gn += pen_a - fm->penalty * (excess(fm, (int64_t)fm->mem[b] + addm[b]) -
                                         excess(fm, (int64_t)fm->mem[b]));
        if (gn > best || (gn == best && fm->uload[b] < fm->uload[*to])) best = gn, *to = b;
    }
    return best;
}

/* Best move of v: to the machine needing most of it, the lightest server
 * among equals. */
static int64_t best_v(const cr_fm *fm, uint32_t v, uint32_t *to) {
    uint32_t a = fm->vp[v], k = fm->k, w = fm->g->vw[v];
    const uint32_t *c = &fm->cnt[(size_t)v * k];
    int64_t best = 0, na = need(w, c[a]);
    for (uint32_t b = 0; b < k; b++) {
        int64_t gn = need(w, c[b]) - na;
        if (gn > best || (gn == best && gn > 0 && fm->vload[b] < fm->vload[*to])) best = gn, *to = b;
    }
    return 2 * best;
}

/* Max-heap of (gain, id); id < nu is a U vertex, else V vertex id - nu. */
typedef struct hent {
    int64_t gain;
    uint64_t id;
} hent;
typedef struct heap {
    hent *a;
    size_t n;
} heap;

static int above(const hent *x, const hent *y) {
    return x->gain > y->gain || (x->gain == y->gain && x->id < y->id);
}

static void hpush(heap *h, int64_t gain, uint64_t id) {
    size_t i = h->n++;
    hent x = {gain, id};
    while (i > 0 && above(&x, &h->a[(i - 1) / 2])) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = x;
}

static hent hpop(heap *h) {
    hent top = h->a[0], x = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && above(&h->a[c + 1], &h->a[c])) c++;
        if (!above(&h->a[c], &x)) break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n) h->a[i] = x;
    return top;
}

/* One pass. Moves go highest gain first; once no positive move is left the
 * pass goes on with the best non-positive U moves (hill climbing, as in FM)
 * for at most `stall` moves without a new best total, then undoes every move
 * after the best prefix. Returns the T_sum decrease kept (>= 0). */
typedef struct logent {
    uint64_t id;
    uint32_t from;
} logent;

static void undo(cr_fm *fm, const logent *l, uint64_t nu) {
    if (l->id < nu) cr_fm_move_u(fm, (uint32_t)l->id, l->from);
    else cr_fm_move_v(fm, (uint32_t)(l->id - nu), l->from);
}

static int64_t pass(cr_fm *fm, heap *h, uint8_t *state, logent *log, uint64_t stall) {
    const cr_wgraph *g = fm->g;
    uint64_t nu = g->nu, n = nu + g->nv, nlog = 0, best_len = 0, since = 0;
    int64_t cur = 0, best = 0;
    uint32_t to = 0;
    h->n = 0;
    memset(state, 0, n); /* 0 idle, 1 in heap, 2 moved */
    for (uint64_t id = 0; id < n; id++) {
        int64_t gn = id < nu ? best_u(fm, (uint32_t)id, &to) : best_v(fm, (uint32_t)(id - nu), &to);
        if (gn > 0 || (id < nu && gn != INT64_MIN)) hpush(h, gn, id), state[id] = 1;
    }
    while (h->n && since < stall) {
        hent t = hpop(h);
        state[t.id] = 0;
        int is_u = t.id < nu;
        int64_t gn = is_u ? best_u(fm, (uint32_t)t.id, &to) : best_v(fm, (uint32_t)(t.id - nu), &to);
        if (gn == INT64_MIN || (!is_u && gn <= 0)) continue;
        if (gn < t.gain) {
            hpush(h, gn, t.id), state[t.id] = 1;
            continue;
        }
        state[t.id] = 2;
        if (!is_u) {
            log[nlog++] = (logent){t.id, fm->vp[t.id - nu]};
            cr_fm_move_v(fm, (uint32_t)(t.id - nu), to);
        } else {
            uint32_t u = (uint32_t)t.id, a = fm->up[u];
            log[nlog++] = (logent){t.id, a};
            cr_fm_move_u(fm, u, to);
            /* parameters a needs less now may gain by moving to a bigger user */
            for (uint64_t i = g->u_off[u]; i < g->u_off[u + 1]; i++) {
                uint32_t v = g->u_adj[i];
                if (fm->vp[v] != a || state[nu + v]) continue;
                int64_t gv = best_v(fm, v, &to);
                if (gv > 0) hpush(h, gv, nu + v), state[nu + v] = 1;
            }
        }
        cur += gn;
        if (cur > best) best = cur, best_len = nlog, since = 0;
        else since++;
    }
    while (nlog > best_len) undo(fm, &log[--nlog], nu);
    return best;
}

uint64_t cr_fm_refine(cr_fm *fm, int max_passes, uint64_t stall) {
    uint64_t n = (uint64_t)fm->g->nu + fm->g->nv, total = 0;
    heap h = {cr_xmalloc((n + 1) * sizeof(hent)), 0};
    uint8_t *state = cr_xmalloc(n + 1);
    logent *log = cr_xmalloc((n + 1) * sizeof *log);
    for (int p = 0; p < max_passes; p++) {
        int64_t d = pass(fm, &h, state, log, stall ? stall : 1);
        total += (uint64_t)d;
        if (d == 0) break;
    }
    free(h.a);
    free(state);
    free(log);
    return total;
}
