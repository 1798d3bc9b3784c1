/* LDA kernels for lua/models/lda.lua: part of crescent.core.kernels
 * (the math in src/kernels/cr_lda.h, the corpus in cr_lda_corpus.h).
 *   kernels.lda_load(path [, opts]) -> corpus | nil, "path:line: msg"
 *       opts: format ("libsvm" | "text"), vocab (text: array of words, id =
 *       index - 1), V (0: max id + 1 / #vocab), part, parts, heldout_every
 *       (0), split ("train" | "test")
 *   kernels.lda_vocab(path [, min_count]) -> {words} (text; by descending count)
 *   kernels.lda_word_loglik(nwk, beta) -> sum of lgamma(n + beta) - lgamma(beta)
 *   corpus:docs(), :tokens(), :V(), :K(), :init(K, seed), :chunks(tokens) -> n,
 *   :chunk_keys(c) -> Ints (the same object until the next :chunks),
 *   :counts(c, dwk, dk), :sample(c, nwk, nk, dwk, dk [, opts]) -> tokens, changed
 *       opts: sampler ("mh" | "plain"), alpha, beta, mh_steps (2), seed (0)
 *   :doc_loglik(alpha), :word_topic_counts(lo, hi) -> i32 Matrix,
 *   :doc_topic_counts() -> i32 Matrix docs x K (tests, small corpora),
 *   :topics([first [, count]]) -> i32 Matrix count x 1, :set_topics(m [, first]):
 *       the token topics (a checkpoint of the assignment; set_topics checks
 *       [0, K)),
 *   :tokens_offsets() -> tokens, offsets (Ints), :close()
 *   :tokens_offsets([seed]) -> tokens, offsets (Ints; each document shuffled
 *       with a seed), :close()
 * Count matrices are int32 (util.matrix(r, c, "i32")). Misuse raises naming
 * the method; file problems return nil, msg. */
#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "base/cr_rng.h"
#include "kernels/cr_lda.h"
#include "kernels/cr_lda_corpus.h"
#include "lua/l_sandbox.h"
#include "lua/l_modules.h"
#include "lua/l_opt.h"
#include "lua/l_util.h"

#define LDA_MT "crescent.LDACorpus"

/* The corpus userdata; user value 1 is the table of chunk key vectors. */
typedef struct lcorp {
    cr_lda_corpus *c; /* NULL when closed */
} lcorp;

static cr_lda_corpus *check_corp(lua_State *L, int idx) {
    lcorp *u = luaL_checkudata(L, idx, LDA_MT);
    if (!u->c) luaL_error(L, "lda corpus is closed");
    return u->c;
}

static int corp_gc(lua_State *L) {
    lcorp *u = luaL_checkudata(L, 1, LDA_MT);
    cr_lda_corpus_destroy(&u->c);
    return 0;
}

typedef struct load_opts {
    int64_t V, part, parts, heldout_every;
    int format, split;
} load_opts;

static const char *const formats[] = {"libsvm", "text", NULL};
static const char *const splits[] = {"train", "test", NULL};

#define LO(f) offsetof(load_opts, f)
static const cr_opt load_rows[] = {
    {"format", CR_OPT_ENUM, LO(format), 0, 0, 0, "libsvm", NULL, "libsvm bag of words or text", formats, NULL},
    {"V", CR_OPT_INT, LO(V), CR_OPT_RANGE, 0, INT32_MAX, "0", NULL, "vocabulary size (0: from the data)", NULL, NULL},
    {"part", CR_OPT_INT, LO(part), CR_OPT_RANGE, 0, INT_MAX, "0", NULL, "this worker's share", NULL, NULL},
    {"parts", CR_OPT_INT, LO(parts), CR_OPT_RANGE, 1, INT_MAX, "1", NULL, "shares", NULL, NULL},
    {"heldout_every", CR_OPT_INT, LO(heldout_every), CR_OPT_RANGE, 0, INT_MAX, "0", NULL,
     "hold out every n-th document", NULL, NULL},
    {"split", CR_OPT_ENUM, LO(split), 0, 0, 0, "train", NULL, "documents kept", splits, NULL},
    {"vocab", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "text: array of words", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* [-0, +0] opts.vocab (an array of distinct strings) into d (initialized
 * here); word id = index - 1. Types are checked before d holds memory, and
 * d is freed before a repeated word is reported, so a raise leaks nothing. */
static void vocab_arg(lua_State *L, int opts, cr_dict *d) {
    if (lua_isnoneornil(L, opts) || lua_getfield(L, opts, "vocab") == LUA_TNIL)
        luaL_error(L, "lda_load: format 'text' needs option 'vocab' (an array of words)");
    if (!lua_istable(L, -1)) luaL_error(L, "lda_load: option 'vocab' must be an array of words");
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, -1, i) != LUA_TSTRING) luaL_error(L, "lda_load: vocab entry %d is not a string", (int)i);
        lua_pop(L, 1);
    }
    cr_dict_init(d);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        size_t len;
        const char *w = lua_tolstring(L, -1, &len);
        int added;
        cr_dict_add(d, w, len, &added);
        if (!added) {
            cr_dict_free(d);
            luaL_error(L, "lda_load: vocab entry %d repeats '%s'", (int)i, w);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* [-0, +1] Push a new corpus userdata owning c. */
static void push_corp(lua_State *L, cr_lda_corpus *c) {
    lcorp *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->c = c;
    luaL_setmetatable(L, LDA_MT);
}

/* [-1, +1] cr_lsandbox_reserve of the double at light userdata 1, as lda_load. */
static int reserve_p(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)cr_lsandbox_reserve(L, *(const double *)lua_touserdata(L, 1), "lda_load"));
    return 1;
}

/* lda_load(path [, opts]) -> corpus | nil, msg */
static int l_lda_load(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    static const cr_lopt_set set = {"lda_load", NULL, load_rows};
    load_opts lo;
    cr_lopt_read(L, 2, &set, &lo);
    if (lo.part >= lo.parts) luaL_error(L, "lda_load: part %d must be < parts %d", (int)lo.part, (int)lo.parts);
    cr_dict d;
    if (lo.format == CR_LDA_TEXT) vocab_arg(L, 2, &d);
    else cr_dict_init(&d);
    double need = ((double)lo.V + 1) * sizeof(int32_t); /* the loader's word map of V */
    lua_pushcfunction(L, reserve_p);
    lua_pushlightuserdata(L, &need);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) { /* free d, then raise */
        cr_dict_free(&d);
        return lua_error(L);
    }
    size_t tmp = (size_t)lua_tointeger(L, -1);
    lua_pop(L, 1);
    cr_lda_load_opts o = {lo.format, &d, lo.V, lo.part, lo.parts, lo.heldout_every, lo.split == 1};
    cr_err e;
    cr_lda_corpus *c = cr_lda_corpus_load(path, &o, &e);
    cr_sandbox_uncharge(L, tmp);
    cr_dict_free(&d);
    if (!c) return cr_lfail(L, e.msg);
    push_corp(L, c);
    return 1;
}

/* lda_vocab(path [, min_count]) -> {words} | nil, msg */
static int l_lda_vocab(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    lua_Integer mc = luaL_optinteger(L, 2, 1);
    cr_dict d;
    cr_dict_init(&d);
    cr_err e;
    if (cr_lda_vocab(path, mc, &d, &e) != 0) {
        cr_dict_free(&d);
        return cr_lfail(L, e.msg);
    }
    lua_createtable(L, (int)d.n, 0);
    for (int64_t i = 0; i < d.n; i++) {
        lua_pushstring(L, cr_dict_name(&d, i));
        lua_rawseti(L, -2, i + 1);
    }
    cr_dict_free(&d);
    return 1;
}

/* lda_word_loglik(nwk, beta) */
static int l_lda_word_loglik(lua_State *L) {
    int32_t *v;
    cr_mat *m = cr_lmat_check_i32(L, 1, &v);
    double beta = luaL_checknumber(L, 2);
    if (!(beta > 0)) luaL_error(L, "lda_word_loglik: beta must be > 0");
    lua_pushnumber(L, cr_lda_word_loglik(v, m->rows * m->cols, beta));
    return 1;
}

static int corp_docs(lua_State *L) { lua_pushinteger(L, check_corp(L, 1)->ndocs); return 1; }
static int corp_tokens(lua_State *L) { lua_pushinteger(L, check_corp(L, 1)->ntokens); return 1; }
static int corp_V(lua_State *L) { lua_pushinteger(L, check_corp(L, 1)->V); return 1; }
static int corp_K(lua_State *L) { lua_pushinteger(L, check_corp(L, 1)->K); return 1; }

/* corpus:init(K, seed) */
static int corp_init(lua_State *L) {
    cr_lda_corpus *c = check_corp(L, 1);
    lua_Integer K = luaL_checkinteger(L, 2), seed = luaL_optinteger(L, 3, 0);
    if (K > 1000000) luaL_error(L, "init: K = %d is too large", (int)K);
    cr_err e;
    if (cr_lda_corpus_init(c, K < 2 ? 0 : (int)K, (uint64_t)seed, &e) != 0) luaL_error(L, "init: %s", e.msg);
    return 0;
}

/* corpus:chunks(tokens_per_chunk) -> n; resets the cached key vectors */
static int corp_chunks(lua_State *L) {
    cr_lda_corpus *c = check_corp(L, 1);
    cr_err e;
    if (cr_lda_corpus_chunks(c, luaL_checkinteger(L, 2), &e) != 0) luaL_error(L, "chunks: %s", e.msg);
    lua_newtable(L);
    lua_setiuservalue(L, 1, 1);
    lua_pushinteger(L, c->nchunks);
    return 1;
}

/* The 0-based chunk of the 1-based argument at idx; raises if none. */
static int64_t chunk_arg(lua_State *L, const cr_lda_corpus *c, int idx, const char *fn) {
    lua_Integer ch = luaL_checkinteger(L, idx);
    if (!c->chunk_doc) luaL_error(L, "%s: no chunks (call chunks first)", fn);
    if (ch < 1 || ch > c->nchunks)
        luaL_error(L, "%s: chunk %I out of range [1, %I]", fn, (LUAI_UACINT)ch, (LUAI_UACINT)c->nchunks);
    return ch - 1;
}

/* corpus:chunk_keys(c) -> Ints (cached per chunk) */
static int corp_chunk_keys(lua_State *L) {
    cr_lda_corpus *c = check_corp(L, 1);
    int64_t ch = chunk_arg(L, c, 2, "chunk_keys");
    lua_getiuservalue(L, 1, 1);
    if (lua_rawgeti(L, -1, ch + 1) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    int64_t n = cr_lda_chunk_nkeys(c, ch);
    cr_ints *v = cr_lints_new(L, n);
    memcpy(v->data, c->key + c->key_off[ch], (size_t)n * sizeof *v->data);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, ch + 1);
    return 1;
}

/* The int32 matrix at idx, which must be rows x cols. */
static int32_t *counts_arg(lua_State *L, int idx, int64_t rows, int64_t cols, const char *fn, const char *name) {
    int32_t *v;
    cr_mat *m = cr_lmat_check_i32(L, idx, &v);
    if (m->rows != rows || m->cols != cols)
        luaL_error(L, "%s: %s must be %d x %d, got %d x %d", fn, name, (int)rows, (int)cols, (int)m->rows,
                   (int)m->cols);
    return v;
}

static cr_lda_corpus *check_topics(lua_State *L, const char *fn) {
    cr_lda_corpus *c = check_corp(L, 1);
    if (c->K < 2) luaL_error(L, "%s: corpus has no topics (call init first)", fn);
    return c;
}

/* corpus:counts(c, dwk, dk) */
static int corp_counts(lua_State *L) {
    cr_lda_corpus *c = check_topics(L, "counts");
    int64_t ch = chunk_arg(L, c, 2, "counts");
    int32_t *dwk = counts_arg(L, 3, cr_lda_chunk_nkeys(c, ch), c->K, "counts", "dwk");
    int32_t *dk = counts_arg(L, 4, 1, c->K, "counts", "dk");
    cr_lda_chunk_counts(c, ch, dwk, dk);
    return 0;
}

typedef struct sample_opts {
    int sampler;
    double alpha, beta;
    int64_t mh_steps, seed;
} sample_opts;

static const char *const samplers[] = {"mh", "plain", NULL};

#define SO(f) offsetof(sample_opts, f)
static const cr_opt sample_rows[] = {
    {"sampler", CR_OPT_ENUM, SO(sampler), 0, 0, 0, "mh", NULL, "O(1) Metropolis-Hastings or plain O(K)", samplers,
     NULL},
    {"alpha", CR_OPT_DOUBLE, SO(alpha), 0, 0, 0, "0.1", NULL, "document prior", NULL, NULL},
    {"beta", CR_OPT_DOUBLE, SO(beta), 0, 0, 0, "0.01", NULL, "word prior", NULL, NULL},
    {"mh_steps", CR_OPT_INT, SO(mh_steps), CR_OPT_RANGE, 1, 1000, "2", NULL, "MH cycles per token", NULL, NULL},
    {"seed", CR_OPT_INT, SO(seed), 0, 0, 0, "0", NULL, "this call's draws", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* corpus:sample(c, nwk, nk, dwk, dk [, opts]) -> tokens, changed */
static int corp_sample(lua_State *L) {
    cr_lda_corpus *c = check_topics(L, "sample");
    int64_t ch = chunk_arg(L, c, 2, "sample"), nk = cr_lda_chunk_nkeys(c, ch);
    const int32_t *nwk = counts_arg(L, 3, nk, c->K, "sample", "nwk");
    const int32_t *ntk = counts_arg(L, 4, 1, c->K, "sample", "nk");
    int32_t *dwk = counts_arg(L, 5, nk, c->K, "sample", "dwk");
    int32_t *dk = counts_arg(L, 6, 1, c->K, "sample", "dk");
    if (dwk == nwk || dk == ntk) luaL_error(L, "sample: dwk and dk must not be the snapshot matrices");
    static const cr_lopt_set set = {"sample", NULL, sample_rows};
    sample_opts so;
    cr_lopt_read(L, 7, &set, &so);
    cr_lda_sample_opts o = {so.sampler, so.alpha, so.beta, (int)so.mh_steps, (uint64_t)so.seed, 0, 0};
    cr_lda_sample_stats st;
    cr_err e;
    if (cr_lda_sample(c, ch, nwk, ntk, dwk, dk, &o, &st, &e) != 0) luaL_error(L, "sample: %s", e.msg);
    lua_pushinteger(L, st.tokens);
    lua_pushinteger(L, st.changed);
    return 2;
}

/* corpus:doc_loglik(alpha) */
static int corp_doc_loglik(lua_State *L) {
    cr_lda_corpus *c = check_topics(L, "doc_loglik");
    double alpha = luaL_checknumber(L, 2);
    if (!(alpha > 0)) luaL_error(L, "doc_loglik: alpha must be > 0");
    lua_pushnumber(L, cr_lda_doc_loglik(c, alpha));
    return 1;
}

/* corpus:word_topic_counts(lo, hi) -> i32 Matrix (hi - lo) x K */
static int corp_word_topic_counts(lua_State *L) {
    cr_lda_corpus *c = check_topics(L, "word_topic_counts");
    lua_Integer lo = luaL_checkinteger(L, 2), hi = luaL_checkinteger(L, 3);
    if (lo < 0 || hi < lo || hi > c->V)
        luaL_error(L, "word_topic_counts: bad word range [%d, %d) for V = %d", (int)lo, (int)hi, (int)c->V);
    cr_mat *m = cr_lmat_new_typed(L, hi - lo, c->K, CR_LDT_I32);
    cr_lda_word_topic_counts(c, lo, hi, cr_lmat_ints(m));
    return 1;
}

/* corpus:doc_topic_counts() -> i32 Matrix docs x K (tests, small corpora) */
static int corp_doc_topic_counts(lua_State *L) {
    cr_lda_corpus *c = check_topics(L, "doc_topic_counts");
    cr_mat *m = cr_lmat_new_typed(L, c->ndocs, c->K, CR_LDT_I32);
    cr_lda_doc_topic_counts(c, cr_lmat_ints(m));
    return 1;
}

/* corpus:tokens_offsets([seed]) -> tokens, offsets. With a seed, each
 * document's tokens come shuffled (stream (seed, d)): a bag of words lists
 * them by feature id, which in a frequency-ranked vocabulary puts the
 * frequent words first, so document completion (first half estimates,
 * second half is scored) would score only the rare words. */
static int corp_tokens_offsets(lua_State *L) {
    cr_lda_corpus *c = check_corp(L, 1);
    int shuffle = !lua_isnoneornil(L, 2);
    uint64_t seed = shuffle ? (uint64_t)luaL_checkinteger(L, 2) : 0;
    cr_ints *t = cr_lints_new(L, c->ntokens);
    for (int64_t i = 0; i < c->ntokens; i++) t->data[i] = c->word[i];
    cr_ints *o = cr_lints_new(L, c->ndocs + 1);
    memcpy(o->data, c->doc_off, (size_t)(c->ndocs + 1) * sizeof *o->data);
    for (int64_t d = 0; shuffle && d < c->ndocs; d++) {
        cr_rng r;
        cr_rng_seed2(&r, seed, (uint64_t)d);
        cr_rng_shuffle_u64(&r, (uint64_t *)(void *)(t->data + o->data[d]), (uint64_t)(o->data[d + 1] - o->data[d]));
    }
    return 2;
}

/* [first, first + count) of the corpus's tokens, from arguments a and a + 1
 * (default: all of them), checked. */
static void token_span(lua_State *L, const cr_lda_corpus *c, int a, const char *fn, int64_t *first, int64_t *count) {
    lua_Integer f = luaL_optinteger(L, a, 0), n = luaL_optinteger(L, a + 1, c->ntokens - f);
    if (f < 0 || n < 0 || f > c->ntokens || n > c->ntokens - f)
        luaL_error(L, "%s: tokens [%I, %I + %I) out of range [0, %I)", fn, f, f, n, (lua_Integer)c->ntokens);
    *first = f;
    *count = n;
}

/* corpus:topics([first [, count]]) -> i32 Matrix count x 1: the topics of
 * tokens first .. first + count - 1 (default: all), in the corpus's token
 * order (a checkpoint of the assignment) */
static int corp_topics(lua_State *L) {
    cr_lda_corpus *c = check_corp(L, 1);
    if (!c->z) luaL_error(L, "topics: corpus has no topics (call init first)");
    int64_t f, n;
    token_span(L, c, 2, "topics", &f, &n);
    cr_mat *m = cr_lmat_new_typed(L, n, 1, CR_LDT_I32);
    if (n) memcpy(cr_lmat_ints(m), c->z + f, (size_t)n * sizeof *c->z);
    return 1;
}

/* corpus:set_topics(m [, first]): the topics of tokens first .. first +
 * rows - 1 (default first 0: m must then cover every token) from an i32
 * Matrix rows x 1 (corpus:topics() of the same documents); each must be in
 * [0, K). Nothing changes on an error. */
static int corp_set_topics(lua_State *L) {
    cr_lda_corpus *c = check_corp(L, 1);
    int32_t *v;
    cr_mat *m = cr_lmat_check_i32(L, 2, &v);
    if (!c->z) luaL_error(L, "set_topics: corpus has no topics (call init first)");
    int64_t f = (int64_t)luaL_optinteger(L, 3, 0);
    int whole = lua_isnoneornil(L, 3);
    if (m->cols != 1 || f < 0 || f > c->ntokens || m->rows > c->ntokens - f || (whole && m->rows != c->ntokens))
        luaL_error(L, "set_topics: %I x %I topics at token %I for %I tokens (expected a column%s)",
                   (lua_Integer)m->rows, (lua_Integer)m->cols, (lua_Integer)f, (lua_Integer)c->ntokens,
                   whole ? " of one per token" : " inside the corpus");
    for (int64_t i = 0; i < m->rows; i++)
        if (v[i] < 0 || v[i] >= c->K)
            luaL_error(L, "set_topics: token %I has topic %d, outside [0, %d)", (lua_Integer)(f + i), (int)v[i], c->K);
    if (m->rows) memcpy(c->z + f, v, (size_t)m->rows * sizeof *c->z);
    return 0;
}

static const luaL_Reg corp_methods[] = {
    {"topics", corp_topics},
    {"set_topics", corp_set_topics},
    {"docs", corp_docs},
    {"tokens", corp_tokens},
    {"V", corp_V},
    {"K", corp_K},
    {"init", corp_init},
    {"chunks", corp_chunks},
    {"chunk_keys", corp_chunk_keys},
    {"counts", corp_counts},
    {"sample", corp_sample},
    {"doc_loglik", corp_doc_loglik},
    {"word_topic_counts", corp_word_topic_counts},
    {"doc_topic_counts", corp_doc_topic_counts},
    {"tokens_offsets", corp_tokens_offsets},
    {"close", corp_gc},
    {NULL, NULL},
};

static const luaL_Reg lda_funcs[] = {
    {"lda_load", l_lda_load},
    {"lda_vocab", l_lda_vocab},
    {"lda_word_loglik", l_lda_word_loglik},
    {NULL, NULL},
};

void cr_lkernels_add_lda(lua_State *L) {
    cr_lmetatable(L, LDA_MT, corp_methods, corp_gc, NULL);
    luaL_setfuncs(L, lda_funcs, 0);
}
