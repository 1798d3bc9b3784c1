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
 * Expected failures (missing or malformed file) return nil, "file:line: msg";
 * misuse (wrong shapes, no current batch) raises. */
#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "kernels/cr_mf.h"
#include "kernels/cr_mfcells.h"
#include "lua/l_sandbox.h"
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
    size_t charged; /* scratch's bytes counted against a model's cap */
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
    u->scap = 0;
    cr_sandbox_uncharge(L, u->charged);
    u->charged = 0;
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
        u->scratch = NULL;
        u->scap = 0;
        cr_sandbox_uncharge(L, u->charged);
        u->charged = 0;
        u->charged = cr_lsandbox_reserve(L, (double)need * sizeof(float), "mf_sgd");
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


static const luaL_Reg cells_methods[] = {
    {"count", cells_count}, {"columns", cells_columns}, {"batches", cells_batches}, {"shuffle", cells_shuffle},
    {"next", cells_next},   {"peek", cells_peek},   {"rewind", cells_rewind},   {"close", cells_gc},        {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"mm_header", l_mm_header}, {"mf_load", l_mf_load}, {"mf_sgd", l_mf_sgd},
    {"mf_eval", l_mf_eval},
    {NULL, NULL},
};

int cr_lopen_kernels(lua_State *L) {
    cr_lmetatable(L, CELLS_MT, cells_methods, cells_gc, NULL);
    luaL_newlib(L, funcs);
    cr_lkernels_add_kge(L);
    cr_lkernels_add_w2v(L);
    cr_lkernels_add_lda(L);
    cr_lkernels_add_logreg(L);
    return 1;
}
