/* crescent.core.kernels: model math called from Lua, one call per batch.
 *
 * Matrix factorization (lua/models/mf.lua):
 *   kernels.mm_header(path)            -> {rows=, cols=, nnz=} | nil, msg
 *   kernels.mf_load(path, opts)        -> cells | nil, msg
 *       opts: row_lo, row_hi (0-based, [lo, hi); default all rows),
 *             part, parts (this worker's share of the node's columns; 0, 1),
 *             batch (cells per batch, 100000), seed (grouping of columns, 0),
 *             rows, cols (keys of W and H: a cell past them is an error
 *             "file:line: ...", not dropped; 0: the size line's)
 *   cells:count(), cells:columns(), cells:shuffle(seed) (also restarts the walk),
 *   cells:rewind() (restart the walk in the same order), cells:close()
 *   cells:batches()                    -> batches per epoch
 *   cells:next()                       -> wkeys, hkeys, n | nil at the end of the walk
 *       wkeys/hkeys are crescent.Ints of the batch's unique W/H keys (0-based);
 *       the same objects every epoch (do not modify them)
 *   cells:peek()                       -> the same for the batch after the current one
 *   kernels.mf_sgd(cells, Wm, Hm, lr, lambda) -> sse, reg, n
 *       Wm, Hm: the pulled rows of wkeys/hkeys (crescent.Matrix). Runs SGD
 *       over the current batch on them, then turns them into gradient sums
 *       (so that pushing them to an sgd table with the same lr applies the
 *       same change).
 *   kernels.mf_eval(cells, Wm, Hm)     -> sse, n (current batch, no update)
 *
 * Knowledge-graph embeddings (src/kernels/cr_kge.h has the math):
 *   kernels.kge_step(model, Em, Rm, gE, gR, batch [, {lambda = 0}]) -> loss, reg, n
 *       model: complex, distmult, transe (= transe_l1), transe_l1, transe_l2,
 *       rescal. Em, Rm: the pulled entity and relation rows (crescent.Matrix;
 *       rescal: d*d columns per relation). batch = {s =, r =, o =, y =}: row
 *       indices (0-based, into Em, Rm, Em) as crescent.Ints or tables of
 *       integers, labels y (1 positive, 0 negative) as Ints, a table or a
 *       Matrix of n cells. Adds the gradient of the batch's summed logistic
 *       loss + lambda |row|^2 per triple and row into gE, gR (shapes of Em,
 *       Rm; not cleared, so push them to an adagrad table as they are); both
 *       nil: loss only. loss and reg are sums over the batch.
 *   kernels.kge_score_all(model, Em, Rm, anchors, rels [, {dir =, out =}]) -> S
 *       S (a new nq x Em:rows() Matrix, or out reused when it has that shape)
 *       holds the score of every entity row x for query i: (anchors[i],
 *       rels[i], x) for dir = "tail" (the default), (x, rels[i], anchors[i])
 *       for dir = "head". anchors, rels: row indices as for kge_step.
 * Wrong model names, shapes, indices and labels raise, naming the function.
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
 * Expected failures (missing or malformed file) return nil, "file:line: msg";
 * misuse (wrong shapes, no current batch) raises. */
#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "kernels/cr_kge.h"
#include "kernels/cr_mf.h"
#include "kernels/cr_mfcells.h"
#include "kernels/cr_w2v.h"
#include "lua/l_modules.h"
#include "lua/l_opt.h"
#include "lua/l_util.h"

#define CELLS_MT "crescent.MFCells"

typedef struct {
    cr_mfcells *c; /* NULL when closed */
    int64_t pos;
    int have;
    cr_mfcells_batch b;
    float *scratch;
    int64_t scap;
} lcells;

static lcells *check_cells(lua_State *L, int idx) {
    lcells *u = luaL_checkudata(L, idx, CELLS_MT);
    if (!u->c) luaL_error(L, "mf cells are closed");
    return u;
}

static int cells_gc(lua_State *L) {
    lcells *u = luaL_checkudata(L, 1, CELLS_MT);
    cr_mfcells_destroy(&u->c);
    free(u->scratch);
    u->scratch = NULL;
    u->have = 0;
    return 0;
}

/* mf_load's options; part and parts go to ints, so their ranges stop there
 * (the loader checks part < parts and batch >= 1). */
typedef struct mfl_opts {
    int64_t row_lo, row_hi, part, parts, batch, seed, rows, cols;
} mfl_opts;

#define M(f) offsetof(mfl_opts, f)
static const cr_opt mf_load_rows[] = {
    {"row_lo", CR_OPT_INT, M(row_lo), 0, 0, 0, "0", NULL, "first row kept (0-based)", NULL, NULL},
    {"row_hi", CR_OPT_INT, M(row_hi), 0, 0, 0, "-1", NULL, "rows before this kept; < 0: to the end", NULL, NULL},
    {"part", CR_OPT_INT, M(part), CR_OPT_RANGE, 0, INT_MAX, "0", NULL, "this worker's share of the columns", NULL,
     NULL},
    {"parts", CR_OPT_INT, M(parts), CR_OPT_RANGE, 1, INT_MAX, "1", NULL, "shares the columns are dealt into", NULL,
     NULL},
    {"batch", CR_OPT_INT, M(batch), 0, 0, 0, "100000", NULL, "about this many cells per batch", NULL, NULL},
    {"seed", CR_OPT_INT, M(seed), 0, 0, 0, "0", NULL, "grouping of columns into batches", NULL, NULL},
    {"rows", CR_OPT_INT, M(rows), CR_OPT_RANGE, 0, INT64_MAX, "0", NULL, "keys of W: a cell past them is an error (0: no limit)", NULL, NULL},
    {"cols", CR_OPT_INT, M(cols), CR_OPT_RANGE, 0, INT64_MAX, "0", NULL, "keys of H: a cell past them is an error (0: no limit)", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* mf_load(path [, opts]) -> cells | nil, msg */
static int l_mf_load(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    static const cr_lopt_set set = {"mf_load", NULL, mf_load_rows};
    mfl_opts v;
    cr_lopt_read(L, 2, &set, &v);
    cr_mfcells_opts o = {v.row_lo, v.row_hi, (int)v.part, (int)v.parts, v.batch, (uint64_t)v.seed, v.rows, v.cols};
    lcells *u = lua_newuserdatauv(L, sizeof *u, 1); /* user value: batch id -> {wkeys, hkeys} */
    memset(u, 0, sizeof *u);
    luaL_setmetatable(L, CELLS_MT);
    cr_err e;
    u->c = cr_mfcells_load(path, &o, &e);
    if (!u->c) {
        return cr_lfail(L, e.msg);
    }
    lua_createtable(L, (int)cr_mfcells_batches(u->c), 0);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

static int l_mm_header(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_mf_shape h;
    cr_err e;
    if (cr_mfcells_read_header(path, &h, &e)) {
        return cr_lfail(L, e.msg);
    }
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, h.rows);
    lua_setfield(L, -2, "rows");
    lua_pushinteger(L, h.cols);
    lua_setfield(L, -2, "cols");
    lua_pushinteger(L, h.nnz);
    lua_setfield(L, -2, "nnz");
    return 1;
}

static int cells_count(lua_State *L) {
    lua_pushinteger(L, cr_mfcells_count(check_cells(L, 1)->c));
    return 1;
}

static int cells_columns(lua_State *L) {
    lua_pushinteger(L, cr_mfcells_columns(check_cells(L, 1)->c));
    return 1;
}

static int cells_shuffle(lua_State *L) {
    lcells *u = check_cells(L, 1);
    cr_mfcells_shuffle(u->c, (uint64_t)luaL_checkinteger(L, 2));
    u->pos = 0;
    u->have = 0;
    return 0;
}

static int cells_rewind(lua_State *L) {
    lcells *u = check_cells(L, 1);
    u->pos = 0;
    u->have = 0;
    return 0;
}

static void push_keys(lua_State *L, const int64_t *keys, int64_t n) {
    cr_ints *v = cr_lints_new(L, n);
    memcpy(v->data, keys, (size_t)n * sizeof *keys);
}

static int cells_batches(lua_State *L) {
    lua_pushinteger(L, cr_mfcells_batches(check_cells(L, 1)->c));
    return 1;
}

/* [-0, +3] Push batch b's key vectors (made once, kept in the user value of
 * the cells at index 1, so an epoch allocates nothing) and its size. */
static void push_batch(lua_State *L, const cr_mfcells_batch *b) {
    lua_getiuservalue(L, 1, 1);
    if (lua_rawgeti(L, -1, b->id + 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 2, 0);
        push_keys(L, b->wkeys, b->nw);
        lua_rawseti(L, -2, 1);
        push_keys(L, b->hkeys, b->nh);
        lua_rawseti(L, -2, 2);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, b->id + 1);
    }
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    lua_pushinteger(L, b->n);
    lua_rotate(L, -5, 3);
    lua_pop(L, 2);
}

/* cells:next() -> wkeys, hkeys, n | nil: the next batch becomes current. */
static int cells_next(lua_State *L) {
    lcells *u = check_cells(L, 1);
    u->have = cr_mfcells_next(u->c, &u->pos, &u->b);
    if (!u->have) {
        lua_pushnil(L);
        return 1;
    }
    push_batch(L, &u->b);
    return 3;
}

/* cells:peek() -> wkeys, hkeys, n | nil: the batch after the current one,
 * without moving (to prefetch its rows while the current one runs). */
static int cells_peek(lua_State *L) {
    lcells *u = check_cells(L, 1);
    int64_t pos = u->pos;
    cr_mfcells_batch b;
    if (!cr_mfcells_next(u->c, &pos, &b)) {
        lua_pushnil(L);
        return 1;
    }
    push_batch(L, &b);
    return 3;
}

/* The current batch and its two matrices, shapes checked. */
static lcells *batch_args(lua_State *L, cr_mat **W, cr_mat **H) {
    lcells *u = check_cells(L, 1);
    *W = cr_lmat_check(L, 2);
    *H = cr_lmat_check(L, 3);
    if (!u->have) luaL_error(L, "no current batch (call cells:next first)");
    if ((*W)->rows != u->b.nw || (*H)->rows != u->b.nh)
        luaL_error(L, "matrices have %d and %d rows, the batch has %d W keys and %d H keys",
                   (int)(*W)->rows, (int)(*H)->rows, (int)u->b.nw, (int)u->b.nh);
    if ((*W)->cols != (*H)->cols || (*W)->cols < 1)
        luaL_error(L, "W and H rows must have the same dimension (got %d and %d)", (int)(*W)->cols,
                   (int)(*H)->cols);
    return u;
}

/* mf_sgd(cells, Wm, Hm, lr, lambda) -> sse, reg, n */
static int l_mf_sgd(lua_State *L) {
    cr_mat *W, *H;
    lcells *u = batch_args(L, &W, &H);
    float lr = (float)luaL_checknumber(L, 4), lambda = (float)luaL_checknumber(L, 5);
    luaL_argcheck(L, lr >= 0, 4, "learning rate must be >= 0");
    luaL_argcheck(L, lambda >= 0, 5, "lambda must be >= 0");
    int64_t need = (W->rows + H->rows) * W->cols;
    if (need > u->scap) {
        free(u->scratch);
        u->scap = need;
        u->scratch = cr_xmalloc((size_t)need * sizeof(float));
    }
    size_t wn = (size_t)(W->rows * W->cols);
    memcpy(u->scratch, W->data, wn * sizeof(float));
    memcpy(u->scratch + wn, H->data, (size_t)(H->rows * H->cols) * sizeof(float));
    cr_mf_stats st = {0, 0, 0};
    for (int64_t k = 0; k < u->b.nh; k++) { /* column by column: no copy of the cells */
        cr_mf_batch col = cr_mfcells_column(u->c, &u->b, k);
        cr_mf_sgd(&col, W, H, lr, lambda, &st);
    }
    cr_mf_delta_to_grad(W, u->scratch, lr);
    cr_mf_delta_to_grad(H, u->scratch + wn, lr);
    lua_pushnumber(L, st.sse);
    lua_pushnumber(L, st.reg);
    lua_pushinteger(L, st.n);
    return 3;
}

/* mf_eval(cells, Wm, Hm) -> sse, n */
static int l_mf_eval(lua_State *L) {
    cr_mat *W, *H;
    lcells *u = batch_args(L, &W, &H);
    cr_mf_stats st = {0, 0, 0};
    for (int64_t k = 0; k < u->b.nh; k++) {
        cr_mf_batch col = cr_mfcells_column(u->c, &u->b, k);
        cr_mf_eval(&col, W, H, &st);
    }
    lua_pushnumber(L, st.sse);
    lua_pushinteger(L, st.n);
    return 2;
}


/* ---- knowledge-graph embeddings */

static cr_kge_model check_model(lua_State *L, int idx, const char *fn) {
    cr_kge_model m;
    cr_err e;
    if (cr_kge_model_parse(luaL_checkstring(L, idx), &m, &e)) luaL_error(L, "%s: %s", fn, e.msg);
    return m;
}

/* [-0, +1] Field `name` of the table at idx as row indices (an Ints is used
 * as is, a table converted); raises naming the field. */
static cr_ints *ids_field(lua_State *L, int idx, const char *fn, const char *name) {
    lua_getfield(L, idx, name);
    if (!cr_lints_test(L, -1) && !lua_istable(L, -1))
        luaL_error(L, "%s: %s must be crescent.Ints or a table of integers (got %s)", fn, name, luaL_typename(L, -1));
    cr_ints *v = cr_lints_from_arg(L, -1);
    lua_remove(L, -2);
    return v;
}

/* [-0, +1] Labels y of the batch at idx as n floats (a Matrix of n cells is
 * used as is; Ints or a table are copied into a userdata left on the stack). */
static const float *labels_field(lua_State *L, int idx, const char *fn, int64_t n) {
    lua_getfield(L, idx, "y");
    cr_mat *m = cr_lmat_test(L, -1);
    if (m) {
        if (m->rows * m->cols != n)
            luaL_error(L, "%s: y has %d cells, the batch has %d triples", fn, (int)(m->rows * m->cols), (int)n);
        return m->data;
    }
    lua_pop(L, 1);
    cr_ints *v = ids_field(L, idx, fn, "y");
    if (v->n != n) luaL_error(L, "%s: y has %d labels, the batch has %d triples", fn, (int)v->n, (int)n);
    float *y = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof(float), 0);
    for (int64_t i = 0; i < n; i++) y[i] = (float)v->data[i];
    lua_remove(L, -2);
    return y;
}

#define CUSTOM_REQ(name) {name, CR_OPT_CUSTOM, 0, CR_OPT_REQUIRED, 0, 0, NULL, NULL, NULL, NULL, NULL}
#define END_ROWS {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}
static const cr_opt kge_batch_rows[] = {CUSTOM_REQ("s"), CUSTOM_REQ("r"), CUSTOM_REQ("o"), CUSTOM_REQ("y"), END_ROWS};

typedef struct kge_opts {
    double lambda;
    int dir;
} kge_opts;

static const char *const dir_names[] = {"tail", "head", NULL};
static const cr_opt kge_step_rows[] = {
    {"lambda", CR_OPT_DOUBLE, offsetof(kge_opts, lambda), CR_OPT_RANGE, 0, 1e30, "0", NULL,
     "L2 weight per triple and row", NULL, NULL},
    END_ROWS};
static const cr_opt kge_score_rows[] = {
    {"dir", CR_OPT_ENUM, offsetof(kge_opts, dir), 0, 0, 0, "tail", NULL, "open side: tail (s, r, ?) or head (?, r, o)",
     dir_names, NULL},
    {"out", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "result matrix to reuse", NULL, NULL},
    END_ROWS};

/* [-0, +4] The batch table at idx: pushes s, r, o (Ints) and the labels. */
static cr_kge_batch kge_batch_arg(lua_State *L, int idx, const char *fn) {
    static const cr_lopt_set set = {"kge_step", "batch field", kge_batch_rows};
    luaL_checktype(L, idx, LUA_TTABLE);
    char unused; /* the rows are CR_OPT_CUSTOM: nothing is stored */
    cr_lopt_read(L, idx, &set, &unused);
    cr_ints *s = ids_field(L, idx, fn, "s"), *r = ids_field(L, idx, fn, "r"), *o = ids_field(L, idx, fn, "o");
    if (r->n != s->n || o->n != s->n)
        luaL_error(L, "%s: batch columns differ in length (s %d, r %d, o %d)", fn, (int)s->n, (int)r->n, (int)o->n);
    const float *y = labels_field(L, idx, fn, s->n);
    return (cr_kge_batch){s->n, s->data, r->data, o->data, y};
}

static void same_shape(lua_State *L, const char *fn, const char *what, const cr_mat *g, const cr_mat *m) {
    if (g->rows != m->rows || g->cols != m->cols)
        luaL_error(L, "%s: %s is %d x %d, its parameters are %d x %d", fn, what, (int)g->rows, (int)g->cols,
                   (int)m->rows, (int)m->cols);
}

/* kge_step(model, Em, Rm, gE, gR, batch [, opts]) -> loss, reg, n */
static int l_kge_step(lua_State *L) {
    const char *fn = "kge_step";
    cr_kge_model m = check_model(L, 1, fn);
    cr_mat *E = cr_lmat_check(L, 2), *R = cr_lmat_check(L, 3), *gE = NULL, *gR = NULL;
    if (!lua_isnil(L, 4) || !lua_isnil(L, 5)) {
        gE = cr_lmat_check(L, 4);
        gR = cr_lmat_check(L, 5);
        same_shape(L, fn, "gE", gE, E);
        same_shape(L, fn, "gR", gR, R);
    }
    static const cr_lopt_set set = {"kge_step", NULL, kge_step_rows};
    kge_opts o;
    cr_lopt_read(L, 7, &set, &o);
    cr_kge_batch b = kge_batch_arg(L, 6, fn);
    cr_err e;
    if (cr_kge_check(m, &b, E, R, &e)) luaL_error(L, "%s: %s", fn, e.msg);
    cr_kge_stats st = {0, 0, 0};
    cr_kge_loss_grad(m, &b, E, R, (float)o.lambda, gE, gR, &st);
    lua_pushnumber(L, st.loss);
    lua_pushnumber(L, st.reg);
    lua_pushinteger(L, st.n);
    return 3;
}

/* kge_score_all(model, Em, Rm, anchors, rels [, opts]) -> S */
static int l_kge_score_all(lua_State *L) {
    const char *fn = "kge_score_all";
    cr_kge_model m = check_model(L, 1, fn);
    cr_mat *E = cr_lmat_check(L, 2), *R = cr_lmat_check(L, 3);
    static const cr_lopt_set set = {"kge_score_all", NULL, kge_score_rows};
    kge_opts o;
    cr_lopt_read(L, 6, &set, &o);
    cr_ints *a = cr_lints_from_arg(L, 4), *r = cr_lints_from_arg(L, 5);
    if (a->n != r->n) luaL_error(L, "%s: %d anchors and %d relations", fn, (int)a->n, (int)r->n);
    cr_err e;
    if (cr_kge_check_queries(m, E, R, a->data, r->data, a->n, &e)) luaL_error(L, "%s: %s", fn, e.msg);
    cr_mat *S = NULL;
    if (lua_istable(L, 6) && lua_getfield(L, 6, "out") != LUA_TNIL) {
        S = cr_lmat_test(L, -1);
        if (!S || S->rows != a->n || S->cols != E->rows)
            luaL_error(L, "%s: out must be a %d x %d crescent.Matrix", fn, (int)a->n, (int)E->rows);
    } else {
        S = cr_lmat_new(L, a->n, E->rows);
    }
    cr_kge_score_all(m, o.dir == 0 ? CR_KGE_TAIL : CR_KGE_HEAD, E, R, a->data, r->data, a->n, S->data);
    return 1;
}

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

static const luaL_Reg cells_methods[] = {
    {"count", cells_count}, {"columns", cells_columns}, {"batches", cells_batches}, {"shuffle", cells_shuffle},
    {"next", cells_next},   {"peek", cells_peek},   {"rewind", cells_rewind},   {"close", cells_gc},        {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"mm_header", l_mm_header}, {"mf_load", l_mf_load}, {"mf_sgd", l_mf_sgd},
    {"mf_eval", l_mf_eval},     {"kge_step", l_kge_step}, {"kge_score_all", l_kge_score_all},
    {"w2v_sgns", l_w2v_sgns}, {"w2v_cbow", l_w2v_cbow}, {"w2v_subsample", l_w2v_subsample}, {"w2v_init", l_w2v_init},
    {NULL, NULL},
};

int cr_lopen_kernels(lua_State *L) {
    if (luaL_newmetatable(L, CELLS_MT)) {
        luaL_newlib(L, cells_methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, cells_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, cells_gc);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    luaL_newlib(L, funcs);
    return 1;
}
