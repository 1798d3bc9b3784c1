/* word2vec kernels for model scripts: part of crescent.core.kernels.
 * word2vec (lua/models/word2vec.lua; the math in src/kernels/cr_w2v.h):
 *   kernels.w2v_sgns(in, out, syn0, syn1, negs [, opts]) -> loss, pairs, neg_pos
 *   kernels.w2v_cbow(in, out, syn0, syn1, negs [, opts]) -> loss, pairs, neg_pos
 *       in, out: crescent.Ints, per token its 0-based row of syn0 / syn1
 *       (crescent.Matrix, the pulled rows); negs: crescent.Ints of syn1 rows.
 *       Trains skip-gram / CBOW over the tokens in place. opts: window (5),
 *       negative (5, per update), alpha (0.025), seed (0, window shrink),
 *       neg_mode ("pool": negs read cyclically from neg_pos (0), k per
 *       update; "position": negs[i*k .. i*k+k) for token i), sigmoid
 *       ("table" or "exact"), loss (true), sentences (crescent.Ints of
 *       offsets 0..#in; windows stay inside), grad_lr (> 0: the matrices
 *       become (before - after) / grad_lr, to push to an sgd table with lr
 *       grad_lr). neg_pos is where the pool continues.
 *   kernels.w2v_subsample(words, counts [, opts]) -> kept (crescent.Ints)
 *       words: ids into counts (crescent.Ints); opts: sample (1e-3), seed
 *       (0), total (0: sum of counts). The tool's keep probability.
 *   kernels.w2v_init(syn0, syn1, seed): uniform in [-0.5/d, 0.5/d), zero.
 * Misuse (wrong shapes, names, indices) raises, naming the function. */
#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "kernels/cr_mf.h"
#include "kernels/cr_w2v.h"
#include "lua/l_modules.h"
#include "lua/l_opt.h"
#include "lua/l_util.h"

/* ---- word2vec (lua/models/word2vec.lua; kernels/cr_w2v.h) ---- */

/* The options of w2v_sgns / w2v_cbow. */
typedef struct w2v_opts {
    int64_t window, negative, seed, neg_pos;
    double alpha, grad_lr;
    int neg_mode, sigmoid, loss;
} w2v_opts;

static const char *const w2v_neg_modes[] = {"pool", "position", NULL};
static const char *const w2v_sigmoids[] = {"table", "exact", NULL};

#define WO(f) offsetof(w2v_opts, f)
static const cr_opt w2v_rows[] = {
    {"window", CR_OPT_INT, WO(window), CR_OPT_RANGE, 1, 1000, "5", NULL, "largest window (shrunk at random per word)",
     NULL, NULL},
    {"negative", CR_OPT_INT, WO(negative), CR_OPT_RANGE, 0, CR_W2V_MAX_NEG, "5", NULL, "negatives per update", NULL,
     NULL},
    {"alpha", CR_OPT_DOUBLE, WO(alpha), CR_OPT_RANGE, 0, 1e9, "0.025", NULL, "learning rate of this call", NULL,
     NULL},
    {"seed", CR_OPT_INT, WO(seed), 0, 0, 0, "0", NULL, "window shrink draws", NULL, NULL},
    {"neg_mode", CR_OPT_ENUM, WO(neg_mode), 0, 0, 0, "pool", NULL, "negatives: a pool read cyclically, or k per token",
     w2v_neg_modes, NULL},
    {"neg_pos", CR_OPT_INT, WO(neg_pos), CR_OPT_RANGE, 0, INT64_MAX, "0", NULL, "pool position to start at", NULL,
     NULL},
    {"sigmoid", CR_OPT_ENUM, WO(sigmoid), 0, 0, 0, "table", NULL, "the tool's table or exact", w2v_sigmoids, NULL},
    {"loss", CR_OPT_FLAG, WO(loss), 0, 0, 0, "1", NULL, "compute the loss", NULL, NULL},
    {"grad_lr", CR_OPT_DOUBLE, WO(grad_lr), CR_OPT_RANGE, 0, 1e9, "0", NULL,
     "> 0: return (before - after) / grad_lr in the matrices", NULL, NULL},
    {"sentences", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "sentence offsets (crescent.Ints 0..n)", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* [-0, +1] An int32 copy of the vector at idx (a Lua-owned userdata, so a
 * later raise leaks nothing); each value must be in [0, hi). */
static int32_t *w2v_rows_arg(lua_State *L, int idx, int64_t hi, const char *what) {
    cr_ints *v = cr_lints_check(L, idx);
    int32_t *r = lua_newuserdatauv(L, (size_t)(v->n ? v->n : 1) * sizeof *r, 0);
    for (int64_t i = 0; i < v->n; i++) {
        if (v->data[i] < 0 || v->data[i] >= hi)
            luaL_error(L, "%s %d is %d, not a row of its matrix (0..%d)", what, (int)(i + 1), (int)v->data[i],
                       (int)hi - 1);
        r[i] = (int32_t)v->data[i];
    }
    return r;
}

/* [-0, +1] opts.sentences as offsets checked against n tokens (NULL if absent). */
static const int64_t *w2v_sentences(lua_State *L, int opts, int64_t n, int64_t *nsent) {
    if (lua_isnoneornil(L, opts)) {
        lua_pushnil(L);
        return NULL;
    }
    if (lua_getfield(L, opts, "sentences") == LUA_TNIL) return NULL;
    cr_ints *s = cr_lints_test(L, -1);
    if (!s) luaL_error(L, "option 'sentences' must be a crescent.Ints of offsets");
    if (s->n < 1 || s->data[0] != 0 || s->data[s->n - 1] != n)
        luaL_error(L, "option 'sentences' must run from 0 to the number of tokens (%d)", (int)n);
    for (int64_t k = 1; k < s->n; k++)
        if (s->data[k] < s->data[k - 1]) luaL_error(L, "option 'sentences' must ascend (entry %d)", (int)k + 1);
    *nsent = s->n - 1;
    return s->data;
}

typedef void (*w2v_train_fn)(const cr_w2v_batch *, const cr_w2v_params *, cr_w2v_negs *, cr_rng *, cr_mat *,
                             cr_mat *, cr_w2v_stats *);

/* [-0, +1] Copy of m's values (Lua-owned) when grad_lr > 0, else NULL. */
static float *w2v_keep(lua_State *L, const cr_mat *m, double grad_lr) {
    if (!(grad_lr > 0)) {
        lua_pushnil(L);
        return NULL;
    }
    size_t n = (size_t)(m->rows * m->cols);
    float *c = lua_newuserdatauv(L, (n ? n : 1) * sizeof *c, 0);
    memcpy(c, m->data, n * sizeof *c);
    return c;
}

/* w2v_sgns / w2v_cbow(in, out, syn0, syn1, negs [, opts]) -> loss, pairs, neg_pos */
static int w2v_train(lua_State *L, w2v_train_fn train, const char *fn) {
    cr_mat *s0 = cr_lmat_check(L, 3), *s1 = cr_lmat_check(L, 4);
    cr_ints *vin = cr_lints_check(L, 1), *vneg = cr_lints_check(L, 5);
    luaL_argcheck(L, cr_lints_check(L, 2)->n == vin->n, 2, "in and out must have the same length");
    if (s0->cols != s1->cols || s0->cols < 1 || s0->cols > CR_W2V_MAX_DIM)
        luaL_error(L, "%s: syn0 and syn1 must have the same number of columns, 1..%d (got %d and %d)", fn,
                   CR_W2V_MAX_DIM, (int)s0->cols, (int)s1->cols);
    const cr_lopt_set set = {fn, NULL, w2v_rows};
    w2v_opts o;
    cr_lopt_read(L, 6, &set, &o);
    int64_t nsent = 0;
    const int64_t *sent = w2v_sentences(L, 6, vin->n, &nsent);
    cr_w2v_batch b = {vin->n, w2v_rows_arg(L, 1, s0->rows, "in"), w2v_rows_arg(L, 2, s1->rows, "out"), sent, nsent};
    cr_w2v_negs ng = {(int)o.negative, w2v_rows_arg(L, 5, s1->rows, "negative"), vneg->n, o.neg_mode == 1,
                      o.neg_pos, NULL, NULL};
    const char *why;
    if (cr_w2v_check(&b, &ng, s0->rows, s1->rows, &why)) luaL_error(L, "%s: %s", fn, why);
    float *k0 = w2v_keep(L, s0, o.grad_lr), *k1 = w2v_keep(L, s1, o.grad_lr);
    cr_w2v_params p = {(int)o.window, (float)o.alpha, o.sigmoid == 1, o.loss};
    cr_rng r;
    cr_rng_seed(&r, (uint64_t)o.seed);
    cr_w2v_stats st = {0, 0};
    train(&b, &p, &ng, &r, s0, s1, &st);
    if (k0) {
        cr_mf_delta_to_grad(s0, k0, (float)o.grad_lr);
        cr_mf_delta_to_grad(s1, k1, (float)o.grad_lr);
    }
    lua_pushnumber(L, st.loss);
    lua_pushinteger(L, st.pairs);
    lua_pushinteger(L, ng.pos);
    return 3;
}

static int l_w2v_sgns(lua_State *L) { return w2v_train(L, cr_w2v_sgns, "w2v_sgns"); }
static int l_w2v_cbow(lua_State *L) { return w2v_train(L, cr_w2v_cbow, "w2v_cbow"); }

typedef struct w2v_sub_opts {
    double sample;
    int64_t seed, total;
} w2v_sub_opts;

#define SO(f) offsetof(w2v_sub_opts, f)
static const cr_opt w2v_sub_rows[] = {
    {"sample", CR_OPT_DOUBLE, SO(sample), CR_OPT_RANGE, 0, 1, "1e-3", NULL, "threshold t (0: keep all)", NULL, NULL},
    {"seed", CR_OPT_INT, SO(seed), 0, 0, 0, "0", NULL, "keep/drop draws", NULL, NULL},
    {"total", CR_OPT_INT, SO(total), CR_OPT_RANGE, 0, INT64_MAX, "0", NULL, "words in the corpus (0: sum of counts)",
     NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* w2v_subsample(words, counts [, opts]) -> kept words (crescent.Ints) */
static int l_w2v_subsample(lua_State *L) {
    cr_ints *w = cr_lints_check(L, 1), *c = cr_lints_check(L, 2);
    static const cr_lopt_set set = {"w2v_subsample", NULL, w2v_sub_rows};
    w2v_sub_opts o;
    cr_lopt_read(L, 3, &set, &o);
    uint64_t total = (uint64_t)o.total;
    for (int64_t k = 0; k < c->n; k++) {
        if (c->data[k] < 0) luaL_error(L, "w2v_subsample: count %d is negative", (int)k + 1);
        if (!o.total) total += (uint64_t)c->data[k];
    }
    for (int64_t i = 0; i < w->n; i++)
        if (w->data[i] < 0 || w->data[i] >= c->n)
            luaL_error(L, "w2v_subsample: word %d is %d, not an index of counts (0..%d)", (int)i + 1,
                       (int)w->data[i], (int)c->n - 1);
    cr_rng r;
    cr_rng_seed(&r, (uint64_t)o.seed);
    int64_t m = 0;
    for (int64_t i = 0; i < w->n; i++) /* cr_w2v_subsample's rule, over int64 ids and counts */
        if (cr_rng_uniform(&r) < cr_w2v_keep_prob((uint64_t)c->data[w->data[i]], total, o.sample)) m++;
    cr_ints *out = cr_lints_new(L, m);
    cr_rng_seed(&r, (uint64_t)o.seed);
    for (int64_t i = 0, j = 0; i < w->n; i++)
        if (cr_rng_uniform(&r) < cr_w2v_keep_prob((uint64_t)c->data[w->data[i]], total, o.sample))
            out->data[j++] = w->data[i];
    return 1;
}

/* w2v_init(syn0, syn1, seed): syn0 uniform in [-0.5/d, 0.5/d), syn1 zero */
static int l_w2v_init(lua_State *L) {
    cr_mat *s0 = cr_lmat_check(L, 1), *s1 = cr_lmat_check(L, 2);
    cr_rng r;
    cr_rng_seed(&r, (uint64_t)luaL_checkinteger(L, 3));
    cr_w2v_init(s0, s1, &r);
    return 0;
}

static const luaL_Reg w2v_funcs[] = {
    {"w2v_sgns", l_w2v_sgns},
    {"w2v_cbow", l_w2v_cbow},
    {"w2v_subsample", l_w2v_subsample},
    {"w2v_init", l_w2v_init},
    {NULL, NULL},
};

void cr_lkernels_add_w2v(lua_State *L) { luaL_setfuncs(L, w2v_funcs, 0); }
