/* Filtered link prediction (see cr_linkpred.h). Layout of this file:
 * argument checks; the filter index (sorted (key, key) -> entity
 * lists); the rank of one score row; the blocked BLAS path; the naive path. */
#include "eval/cr_linkpred.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "base/cr_rng.h"

enum { TAIL = 0, HEAD = 1 };

static int check_ids(const char *what, const cr_triples *t, int64_t n_ent, int64_t n_rel, cr_err *e) {
    for (int64_t i = 0; i < t->n; i++) {
        const int64_t *x = t->spo + 3 * i;
        if (x[0] < 0 || x[0] >= n_ent || x[2] < 0 || x[2] >= n_ent)
            return cr_errf(e, "%s triple %lld: entity id %lld out of range [0, %lld)", what,
                           (long long)i + 1, (long long)(x[0] < 0 || x[0] >= n_ent ? x[0] : x[2]),
                           (long long)n_ent);
        if (x[1] < 0 || x[1] >= n_rel)
            return cr_errf(e, "%s triple %lld: relation id %lld out of range [0, %lld)", what,
                           (long long)i + 1, (long long)x[1], (long long)n_rel);
    }
    return 0;
}

static int check_args(cr_kge_model model, const cr_mat *ent, const cr_mat *rel, const cr_triples *test,
                      const cr_triples *filter, int nfilter, cr_err *e) {
    int64_t d = ent->cols;
    if (ent->rows <= 0 || d <= 0) return cr_errf(e, "entity matrix is empty");
    if (model == CR_KGE_COMPLEX && d % 2)
        return cr_errf(e, "complex: entity dimension %lld is odd (vectors are [re | im] halves)", (long long)d);
    int64_t want = model == CR_KGE_RESCAL ? d * d : d;
    if (rel->cols != want)
        return cr_errf(e, "relation matrix has %lld columns, expected %lld (%s)", (long long)rel->cols,
                       (long long)want, model == CR_KGE_RESCAL ? "d*d for rescal" : "the entity dimension");
    if (test->n <= 0) return cr_errf(e, "no test triples");
    if (check_ids("test", test, ent->rows, rel->rows, e)) return -1;
    for (int f = 0; f < nfilter; f++) {
        char what[32];
        snprintf(what, sizeof what, "filter list %d", f + 1);
        if (check_ids(what, &filter[f], ent->rows, rel->rows, e)) return -1;
    }
    return 0;
}

/* ---- filter index: for direction TAIL the key is (s, r) and the value o,
 * for HEAD the key is (o, r) and the value s; sorted and deduplicated. */

typedef struct {
    int64_t k1, k2, v;
} kv;

typedef struct {
    kv *a;
    int64_t n;
} kv_index;

static int kv_cmp(const void *pa, const void *pb) {
    const kv *a = pa, *b = pb;
    if (a->k1 != b->k1) return a->k1 < b->k1 ? -1 : 1;
    if (a->k2 != b->k2) return a->k2 < b->k2 ? -1 : 1;
    return (a->v > b->v) - (a->v < b->v);
}

static void index_build(kv_index *ix, int dir, const cr_triples *test, const cr_triples *filter, int nfilter) {
    int64_t n = test->n;
    for (int f = 0; f < nfilter; f++) n += filter[f].n;
    ix->a = cr_xmalloc((size_t)n * sizeof(kv));
    int64_t m = 0;
    for (int f = -1; f < nfilter; f++) {
        const cr_triples *t = f < 0 ? test : &filter[f];
        for (int64_t i = 0; i < t->n; i++) {
            const int64_t *x = t->spo + 3 * i;
            ix->a[m++] = dir == TAIL ? (kv){x[0], x[1], x[2]} : (kv){x[2], x[1], x[0]};
        }
    }
    qsort(ix->a, (size_t)m, sizeof(kv), kv_cmp);
    int64_t u = 0;
    for (int64_t i = 0; i < m; i++)
        if (u == 0 || kv_cmp(&ix->a[u - 1], &ix->a[i]) != 0) ix->a[u++] = ix->a[i];
    ix->n = u;
}

/* First position with key >= (k1, k2). */
static int64_t index_find(const kv_index *ix, int64_t k1, int64_t k2) {
    int64_t lo = 0, hi = ix->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        const kv *x = &ix->a[mid];
        if (x->k1 < k1 || (x->k1 == k1 && x->k2 < k2)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Filtered rank of entity `target` in scores[0..n_ent): the mean-of-ties
 * rank among the entities that are not other known answers of the query. */
static double rank_row(const float *scores, int64_t n_ent, int64_t target, const kv_index *ix,
                       int64_t k1, int64_t k2) {
    float st = scores[target];
    int64_t higher = 0, equal = 0, known = 0;
    int64_t p = index_find(ix, k1, k2);
    if (!isfinite(st)) {
        for (; p < ix->n && ix->a[p].k1 == k1 && ix->a[p].k2 == k2; p++) known += ix->a[p].v != target;
        return (double)(n_ent - known);
    }
    for (int64_t j = 0; j < n_ent; j++) {
        higher += scores[j] > st;
        equal += scores[j] == st;
    }
    equal--; /* the target itself */
    for (; p < ix->n && ix->a[p].k1 == k1 && ix->a[p].k2 == k2; p++) {
        int64_t j = ix->a[p].v;
        if (j == target) continue;
        if (scores[j] > st) higher--;
        else if (scores[j] == st) equal--;
    }
    return 1.0 + (double)higher + (double)equal / 2.0;
}

/* ---- blocked path */

/* Query vector q for one triple and direction such that the score of
 * candidate entity x is q . e_x (bilinear models), or the point a such that
 * the score is -||a - e_x|| (TransE). */
static void make_query(cr_kge_model model, int dir, const cr_mat *ent, const cr_mat *rel, const int64_t *t,
                       float *q) {
    int64_t d = ent->cols;
    const float *s = cr_mat_row(ent, t[0]), *r = cr_mat_row(rel, t[1]), *o = cr_mat_row(ent, t[2]);
    if (model == CR_KGE_TRANSE_L1 || model == CR_KGE_TRANSE_L2) /* tail: a = s + r; head: a = o - r */
        for (int64_t i = 0; i < d; i++) q[i] = dir == TAIL ? s[i] + r[i] : o[i] - r[i];
    else cr_kge_score_query(model, dir == TAIL ? CR_KGE_TAIL : CR_KGE_HEAD, dir == TAIL ? s : o, r, d, q);
}

/* Scores of nq queries (rows of Q) against all entities into S (nq x n_ent).
 * For TransE L2 the score is 2 a.e - |e|^2, which is -||a - e||^2 plus a
 * per-query constant, so the order is the same. */
static void score_block(cr_kge_model model, const cr_mat *ent, const float *ent_sq, const float *Q, int64_t nq,
                        float *S) {
    int64_t n = ent->rows, d = ent->cols;
    if (model != CR_KGE_TRANSE_L1) {
        float alpha = model == CR_KGE_TRANSE_L2 ? 2.0f : 1.0f;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)n, (int)d, alpha, Q, (int)d,
                    ent->data, (int)d, 0.0f, S, (int)n);
        if (model == CR_KGE_TRANSE_L2)
            for (int64_t i = 0; i < nq; i++)
                for (int64_t j = 0; j < n; j++) S[i * n + j] -= ent_sq[j];
        return;
    }
    enum { TILE = 128 }; /* entity rows per tile: TILE * d floats stay in L2 */
    for (int64_t j0 = 0; j0 < n; j0 += TILE) {
        int64_t j1 = j0 + TILE < n ? j0 + TILE : n;
        for (int64_t i = 0; i < nq; i++) {
            const float *a = Q + i * d;
            for (int64_t j = j0; j < j1; j++) {
                const float *b = ent->data + j * d;
                float acc = 0;
                for (int64_t k = 0; k < d; k++) acc += fabsf(a[k] - b[k]);
                S[i * n + j] = -acc;
            }
        }
    }
}

static void eval_blocked(cr_kge_model model, const cr_mat *ent, const cr_mat *rel, const cr_triples *test,
                         const kv_index ix[2], int64_t block, double *ranks) {
    int64_t n = ent->rows, d = ent->cols;
    if (block <= 0) block = ((int64_t)1 << 22) / n; /* a score block of about 16 MB */
    block = block < 1 ? 1 : block > 512 ? 512 : block;
    if (block > test->n) block = test->n;
    float *Q = cr_xmalloc((size_t)(block * d) * sizeof(float));
    float *S = cr_xmalloc((size_t)(block * n) * sizeof(float));
    float *ent_sq = NULL;
    if (model == CR_KGE_TRANSE_L2) {
        ent_sq = cr_xmalloc((size_t)n * sizeof(float));
        for (int64_t j = 0; j < n; j++) {
            const float *b = cr_mat_row(ent, j);
            float acc = 0;
            for (int64_t k = 0; k < d; k++) acc += b[k] * b[k];
            ent_sq[j] = acc;
        }
    }
    for (int dir = TAIL; dir <= HEAD; dir++)
        for (int64_t b0 = 0; b0 < test->n; b0 += block) {
            int64_t nq = test->n - b0 < block ? test->n - b0 : block;
            for (int64_t i = 0; i < nq; i++) make_query(model, dir, ent, rel, test->spo + 3 * (b0 + i), Q + i * d);
            score_block(model, ent, ent_sq, Q, nq, S);
            for (int64_t i = 0; i < nq; i++) {
                const int64_t *t = test->spo + 3 * (b0 + i);
                int64_t target = dir == TAIL ? t[2] : t[0], k1 = dir == TAIL ? t[0] : t[2];
                ranks[dir * test->n + b0 + i] = rank_row(S + i * n, n, target, &ix[dir], k1, t[1]);
            }
        }
    free(Q);
    free(S);
    free(ent_sq);
}

/* ---- naive path: the score function itself (cr_kge_score), per triple and
 * entity */

static float naive_score(cr_kge_model model, const cr_mat *ent, const cr_mat *rel, int64_t si, int64_t ri,
                         int64_t oi) {
    return cr_kge_score(model, cr_mat_row(ent, si), cr_mat_row(rel, ri), cr_mat_row(ent, oi), ent->cols);
}

/* Open-addressing hash set of triples (s, r, o). */
typedef struct {
    int64_t *slots; /* 3 ids per slot; s = -1 marks an empty slot */
    uint64_t mask;
} tset;

static uint64_t thash(int64_t s, int64_t r, int64_t o) {
    return cr_mix64((uint64_t)s * 0x9E3779B97F4A7C15ull ^ cr_mix64((uint64_t)r ^ cr_mix64((uint64_t)o)));
}

static void tset_add(tset *h, const int64_t *x) {
    for (uint64_t p = thash(x[0], x[1], x[2]) & h->mask;; p = (p + 1) & h->mask) {
        int64_t *slot = h->slots + 3 * p;
        if (slot[0] < 0) {
            memcpy(slot, x, 3 * sizeof(int64_t));
            return;
        }
        if (slot[0] == x[0] && slot[1] == x[1] && slot[2] == x[2]) return;
    }
}

static int tset_has(const tset *h, int64_t s, int64_t r, int64_t o) {
    for (uint64_t p = thash(s, r, o) & h->mask;; p = (p + 1) & h->mask) {
        const int64_t *slot = h->slots + 3 * p;
        if (slot[0] < 0) return 0;
        if (slot[0] == s && slot[1] == r && slot[2] == o) return 1;
    }
}

static void tset_build(tset *h, const cr_triples *test, const cr_triples *filter, int nfilter) {
    int64_t n = test->n;
    for (int f = 0; f < nfilter; f++) n += filter[f].n;
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2) cap <<= 1;
    h->mask = cap - 1;
    h->slots = cr_xmalloc(cap * 3 * sizeof(int64_t));
    for (uint64_t i = 0; i < cap; i++) h->slots[3 * i] = -1;
    for (int f = -1; f < nfilter; f++) {
        const cr_triples *t = f < 0 ? test : &filter[f];
        for (int64_t i = 0; i < t->n; i++) tset_add(h, t->spo + 3 * i);
    }
}

static void eval_naive(cr_kge_model model, const cr_mat *ent, const cr_mat *rel, const cr_triples *test,
                       const tset *known, double *ranks) {
    int64_t n = ent->rows;
    for (int dir = TAIL; dir <= HEAD; dir++)
        for (int64_t i = 0; i < test->n; i++) {
            const int64_t *t = test->spo + 3 * i;
            int64_t target = dir == TAIL ? t[2] : t[0];
            float st = naive_score(model, ent, rel, t[0], t[1], t[2]);
            int64_t higher = 0, equal = 0, others = 0;
            for (int64_t x = 0; x < n; x++) {
                if (x == target) continue;
                int64_t s = dir == TAIL ? t[0] : x, o = dir == TAIL ? x : t[2];
                float sc = isfinite(st) ? naive_score(model, ent, rel, s, t[1], o) : 0;
                if (isfinite(st) && sc < st) continue; /* cannot matter: skip the lookup */
                if (tset_has(known, s, t[1], o)) continue;
                others++;
                higher += sc > st;
                equal += sc == st;
            }
            ranks[dir * test->n + i] = isfinite(st) ? 1.0 + (double)higher + (double)equal / 2.0
                                                    : (double)(others + 1);
        }
}

int cr_linkpred_eval(cr_kge_model model, const cr_mat *ent, const cr_mat *rel, const cr_triples *test,
                     const cr_triples *filter, int nfilter, const cr_lp_opts *opts, cr_lp_result *out,
                     double *ranks, cr_err *e) {
    if (check_args(model, ent, rel, test, filter, nfilter, e)) return -1;
    double *rk = ranks ? ranks : cr_xmalloc((size_t)(2 * test->n) * sizeof(double));
    if (opts && opts->naive) {
        tset known;
        tset_build(&known, test, filter, nfilter);
        eval_naive(model, ent, rel, test, &known, rk);
        free(known.slots);
    } else {
        kv_index ix[2];
        for (int dir = TAIL; dir <= HEAD; dir++) index_build(&ix[dir], dir, test, filter, nfilter);
        eval_blocked(model, ent, rel, test, ix, opts ? opts->block : 0, rk);
        free(ix[0].a);
        free(ix[1].a);
    }
    memset(out, 0, sizeof *out);
    int64_t n = test->n;
    for (int64_t q = 0; q < 2 * n; q++) {
        double r = rk[q];
        out->mrr += 1.0 / r;
        out->mr += r;
        out->hits1 += r <= 1;
        out->hits3 += r <= 3;
        out->hits10 += r <= 10;
        if (q < n) out->mrr_tail += 1.0 / r;
        else out->mrr_head += 1.0 / r;
    }
    out->queries = 2 * n;
    double m = (double)(2 * n);
    out->mrr /= m;
    out->mr /= m;
    out->hits1 /= m;
    out->hits3 /= m;
    out->hits10 /= m;
    out->mrr_tail /= (double)n;
    out->mrr_head /= (double)n;
    if (!ranks) free(rk);
    return 0;
}
