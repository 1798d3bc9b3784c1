/* Sparse logistic regression kernels for lua/models/logreg.lua: part of
 * crescent.core.kernels (the math in src/kernels/cr_logreg.h).
 *   kernels.logreg_load(path [, opts]) -> data | nil, "path:line: msg"
 *       opts: features (the table's keys; a larger feature id is an error),
 *       heldout (fraction held out, 0), seed (of the held-out draw, 1),
 *       split ("train" | "test" | "all"), part, parts (the training examples
 *       dealt round robin), placement (a placement file: keep the examples
 *       its u lines place on `node`), node, nodes
 *   data:examples(), :nnz(), :features(), :file_examples(), :positives()
 *   data:keys() -> Ints (the distinct keys of the examples, sorted)
 *   data:margins_keys(w)  margins from w (#keys() x dim, first column)
 *   data:loss() -> sum of log(1 + exp(-y m)) at the margins
 *   data:evaluate(w) -> {loss=, logloss=, accuracy=, auc=, n=} with w the
 *       full table (features x dim; first column the weights)
 *   data:batches(size) -> n; :batch_keys(b) -> Ints;
 *   data:batch_grad(b, w, g [, l2]) -> loss (w: rows of the batch's keys,
 *       g: #keys x 1, written)
 *   data:blocks(n [, features [, bounds]]) -> n; :block_keys(b) -> Ints
 *       (active keys); :block_active(b) -> their number; data:balanced(n) -> bounds (Ints) of at most n blocks
 *       holding equal shares of the file's entries (cr_logreg_balanced);
 *   data:block_grad(b, out [, rho]) (out: #block_keys x 2, (g, u) rows;
 *       rho in [0, 1], 0 by default: the curvature, cr_logreg.h);
 *   data:block_update(b, w) -> keys dropped (w: #block_keys x dim, pulled);
 *   data:skipped() -> keys dropped by the KKT filter so far; :close()
 *   kernels.logreg_save(data, path) -> true | nil, msg: the examples as
 *       LIBSVM (benchmarks; not in the model sandbox: it writes)
 * Blocks and batches are 1-based here. Misuse raises naming the method;
 * file problems return nil, msg. */
#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "eval/cr_pred_metrics.h"
#include "kernels/cr_logreg.h"
#include "lua/l_sandbox.h"
#include "lua/l_modules.h"
#include "lua/l_opt.h"
#include "lua/l_util.h"

#define LR_MT "crescent.LogregData"

typedef struct ldata {
    cr_logreg_data *d; /* NULL when closed */
} ldata;

static cr_logreg_data *check_data(lua_State *L, int idx) {
    ldata *u = luaL_checkudata(L, idx, LR_MT);
    if (!u->d) luaL_error(L, "logreg data is closed");
    return u->d;
}

static int data_gc(lua_State *L) {
    ldata *u = luaL_checkudata(L, 1, LR_MT);
    cr_logreg_destroy(&u->d);
    return 0;
}

typedef struct load_opts {
    int64_t features, seed, part, parts, node, nodes;
    double heldout;
    int split;
    const char *placement;
} load_opts;

static const char *const splits[] = {"train", "test", "all", NULL};

#define LO(f) offsetof(load_opts, f)
static const cr_opt load_rows[] = {
    {"features", CR_OPT_INT, LO(features), CR_OPT_RANGE, 0, INT32_MAX, "0", NULL, "features (0: from the data)", NULL,
     NULL},
    {"heldout", CR_OPT_DOUBLE, LO(heldout), 0, 0, 0, "0", NULL, "fraction held out", NULL, NULL},
    {"seed", CR_OPT_INT, LO(seed), 0, 0, 0, "1", NULL, "held-out draw", NULL, NULL},
    {"split", CR_OPT_ENUM, LO(split), 0, 0, 0, "train", NULL, "examples kept", splits, NULL},
    {"part", CR_OPT_INT, LO(part), CR_OPT_RANGE, 0, INT_MAX, "0", NULL, "this worker's share", NULL, NULL},
    {"parts", CR_OPT_INT, LO(parts), CR_OPT_RANGE, 1, INT_MAX, "1", NULL, "shares", NULL, NULL},
    {"placement", CR_OPT_STRING, LO(placement), 0, 0, 0, NULL, NULL, "placement file", NULL, NULL},
    {"node", CR_OPT_INT, LO(node), CR_OPT_RANGE, 0, INT_MAX, "0", NULL, "this node", NULL, NULL},
    {"nodes", CR_OPT_INT, LO(nodes), CR_OPT_RANGE, 1, INT_MAX, "1", NULL, "nodes", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* logreg_load(path [, opts]) -> data | nil, msg */
static int l_logreg_load(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    static const cr_lopt_set set = {"logreg_load", NULL, load_rows};
    load_opts lo;
    memset(&lo, 0, sizeof lo);
    cr_lopt_read(L, 2, &set, &lo);
    if (lo.part >= lo.parts) luaL_error(L, "logreg_load: part %d must be < parts %d", (int)lo.part, (int)lo.parts);
    if (!(lo.heldout >= 0 && lo.heldout < 1)) luaL_error(L, "logreg_load: heldout must be in [0, 1)");
    cr_logreg_load_opts o = {lo.features, lo.heldout, (uint64_t)lo.seed, lo.split, lo.part, lo.parts,
                             lo.placement && *lo.placement ? lo.placement : NULL, lo.node, lo.nodes};
    cr_err e;
    /* a byte and an int32 per feature while it loads */
    size_t tmp = cr_lsandbox_reserve(L, ((double)lo.features + 1) * 5, "logreg_load");
    cr_logreg_data *d = cr_logreg_load(path, &o, &e);
    cr_sandbox_uncharge(L, tmp);
    if (!d) return cr_lfail(L, e.msg);
    ldata *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->d = d;
    luaL_setmetatable(L, LR_MT);
    return 1;
}

static int d_examples(lua_State *L) { lua_pushinteger(L, check_data(L, 1)->n); return 1; }
static int d_nnz(lua_State *L) { lua_pushinteger(L, check_data(L, 1)->nnz); return 1; }
static int d_features(lua_State *L) { lua_pushinteger(L, check_data(L, 1)->features); return 1; }
static int d_file_examples(lua_State *L) { lua_pushinteger(L, check_data(L, 1)->file_examples); return 1; }
static int d_skipped(lua_State *L) { lua_pushinteger(L, cr_logreg_skipped(check_data(L, 1))); return 1; }
static int d_loss(lua_State *L) { lua_pushnumber(L, cr_logreg_loss(check_data(L, 1))); return 1; }

static int d_positives(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    int64_t p = 0;
    for (int64_t i = 0; i < d->n; i++) p += d->y[i] > 0;
    lua_pushinteger(L, p);
    return 1;
}

/* [-0, +1] A new Ints of the n keys at k. */
static void push_keys(lua_State *L, const int64_t *k, int64_t n) {
    cr_ints *v = cr_lints_new(L, n);
    if (n) memcpy(v->data, k, (size_t)n * sizeof *k);
}

static int d_keys(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    cr_logreg_keys(d);
    push_keys(L, d->ukey, d->nu);
    return 1;
}

/* The matrix at idx with `rows` rows and at least `mincols` columns. */
static cr_mat *rows_arg(lua_State *L, int idx, int64_t rows, int64_t mincols, const char *fn, const char *name) {
    cr_mat *m = cr_lmat_check(L, idx);
    if (cr_lmat_dtype(L, idx) != CR_LDT_F32) luaL_error(L, "%s: %s must be a float matrix", fn, name);
    if (m->rows != rows || m->cols < mincols)
        luaL_error(L, "%s: %s must have %d rows and >= %d columns, got %d x %d", fn, name, (int)rows, (int)mincols,
                   (int)m->rows, (int)m->cols);
    return m;
}

static int d_margins_keys(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    cr_logreg_keys(d);
    cr_mat *w = rows_arg(L, 2, d->nu, 1, "margins_keys", "w");
    cr_logreg_margins_keys(d, w->data, w->cols);
    return 0;
}

static void set_num(lua_State *L, const char *k, double v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

/* data:evaluate(w) -> {loss, logloss, accuracy, auc, n} (auc nil without both classes) */
static int d_evaluate(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    cr_mat *w = cr_lmat_check(L, 2);
    if (d->n == 0) luaL_error(L, "evaluate: no examples");
    cr_logreg_margins(d, w->data, w->rows, w->cols);
    float *p = cr_xmalloc((size_t)d->n * sizeof *p), *s = cr_xmalloc((size_t)d->n * sizeof *s);
    for (int64_t i = 0; i < d->n; i++) {
        double m = d->margin[i];
        s[i] = (float)m;
        p[i] = (float)(m >= 0 ? 1 / (1 + exp(-m)) : exp(m) / (1 + exp(m)));
    }
    double ll = NAN, acc = NAN, auc = NAN;
    cr_err e;
    int ok = cr_metric_logloss(p, d->y, d->n, &ll, &e) == 0 && cr_metric_accuracy(s, d->y, d->n, 0, &acc, &e) == 0;
    if (ok && cr_metric_auc(s, d->y, d->n, &auc, &e) != 0) auc = NAN;
    free(p), free(s);
    if (!ok) luaL_error(L, "evaluate: %s", e.msg);
    lua_createtable(L, 0, 5);
    set_num(L, "loss", cr_logreg_loss(d));
    set_num(L, "logloss", ll);
    set_num(L, "accuracy", acc);
    if (!isnan(auc)) set_num(L, "auc", auc);
    lua_pushinteger(L, d->n);
    lua_setfield(L, -2, "n");
    return 1;
}

/* The 0-based index of the 1-based batch/block at idx in [1, n]. */
static int64_t index_arg(lua_State *L, int idx, int64_t n, const char *fn, const char *what) {
    lua_Integer b = luaL_checkinteger(L, idx);
    if (b < 1 || b > n) luaL_error(L, "%s: %s %I out of range [1, %I]", fn, what, (LUAI_UACINT)b, (LUAI_UACINT)n);
    return b - 1;
}

static int d_batches(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    lua_Integer size = luaL_checkinteger(L, 2);
    if (size < 1) luaL_error(L, "batches: size must be >= 1");
    cr_logreg_batches(d, size);
    lua_pushinteger(L, d->nbatches);
    return 1;
}

static int d_batch_keys(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    int64_t b = index_arg(L, 2, d->nbatches, "batch_keys", "batch");
    push_keys(L, d->bat_key + d->bat_koff[b], d->bat_koff[b + 1] - d->bat_koff[b]);
    return 1;
}

static int d_batch_grad(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    int64_t b = index_arg(L, 2, d->nbatches, "batch_grad", "batch"), nk = d->bat_koff[b + 1] - d->bat_koff[b];
    cr_mat *w = rows_arg(L, 3, nk, 1, "batch_grad", "w"), *g = rows_arg(L, 4, nk, 1, "batch_grad", "g");
    if (g->cols != 1) luaL_error(L, "batch_grad: g must have 1 column");
    double l2 = luaL_optnumber(L, 5, 0);
    lua_pushnumber(L, cr_logreg_batch_grad(d, b, w->data, w->cols, l2, g->data));
    return 1;
}

/* data:blocks(n [, features [, bounds]]) -> n (bounds: n + 1 increasing keys) */
static int d_blocks(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2), f = luaL_optinteger(L, 3, 0);
    if (n < 1) luaL_error(L, "blocks: n must be >= 1");
    if (f < 0) luaL_error(L, "blocks: features must be >= 0");
    const int64_t *bounds = NULL;
    if (!lua_isnoneornil(L, 4)) {
        cr_ints *b = cr_lints_from_arg(L, 4);
        if (b->n != n + 1) luaL_error(L, "blocks: %d bounds for %d blocks (n + 1 expected)", (int)b->n, (int)n);
        for (int64_t i = 0; i < b->n; i++)
            if ((i == 0 && b->data[0] != 0) || (i > 0 && b->data[i] <= b->data[i - 1]))
                luaL_error(L, "blocks: bounds must start at 0 and increase");
        for (int64_t i = 0; i < d->nnz; i++)
            if (d->key[i] >= b->data[n]) luaL_error(L, "blocks: key %d past the last bound", (int)d->key[i]);
        bounds = b->data;
    }
    cr_logreg_blocks(d, n, f, bounds);
    lua_pushinteger(L, d->nblocks);
    return 1;
}

/* data:balanced(n) -> Ints of bounds (#bounds - 1 blocks, at most n) */
static int d_balanced(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1) luaL_error(L, "balanced: n must be >= 1");
    int64_t *b = cr_xmalloc(((size_t)n + 1) * sizeof *b);
    int64_t nb = cr_logreg_balanced(d, n, b);
    push_keys(L, b, nb + 1);
    free(b);
    return 1;
}

static int d_block_keys(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    int64_t b = index_arg(L, 2, d->nblocks, "block_keys", "block"), n = d->nact[b];
    const int64_t *a = cr_logreg_block_act(d, b);
    cr_ints *v = cr_lints_new(L, n);
    for (int64_t q = 0; q < n; q++) v->data[q] = d->ukey[a[q]];
    return 1;
}

static int d_block_active(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    lua_pushinteger(L, d->nact[index_arg(L, 2, d->nblocks, "block_active", "block")]);
    return 1;
}

static int d_block_grad(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    int64_t b = index_arg(L, 2, d->nblocks, "block_grad", "block");
    cr_mat *o = rows_arg(L, 3, d->nact[b], 2, "block_grad", "out");
    if (o->cols != 2) luaL_error(L, "block_grad: out must have 2 columns");
    double rho = luaL_optnumber(L, 4, 0);
    if (!(rho >= 0 && rho <= 1)) luaL_error(L, "block_grad: rho must be in [0, 1]");
    cr_logreg_block_grad(d, b, rho, o->data);
    return 0;
}

static int d_block_update(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    int64_t b = index_arg(L, 2, d->nblocks, "block_update", "block");
    cr_mat *w = rows_arg(L, 3, d->nact[b], 1, "block_update", "w");
    lua_pushinteger(L, cr_logreg_block_update(d, b, w->data, w->cols));
    return 1;
}

/* logreg_save(data, path) -> true | nil, msg. A module function, not a
 * method: model scripts get only the functions the sandbox lists
 * (l_sandbox_core.c), and they must not write files. */
static int l_logreg_save(lua_State *L) {
    cr_logreg_data *d = check_data(L, 1);
    cr_err e;
    if (cr_logreg_save(d, luaL_checkstring(L, 2), &e) != 0) return cr_lfail(L, e.msg);
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg data_methods[] = {
    {"examples", d_examples},         {"nnz", d_nnz},
    {"features", d_features},         {"file_examples", d_file_examples},
    {"positives", d_positives},       {"keys", d_keys},
    {"margins_keys", d_margins_keys}, {"loss", d_loss},
    {"evaluate", d_evaluate},         {"batches", d_batches},
    {"batch_keys", d_batch_keys},     {"batch_grad", d_batch_grad},
    {"blocks", d_blocks},             {"balanced", d_balanced},
    {"block_active", d_block_active},             {"block_keys", d_block_keys},
    {"block_grad", d_block_grad},     {"block_update", d_block_update},
    {"skipped", d_skipped},           {"close", data_gc},
    {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"logreg_load", l_logreg_load},
    {"logreg_save", l_logreg_save},
    {NULL, NULL},
};

void cr_lkernels_add_logreg(lua_State *L) {
    cr_lmetatable(L, LR_MT, data_methods, data_gc, NULL);
    luaL_setfuncs(L, funcs, 0);
}
