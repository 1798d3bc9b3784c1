/* Knowledge-graph embedding kernels for model scripts: part of crescent.core.kernels.
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
 *       opts.es, opts.ges: entity rows of sampled negatives and their
 *       gradient (Matrices of the same shape): entity row Em:rows() + j of
 *       the batch is row j of es (batches made with negrows = true).
 *   kernels.kge_batches(triples [, opts]) -> batches
 *       triples: {s =, r =, o =} global ids as crescent.Ints or tables (e.g.
 *       the result of crescent.core.data.triples; copied). opts: batch
 *       (positives per batch, 1000), neg (negatives per side and positive,
 *       1), entities, relations (id ranges; default triples.n_ent,
 *       triples.n_rel), seed (walk order of the first epoch, 0), part, parts
 *       (keep triple i iff i % parts == part: a worker's share), negrows
 *       (false; true: ekeys are the positives' entities only and the j-th
 *       negative id passed to next() is entity row #ekeys + j, see es).
 *   batches:next([negatives]) -> ekeys, rkeys, batch, pos | nil at the end
 *       ekeys, rkeys: sorted unique entity / relation ids (new crescent.Ints)
 *       to pull; batch: {s, r, o (Ints of rows into ekeys, rkeys, ekeys),
 *       y (pos (1 + 2 neg) x 1 Matrix of labels)} for kge_step; pos: its
 *       positives. Each positive is followed by neg subject- then neg
 *       object-corruptions (label 0). negatives: batches:needs() entity ids
 *       (Ints or table; 2 neg per positive, the subject ones first), or nil
 *       to draw them uniformly (seeded by the last shuffle's seed).
 *   batches:needs() -> negative ids the next batch takes (0 at the end)
 *   batches:draw(n) -> n entity ids (Ints) drawn uniformly
 *   batches:shuffle(seed) (new walk order, restarts), batches:rewind(),
 *   batches:count() (positives), batches:batches(), batches:close()
 * Wrong model names, shapes, indices and labels raise, naming the function. */
#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "kernels/cr_kge.h"
#include "kernels/cr_kgebatch.h"
#include "lua/l_modules.h"
#include "lua/l_opt.h"
#include "lua/l_sandbox.h"
#include "lua/l_util.h"

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
    {"es", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "rows of sampled negatives (entity rows after Em's)", NULL, NULL},
    {"ges", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "their gradient (shape of es)", NULL, NULL},
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

/* [-0, +0] Matrix option `name` of the table at idx, or NULL when absent. */
static cr_mat *mat_opt(lua_State *L, int idx, const char *fn, const char *name) {
    if (!lua_istable(L, idx)) return NULL;
    lua_getfield(L, idx, name);
    cr_mat *m = lua_isnil(L, -1) ? NULL : cr_lmat_test(L, -1);
    if (!m && !lua_isnil(L, -1)) luaL_error(L, "%s: option %s must be a crescent.Matrix", fn, name);
    lua_pop(L, 1); /* the table at idx keeps it alive */
    return m;
}

/* kge_step(model, Em, Rm, gE, gR, batch [, opts]) -> loss, reg, n */
static int l_kge_step(lua_State *L) {
    const char *fn = "kge_step";
    cr_kge_model m = check_model(L, 1, fn);
    cr_mat *E = cr_lmat_check(L, 2), *R = cr_lmat_check(L, 3), *gE = NULL, *gR = NULL;
    static const cr_lopt_set set = {"kge_step", NULL, kge_step_rows};
    kge_opts o;
    cr_lopt_read(L, 7, &set, &o);
    cr_mat *Es = mat_opt(L, 7, fn, "es"), *gEs = mat_opt(L, 7, fn, "ges");
    if (!lua_isnil(L, 4) || !lua_isnil(L, 5)) {
        gE = cr_lmat_check(L, 4);
        gR = cr_lmat_check(L, 5);
        same_shape(L, fn, "gE", gE, E);
        same_shape(L, fn, "gR", gR, R);
        if (Es && !gEs) luaL_error(L, "%s: option es needs ges (the gradient of the sampled rows)", fn);
        if (gEs) same_shape(L, fn, "ges", gEs, Es ? Es : gEs);
    }
    if (gEs && !Es) luaL_error(L, "%s: option ges needs es", fn);
    cr_kge_batch b = kge_batch_arg(L, 6, fn);
    cr_err e;
    if (cr_kge_check_split(m, &b, E, Es, R, &e)) luaL_error(L, "%s: %s", fn, e.msg);
    cr_kge_stats st = {0, 0, 0};
    cr_kge_loss_grad_split(m, &b, E, Es, R, (float)o.lambda, gE, gE ? gEs : NULL, gR, &st);
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

/* ---- batches of training triples */

#define KGEB_MT "crescent.KGEBatches"

typedef struct {
    cr_kgebatch *kb; /* NULL when closed */
    size_t charged;  /* its bytes counted against a model's cap (cr_lsandbox_reserve) */
} lkgeb;

static lkgeb *check_kgeb(lua_State *L, int idx) {
    lkgeb *u = luaL_checkudata(L, idx, KGEB_MT);
    if (!u->kb) luaL_error(L, "kge batches are closed");
    return u;
}

static int kgeb_gc(lua_State *L) {
    lkgeb *u = luaL_checkudata(L, 1, KGEB_MT);
    cr_kgebatch_destroy(&u->kb);
    cr_sandbox_uncharge(L, u->charged);
    u->charged = 0;
    return 0;
}

typedef struct kgeb_opts {
    int64_t batch, neg, entities, relations, seed, part, parts;
    int negrows;
} kgeb_opts;

#define KB(f) offsetof(kgeb_opts, f)
static const cr_opt kge_batches_rows[] = {
    {"batch", CR_OPT_INT, KB(batch), 0, 0, 0, "1000", NULL, "positives per batch", NULL, NULL},
    {"neg", CR_OPT_INT, KB(neg), 0, 0, 0, "1", NULL, "negatives per side and positive", NULL, NULL},
    {"entities", CR_OPT_INT, KB(entities), 0, 0, 0, "0", NULL, "entity ids are below this (0: triples.n_ent)",
     NULL, NULL},
    {"relations", CR_OPT_INT, KB(relations), 0, 0, 0, "0", NULL,
     "relation ids are below this (0: triples.n_rel)", NULL, NULL},
    {"seed", CR_OPT_INT, KB(seed), 0, 0, 0, "0", NULL, "walk order of the first epoch", NULL, NULL},
    {"part", CR_OPT_INT, KB(part), 0, 0, 0, "0", NULL, "keep triples i with i % parts == part", NULL, NULL},
    {"parts", CR_OPT_INT, KB(parts), 0, 0, 0, "1", NULL, "number of parts (e.g. workers)", NULL, NULL},
    {"negrows", CR_OPT_FLAG, KB(negrows), 0, 0, 0, "0", NULL, "negatives get entity rows of their own", NULL,
     NULL},
    END_ROWS};

/* Integer field `name` of the table at idx, or dflt when it is not one. */
static int64_t int_field(lua_State *L, int idx, const char *name, int64_t dflt) {
    lua_getfield(L, idx, name);
    int isnum;
    int64_t v = lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    return isnum ? v : dflt;
}

/* kge_batches(triples [, opts]) -> batches */
static int l_kge_batches(lua_State *L) {
    const char *fn = "kge_batches";
    luaL_checktype(L, 1, LUA_TTABLE);
    static const cr_lopt_set set = {"kge_batches", NULL, kge_batches_rows};
    kgeb_opts v;
    cr_lopt_read(L, 2, &set, &v);
    cr_ints *s = ids_field(L, 1, fn, "s"), *r = ids_field(L, 1, fn, "r"), *o = ids_field(L, 1, fn, "o");
    if (r->n != s->n || o->n != s->n)
        luaL_error(L, "%s: triples columns differ in length (s %d, r %d, o %d)", fn, (int)s->n, (int)r->n,
                   (int)o->n);
    cr_kgebatch_opts ko = {v.entities ? v.entities : int_field(L, 1, "n_ent", 0),
                           v.relations ? v.relations : int_field(L, 1, "n_rel", 0), v.batch, v.neg,
                           (uint64_t)v.seed, v.negrows, v.part, v.parts};
    lkgeb *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->kb = NULL;
    u->charged = 0;
    luaL_setmetatable(L, KGEB_MT);
    cr_err e;
    if (ko.batch >= 1 && ko.neg >= 0) u->charged = cr_lsandbox_reserve(L, cr_kgebatch_bytes(s->n, &ko), fn);
    u->kb = cr_kgebatch_new(s->data, r->data, o->data, s->n, &ko, &e);
    if (!u->kb) luaL_error(L, "%s: %s", fn, e.msg);
    return 1;
}

static cr_ints *push_ints_copy(lua_State *L, const int64_t *v, int64_t n) {
    cr_ints *c = cr_lints_new(L, n);
    if (n) memcpy(c->data, v, (size_t)n * sizeof *v);
    return c;
}

/* [-0, +1] The batch table {s, r, o, y} of b. */
static void push_kge_batch(lua_State *L, const cr_kge_batch *b) {
    lua_createtable(L, 0, 4);
    push_ints_copy(L, b->s, b->n);
    lua_setfield(L, -2, "s");
    push_ints_copy(L, b->r, b->n);
    lua_setfield(L, -2, "r");
    push_ints_copy(L, b->o, b->n);
    lua_setfield(L, -2, "o");
    cr_mat *y = cr_lmat_new(L, b->n, 1);
    if (b->n) memcpy(y->data, b->y, (size_t)b->n * sizeof *b->y);
    lua_setfield(L, -2, "y");
}

/* batches:next([negatives]) -> ekeys, rkeys, batch, pos | nil */
static int kgeb_next(lua_State *L) {
    lkgeb *u = check_kgeb(L, 1);
    const int64_t *negs = NULL;
    int64_t nneg = 0;
    if (!lua_isnoneornil(L, 2)) {
        cr_ints *g = cr_lints_from_arg(L, 2);
        negs = g->data;
        nneg = g->n;
    }
    cr_kgebatch_out out;
    cr_err e;
    int rc = cr_kgebatch_next(u->kb, negs, nneg, &out, &e);
    if (rc < 0) luaL_error(L, "kge batches:next: %s", e.msg);
    if (rc == 0) {
        lua_pushnil(L);
        return 1;
    }
    push_ints_copy(L, out.ekeys, out.ne);
    push_ints_copy(L, out.rkeys, out.nr);
    push_kge_batch(L, &out.b);
    lua_pushinteger(L, out.pos);
    return 4;
}

static int kgeb_needs(lua_State *L) {
    lua_pushinteger(L, cr_kgebatch_needs(check_kgeb(L, 1)->kb));
    return 1;
}

/* batches:draw(n) -> Ints of n entity ids drawn uniformly (the batcher's generator) */
static int kgeb_draw(lua_State *L) {
    lkgeb *u = check_kgeb(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 0) luaL_error(L, "kge batches:draw: count %d is negative", (int)n);
    cr_ints *v = cr_lints_new(L, n);
    cr_kgebatch_uniform(u->kb, v->data, n);
    return 1;
}

static int kgeb_shuffle(lua_State *L) {
    cr_kgebatch_shuffle(check_kgeb(L, 1)->kb, (uint64_t)luaL_checkinteger(L, 2));
    return 0;
}

static int kgeb_rewind(lua_State *L) {
    cr_kgebatch_rewind(check_kgeb(L, 1)->kb);
    return 0;
}

static int kgeb_count(lua_State *L) {
    lua_pushinteger(L, cr_kgebatch_count(check_kgeb(L, 1)->kb));
    return 1;
}

static int kgeb_batches(lua_State *L) {
    lua_pushinteger(L, cr_kgebatch_batches(check_kgeb(L, 1)->kb));
    return 1;
}

static const luaL_Reg kgeb_methods[] = {
    {"next", kgeb_next},     {"needs", kgeb_needs}, {"draw", kgeb_draw}, {"shuffle", kgeb_shuffle}, {"rewind", kgeb_rewind},
    {"count", kgeb_count},   {"batches", kgeb_batches}, {"close", kgeb_gc},    {NULL, NULL},
};

static const luaL_Reg kge_funcs[] = {
    {"kge_step", l_kge_step},
    {"kge_score_all", l_kge_score_all},
    {"kge_batches", l_kge_batches},
    {NULL, NULL},
};

void cr_lkernels_add_kge(lua_State *L) {
    cr_lmetatable(L, KGEB_MT, kgeb_methods, kgeb_gc, NULL);
    luaL_setfuncs(L, kge_funcs, 0);
}
