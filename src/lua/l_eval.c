/* crescent.core.eval: bindings of the evaluators in src/eval.
 *
 *   link_prediction{model=, entities=M, relations=R, test=T, filter={T, ...},
 *                   naive=, block=, ranks=}          -> {mrr=, mr=, hits1=, ...}
 *   analogy(M, words, path [, {restrict=, naive=, block=}]) -> {total=, ...}
 *   synonyms(M, words, path [, {restrict=}])         -> {accuracy=, coverage=, ...}
 *   rmse(pred, truth), logloss(p, y), accuracy(score, y [, threshold]), auc(score, y)
 *   lda_loglik{n_wk=, n_dk=, n_k=, alpha=, beta=}     -> {per_token=, ...}
 *   lda_perplexity{n_wk=, n_k=, alpha=, beta=, docs= | tokens=, offsets=,
 *                  iters=, burnin=, seed=}            -> {perplexity=, ...}
 *   (LDA counts may be float32 or int32 matrices, as dtype "i32" tables give)
 *
 * M is a crescent.Matrix; triples T are 0-based ids (row indices of the
 * entity and relation matrices), given as a flat crescent.Ints or table
 * {s1, r1, o1, s2, ...}, a table of {s, r, o} tables, or a table
 * {s = ids, r = ids, o = ids} of three equal-length columns. Number arrays
 * are Matrices (all cells, row-major) or tables of numbers. Expected
 * failures (unreadable or malformed question file) return nil, msg; wrong
 * types, sizes, ids and options raise. lua/crescent/eval.lua turns both into
 * errors at the caller's line. Temporary arrays live in userdata on the
 * stack, so raising never leaks. */
#include <lauxlib.h>
#include <math.h>
#include <lua.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "eval/cr_lda_eval.h"
#include "eval/cr_linkpred.h"
#include "eval/cr_pred_metrics.h"
#include "eval/cr_wordvec.h"
#include "lua/l_sandbox.h"
#include "lua/l_modules.h"
#include "lua/l_opt.h"
#include "lua/l_util.h"

/* ---- argument helpers */

/* Options, declared once per function as cr_opt rows (src/lua/l_opt.h);
 * CR_OPT_CUSTOM rows (matrices, triples, documents) are read where used. */
typedef struct eval_opts {
    const char *model;
    int64_t block, restrict_n, iters, burnin, seed;
    double alpha, beta;
    int naive, ranks;
} eval_opts;

#define EO(f) offsetof(eval_opts, f)
#define CUSTOM(name) {name, CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}
#define NONNEG CR_OPT_RANGE, 0, 9007199254740992.0
#define END_ROWS {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}
#define NAIVE {"naive", CR_OPT_FLAG, EO(naive), 0, 0, 0, NULL, NULL, "score one query at a time", NULL, NULL}
#define BLOCK {"block", CR_OPT_INT, EO(block), NONNEG, "0", NULL, "queries per GEMM block, 0 = automatic", NULL, NULL}
#define RESTRICT                                                                                                    \
    {"restrict", CR_OPT_INT, EO(restrict_n), NONNEG, "0", NULL, "vocabulary prefix used, 0 = the default", NULL, NULL}
#define ALPHA_BETA                                                                                                  \
    {"alpha", CR_OPT_DOUBLE, EO(alpha), CR_OPT_REQUIRED, 0, 0, NULL, NULL, "document-topic prior", NULL, NULL},     \
    {"beta", CR_OPT_DOUBLE, EO(beta), CR_OPT_REQUIRED, 0, 0, NULL, NULL, "topic-word prior", NULL, NULL}

static const cr_opt lp_rows[] = {
    {"model", CR_OPT_STRING, EO(model), 0, 0, 0, NULL, NULL, "complex, distmult, transe_l1, transe_l2, rescal", NULL,
     NULL},
    CUSTOM("entities"), CUSTOM("relations"), CUSTOM("test"), CUSTOM("filter"), NAIVE, BLOCK,
    {"ranks", CR_OPT_FLAG, EO(ranks), 0, 0, 0, NULL, NULL, "also return every query's rank", NULL, NULL},
    END_ROWS};
static const cr_opt analogy_rows[] = {RESTRICT, NAIVE, BLOCK, END_ROWS};
static const cr_opt synonyms_rows[] = {RESTRICT, END_ROWS};
static const cr_opt loglik_rows[] = {CUSTOM("n_wk"), CUSTOM("n_dk"), CUSTOM("n_k"), ALPHA_BETA, END_ROWS};
static const cr_opt perp_rows[] = {
    CUSTOM("n_wk"), CUSTOM("n_k"), ALPHA_BETA, CUSTOM("docs"), CUSTOM("tokens"), CUSTOM("offsets"),
    {"iters", CR_OPT_INT, EO(iters), CR_OPT_RANGE, 1, INT_MAX, "20", NULL, "Gibbs sweeps per document", NULL, NULL},
    {"burnin", CR_OPT_INT, EO(burnin), CR_OPT_RANGE, -1, INT_MAX, "-1", NULL, "sweeps before theta is averaged, -1 = iters / 2", NULL,
     NULL},
    {"seed", CR_OPT_INT, EO(seed), NONNEG, "1", NULL, "random seed", NULL, NULL},
    END_ROWS};

/* [-0, +0] The options table at t for function fn into o. */
static void read_opts(lua_State *L, int t, const char *fn, const cr_opt *rows, eval_opts *o) {
    cr_lopt_set set = {fn, NULL, rows};
    *o = (eval_opts){0};
    cr_lopt_read(L, t, &set, o);
}

/* The matrix in field k of table t (required), left on the stack top. */
static cr_mat *field_mat(lua_State *L, int t, const char *k) {
    lua_getfield(L, t, k);
    cr_mat *m = cr_lmat_test(L, -1);
    if (!m) luaL_error(L, "option '%s': crescent.Matrix expected, got %s", k, luaL_typename(L, -1));
    return m;
}

/* [-0, +1] A float32 copy of the int32 matrix m (counts from dtype = "i32"
 * tables; exact up to 2^24, beyond which a count is rounded to float's 24
 * bits, a relative error below 1e-7 in the log-likelihoods). */
static cr_mat *f32_copy(lua_State *L, const cr_mat *m) {
    cr_mat *f = cr_lmat_new(L, m->rows, m->cols);
    const int32_t *v = cr_lmat_ints(m);
    for (int64_t i = 0; i < m->rows * m->cols; i++) f->data[i] = (float)v[i];
    return f;
}

/* The count matrix in field k of table t (required; float32 or int32, the
 * latter converted), left on the stack top. */
static cr_mat *field_counts(lua_State *L, int t, const char *k) {
    cr_mat *m = field_mat(L, t, k);
    return cr_lmat_dtype(L, -1) == CR_LDT_I32 ? f32_copy(L, m) : m;
}

/* Float array at idx: a Matrix (all cells; an int32 one converted into a
 * new Matrix pushed on the stack) or a table of numbers, which is copied
 * into a new 1 x n Matrix pushed on the stack. Sets *n. */
static const float *float_array(lua_State *L, int idx, const char *what, int64_t *n) {
    idx = lua_absindex(L, idx);
    cr_mat *m = cr_lmat_test(L, idx);
    if (m) {
        *n = m->rows * m->cols;
        return cr_lmat_dtype(L, idx) == CR_LDT_I32 ? f32_copy(L, m)->data : m->data;
    }
    if (!lua_istable(L, idx)) luaL_error(L, "%s: crescent.Matrix or table of numbers expected, got %s", what, luaL_typename(L, idx));
    lua_Integer len = luaL_len(L, idx);
    m = cr_lmat_new(L, 1, len);
    for (lua_Integer i = 1; i <= len; i++) {
        int ok;
        lua_geti(L, idx, i);
        m->data[i - 1] = (float)lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_error(L, "%s[%d]: number expected, got %s", what, (int)i, luaL_typename(L, -1));
        lua_pop(L, 1);
    }
    *n = len;
    return m->data;
}

/* Integer at stack top (popped), raising with `what` and position i. */
static int64_t pop_id(lua_State *L, const char *what, lua_Integer i) {
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok) luaL_error(L, "%s: entry %d: integer expected, got %s", what, (int)i, luaL_typename(L, -1));
    lua_pop(L, 1);
    return v;
}

/* Triples at idx in any of the forms listed at the top; pushes the flat
 * Ints that holds them (or the argument itself) and fills t. */
static void triples_arg(lua_State *L, int idx, const char *what, cr_triples *t) {
    idx = lua_absindex(L, idx);
    int base = lua_gettop(L);
    cr_ints *v = cr_lints_test(L, idx);
    if (v) {
        lua_pushvalue(L, idx);
    } else if (!lua_istable(L, idx)) {
        luaL_error(L, "%s: triples expected (crescent.Ints or table), got %s", what, luaL_typename(L, idx));
    } else if (lua_getfield(L, idx, "s") != LUA_TNIL) { /* columns s, r, o */
        cr_ints *c[3];
        c[0] = cr_lints_from_arg(L, -1);
        lua_getfield(L, idx, "r");
        c[1] = cr_lints_from_arg(L, -1);
        lua_getfield(L, idx, "o");
        c[2] = cr_lints_from_arg(L, -1);
        if (c[1]->n != c[0]->n || c[2]->n != c[0]->n) luaL_error(L, "%s: columns s, r, o differ in length", what);
        v = cr_lints_new(L, 3 * c[0]->n);
        for (int64_t i = 0; i < c[0]->n; i++)
            for (int k = 0; k < 3; k++) v->data[3 * i + k] = c[k]->data[i];
        lua_replace(L, base + 1);
        lua_settop(L, base + 1);
    } else {
        lua_pop(L, 1);
        lua_Integer len = luaL_len(L, idx);
        lua_geti(L, idx, 1);
        int nested = lua_istable(L, -1);
        lua_pop(L, 1);
        v = cr_lints_new(L, nested ? 3 * len : len);
        for (lua_Integer i = 1; i <= len; i++) {
            lua_geti(L, idx, i);
            if (!nested) {
                v->data[i - 1] = pop_id(L, what, i);
                continue;
            }
            if (!lua_istable(L, -1) || luaL_len(L, -1) != 3)
                luaL_error(L, "%s: entry %d: {s, r, o} expected", what, (int)i);
            for (int k = 0; k < 3; k++) {
                lua_geti(L, -1, k + 1);
                v->data[3 * (i - 1) + k] = pop_id(L, what, i);
            }
            lua_pop(L, 1);
        }
    }
    if (v->n % 3) luaL_error(L, "%s: %d ids is not a whole number of (s, r, o) triples", what, (int)v->n);
    t->spo = v->data;
    t->n = v->n / 3;
}

/* Is the filter option at idx a list of triple lists (rather than one
 * list)? Yes if its first entry is an Ints, a column table {s=...}, a table
 * of tables, or a flat table whose length is not 3. */
static int is_list_of_lists(lua_State *L, int idx) {
    if (cr_lints_test(L, idx) || !lua_istable(L, idx)) return 0;
    if (lua_getfield(L, idx, "s") != LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    lua_pop(L, 1);
    lua_geti(L, idx, 1);
    int yes = cr_lints_test(L, -1) != NULL;
    if (!yes && lua_istable(L, -1)) {
        lua_getfield(L, -1, "s");
        lua_geti(L, -2, 1);
        yes = !lua_isnil(L, -2) || lua_istable(L, -1) || luaL_len(L, -3) != 3;
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    return yes;
}

/* Words at idx (a table of strings, or a table with field `words`): a
 * char* array in a userdata pushed on the stack; the strings stay owned by
 * the table, which must stay alive (it is an argument). */
static const char **words_arg(lua_State *L, int idx, int64_t *n) {
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    if (lua_getfield(L, idx, "words") == LUA_TTABLE) idx = lua_absindex(L, -1); /* kept on the stack */
    else lua_pop(L, 1);
    lua_Integer len = luaL_len(L, idx);
    const char **w = lua_newuserdatauv(L, (size_t)(len > 0 ? len : 1) * sizeof(char *), 0);
    for (lua_Integer i = 1; i <= len; i++) {
        if (lua_geti(L, idx, i) != LUA_TSTRING) luaL_error(L, "words[%d]: string expected, got %s", (int)i, luaL_typename(L, -1));
        w[i - 1] = lua_tostring(L, -1);
        lua_pop(L, 1); /* the table keeps the string alive */
    }
    *n = len;
    return w;
}

static void set_num(lua_State *L, const char *k, double v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, int64_t v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

/* ---- link prediction */

/* What cr_linkpred_eval allocates: a block of queries and their scores
 * against every entity (the block as cr_linkpred.c chooses it), the
 * entities' squared norms, and an index of the test and filter triples. */
static double lp_bytes(const cr_mat *ent, const cr_triples *test, const cr_triples *filt, int nf, int64_t block) {
    double n = (double)ent->rows, d = (double)ent->cols, t = (double)test->n;
    double b = block > 0 ? (double)block : n > 0 ? floor(4194304.0 / n) : 1;
    b = fmin(fmax(b, 1), 512);
    if (b > t) b = t;
    for (int i = 0; i < nf; i++) t += (double)filt[i].n;
    return (b * (d + n) + n) * sizeof(float) + 2 * t * 48 + 2 * (double)test->n * sizeof(double);
}

static int l_link_prediction(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    eval_opts eo;
    read_opts(L, 1, "link_prediction", lp_rows, &eo);
    const char *name = eo.model;
    if (!name) luaL_error(L, "option 'model' is required (complex, distmult, transe_l1, transe_l2, rescal)");
    cr_kge_model model;
    cr_err e;
    if (cr_kge_model_parse(name, &model, &e)) luaL_error(L, "%s", e.msg);
    cr_mat *ent = field_mat(L, 1, "entities"), *rel = field_mat(L, 1, "relations");
    lua_getfield(L, 1, "test");
    if (lua_isnil(L, -1)) luaL_error(L, "option 'test' is required");
    cr_triples test;
    triples_arg(L, -1, "test", &test);
    cr_triples filt[16];
    int nf = 0;
    if (lua_getfield(L, 1, "filter") != LUA_TNIL) {
        int fi = lua_gettop(L);
        if (!is_list_of_lists(L, fi)) {
            triples_arg(L, fi, "filter", &filt[nf++]);
        } else {
            lua_Integer len = luaL_len(L, fi);
            if (len > 16) luaL_error(L, "filter: at most 16 triple lists");
            for (lua_Integer i = 1; i <= len; i++) {
                char what[32];
                snprintf(what, sizeof what, "filter[%d]", (int)i);
                lua_geti(L, fi, i);
                triples_arg(L, -1, what, &filt[nf++]);
            }
        }
    }
    cr_lp_opts o = {eo.naive, eo.block};
    double *ranks = NULL;
    cr_mat *rk = NULL;
    int want_ranks = eo.ranks;
    if (want_ranks) ranks = lua_newuserdatauv(L, (size_t)(2 * test.n > 0 ? 2 * test.n : 1) * sizeof(double), 0);
    cr_lp_result r;
    size_t tmp = cr_lsandbox_reserve(L, lp_bytes(ent, &test, filt, nf, eo.block), "link_prediction");
    int rc = cr_linkpred_eval(model, ent, rel, &test, filt, nf, &o, &r, ranks, &e);
    cr_sandbox_uncharge(L, tmp);
    if (rc) luaL_error(L, "%s", e.msg);
    lua_createtable(L, 0, 10);
    set_num(L, "mrr", r.mrr);
    set_num(L, "mr", r.mr);
    set_num(L, "hits1", r.hits1);
    set_num(L, "hits3", r.hits3);
    set_num(L, "hits10", r.hits10);
    set_num(L, "mrr_tail", r.mrr_tail);
    set_num(L, "mrr_head", r.mrr_head);
    set_int(L, "queries", r.queries);
    if (want_ranks) { /* row 1: (s, r, ?) ranks, row 2: (?, r, o) ranks */
        rk = cr_lmat_new(L, 2, test.n);
        for (int64_t i = 0; i < 2 * test.n; i++) rk->data[i] = (float)ranks[i];
        lua_setfield(L, -2, "ranks");
    }
    return 1;
}

/* ---- word vectors */

static int l_analogy(lua_State *L) {
    lua_settop(L, 4);
    cr_mat *v = cr_lmat_check(L, 1);
    int64_t nw;
    const char **words = words_arg(L, 2, &nw);
    const char *path = luaL_checkstring(L, 3);
    eval_opts eo;
    read_opts(L, 4, "analogy", analogy_rows, &eo);
    cr_analogy_opts o = {eo.restrict_n, eo.naive, eo.block};
    if (v->rows != nw) luaL_error(L, "analogy: vectors have %d rows but there are %d words", (int)v->rows, (int)nw);
    cr_analogy_result r;
    cr_err e;
    /* cr_wordvec.c: normalized vectors, a word index, a block of queries and
     * their scores against the vocabulary (the block as it chooses it) */
    double nv = (double)(eo.restrict_n > 0 && eo.restrict_n < nw ? eo.restrict_n : nw), d = (double)v->cols;
    double b = fmin(fmax(eo.block > 0 ? (double)eo.block : nv > 0 ? floor(4194304.0 / nv) : 1, 1), 1024);
    size_t tmp = cr_lsandbox_reserve(L, nv * d * 4 + nv * 32 + b * (d * 4 + 64) + (eo.naive ? 1 : b) * nv * 4,
                                     "analogy");
    int rc = cr_analogy_eval(v, words, nw, path, &o, &r, &e);
    cr_sandbox_uncharge(L, tmp);
    if (rc) return cr_lfail(L, e.msg);
    lua_createtable(L, 0, 12);
    set_num(L, "total", r.acc);
    set_num(L, "semantic", r.sem_acc);
    set_num(L, "syntactic", r.syn_acc);
    set_num(L, "coverage", r.coverage);
    set_int(L, "questions", r.sem_total + r.syn_total);
    set_int(L, "seen", r.sem_seen + r.syn_seen);
    set_int(L, "correct", r.sem_correct + r.syn_correct);
    set_int(L, "semantic_questions", r.sem_total);
    set_int(L, "semantic_seen", r.sem_seen);
    set_int(L, "semantic_correct", r.sem_correct);
    set_int(L, "syntactic_questions", r.syn_total);
    set_int(L, "syntactic_seen", r.syn_seen);
    set_int(L, "syntactic_correct", r.syn_correct);
    return 1;
}

static int l_synonyms(lua_State *L) {
    lua_settop(L, 4);
    cr_mat *v = cr_lmat_check(L, 1);
    int64_t nw;
    const char **words = words_arg(L, 2, &nw);
    const char *path = luaL_checkstring(L, 3);
    eval_opts eo;
    read_opts(L, 4, "synonyms", synonyms_rows, &eo);
    int64_t restrict_n = eo.restrict_n;
    if (v->rows != nw) luaL_error(L, "synonyms: vectors have %d rows but there are %d words", (int)v->rows, (int)nw);
    cr_synonym_result r;
    cr_err e;
    if (cr_synonyms_eval(v, words, nw, path, restrict_n, &r, &e)) {
        return cr_lfail(L, e.msg);
    }
    lua_createtable(L, 0, 5);
    set_num(L, "accuracy", r.accuracy);
    set_num(L, "coverage", r.coverage);
    set_int(L, "questions", r.total);
    set_int(L, "covered", r.covered);
    set_int(L, "correct", r.correct);
    return 1;
}

/* ---- point metrics: (a, b) arrays of equal length */

typedef int (*pair_metric)(const float *, const float *, int64_t, double *, cr_err *);

static int pair(lua_State *L, const char *name, const char *a_name, const char *b_name, pair_metric f,
                double threshold) {
    int64_t na, nb;
    const float *a = float_array(L, 1, a_name, &na), *b = float_array(L, 2, b_name, &nb);
    if (na != nb) luaL_error(L, "%s: %s has %d values, %s has %d", name, a_name, (int)na, b_name, (int)nb);
    double v;
    cr_err e;
    int rc = f ? f(a, b, na, &v, &e) : cr_metric_accuracy(a, b, na, threshold, &v, &e);
    if (rc) luaL_error(L, "%s: %s", name, e.msg);
    lua_pushnumber(L, v);
    return 1;
}

static int l_rmse(lua_State *L) { lua_settop(L, 2); return pair(L, "rmse", "prediction", "truth", cr_metric_rmse, 0); }
static int l_logloss(lua_State *L) { lua_settop(L, 2); return pair(L, "logloss", "probability", "label", cr_metric_logloss, 0); }
static int l_auc(lua_State *L) { lua_settop(L, 2); return pair(L, "auc", "score", "label", cr_metric_auc, 0); }
static int l_accuracy(lua_State *L) {
    double t = luaL_optnumber(L, 3, 0.5);
    lua_settop(L, 2);
    return pair(L, "accuracy", "score", "label", NULL, t);
}

/* ---- LDA */

/* n_k from field "n_k" of table t (Matrix or table of numbers), or NULL when
 * absent; its length must be K. May push a temporary. */
static const float *topic_totals_arg(lua_State *L, int t, int64_t K) {
    if (lua_getfield(L, t, "n_k") == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    int64_t n;
    const float *nk = float_array(L, -1, "n_k", &n);
    if (n != K) luaL_error(L, "n_k has %d values, n_wk has %d topics", (int)n, (int)K);
    return nk;
}

static int l_lda_loglik(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    eval_opts eo;
    read_opts(L, 1, "lda_loglik", loglik_rows, &eo);
    cr_mat *nwk = field_counts(L, 1, "n_wk"), *ndk = NULL;
    if (lua_getfield(L, 1, "n_dk") != LUA_TNIL) ndk = field_counts(L, 1, "n_dk");
    const float *nk = topic_totals_arg(L, 1, nwk->cols);
    double alpha = eo.alpha, beta = eo.beta;
    cr_lda_ll r;
    cr_err e;
    if (cr_lda_loglik(ndk, nwk, nk, alpha, beta, &r, &e)) luaL_error(L, "lda_loglik: %s", e.msg);
    lua_createtable(L, 0, 5);
    set_num(L, "per_token", r.per_token);
    set_num(L, "total", r.total);
    set_num(L, "word", r.word_ll);
    set_num(L, "doc", r.doc_ll);
    set_num(L, "tokens", r.tokens);
    return 1;
}

/* Documents from field "docs" (a table of Ints / tables of word ids) or
 * from fields "tokens" and "offsets" (Ints, 0-based, offsets has D+1
 * entries). Pushes what holds them; sets *tok, *off, *nd. */
static void docs_arg(lua_State *L, int t, const int64_t **tok, const int64_t **off, int64_t *nd) {
    if (lua_getfield(L, t, "docs") != LUA_TNIL) {
        int di = lua_gettop(L);
        luaL_checktype(L, di, LUA_TTABLE);
        lua_Integer D = luaL_len(L, di);
        cr_ints *o = cr_lints_new(L, D + 1);
        for (lua_Integer d = 1; d <= D; d++) {
            lua_geti(L, di, d);
            o->data[d] = o->data[d - 1] + (int64_t)luaL_len(L, -1);
            lua_pop(L, 1);
        }
        cr_ints *all = cr_lints_new(L, o->data[D]);
        for (lua_Integer d = 1; d <= D; d++) {
            lua_geti(L, di, d);
            cr_ints *x = cr_lints_from_arg(L, -1);
            memcpy(all->data + o->data[d - 1], x->data, (size_t)x->n * sizeof(int64_t));
            lua_pop(L, 2);
        }
        *tok = all->data;
        *off = o->data;
        *nd = D;
        return;
    }
    lua_pop(L, 1);
    lua_getfield(L, t, "tokens");
    cr_ints *tk = cr_lints_from_arg(L, -1);
    lua_getfield(L, t, "offsets");
    cr_ints *of = cr_lints_from_arg(L, -1);
    if (of->n < 2) luaL_error(L, "lda_perplexity: offsets needs at least 2 entries");
    if (of->data[of->n - 1] != tk->n)
        luaL_error(L, "lda_perplexity: last offset %d differs from the token count %d", (int)of->data[of->n - 1], (int)tk->n);
    *tok = tk->data;
    *off = of->data;
    *nd = of->n - 1;
}

static int l_lda_perplexity(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    eval_opts eo;
    read_opts(L, 1, "lda_perplexity", perp_rows, &eo);
    cr_mat *nwk = field_counts(L, 1, "n_wk");
    const float *nk = topic_totals_arg(L, 1, nwk->cols);
    double alpha = eo.alpha, beta = eo.beta;
    cr_lda_perp_opts o = {(int)eo.iters, (int)eo.burnin, (uint64_t)eo.seed};
    const int64_t *tok, *off;
    int64_t nd;
    docs_arg(L, 1, &tok, &off, &nd);
    cr_lda_perp_result r;
    cr_err e;
    if (cr_lda_perplexity(nwk, nk, alpha, beta, tok, off, nd, &o, &r, &e)) luaL_error(L, "lda_perplexity: %s", e.msg);
    lua_createtable(L, 0, 4);
    set_num(L, "perplexity", r.perplexity);
    set_num(L, "loglik", r.loglik);
    set_int(L, "tokens", r.eval_tokens);
    set_int(L, "docs", r.docs);
    return 1;
}

int cr_lopen_eval(lua_State *L) {
    static const luaL_Reg fns[] = {
        {"link_prediction", l_link_prediction}, {"analogy", l_analogy}, {"synonyms", l_synonyms},
        {"rmse", l_rmse},                       {"logloss", l_logloss}, {"accuracy", l_accuracy},
        {"auc", l_auc},                         {"lda_loglik", l_lda_loglik},
        {"lda_perplexity", l_lda_perplexity},   {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
