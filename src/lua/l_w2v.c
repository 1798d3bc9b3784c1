/* word2vec kernels for model scripts: part of crescent.core.kernels.
 * word2vec (lua/models/word2vec.lua; the math in src/kernels/cr_w2v.h):
 *   kernels.w2v_sgns(in, out, syn0, syn1, negs [, opts]) -> loss, pairs, neg_pos
 *   kernels.w2v_cbow(in, out, syn0, syn1, negs [, opts]) -> loss, pairs, neg_pos
 *       in, out: crescent.Ints, per token its 0-based row of syn0 / syn1
 *       (crescent.Matrix, the pulled rows); negs: crescent.Ints of syn1 rows.
 *       Trains skip-gram / CBOW over the tokens in place. opts: window (5),
 *       negative (5, per update), alpha (0.025), seed (0, window shrink),
 *       neg_mode ("pool": negs read cyclically from neg_pos (0), k per
 *       update; "position": negs[i*k .. i*k+k) for token i; "pick": each
 *       negative a uniformly random entry of negs), sigmoid
 *       ("table" or "exact"), loss (true), sentences (crescent.Ints of
 *       offsets 0..#in; windows stay inside), grad_lr (> 0: the matrices
 *       become (before - after) / grad_lr, to push to an sgd table with lr
 *       grad_lr). neg_pos is where the pool continues.
 *   kernels.w2v_subsample(words, counts [, opts]) -> kept (crescent.Ints)
 *       words: ids into counts (crescent.Ints); opts: sample (1e-3), seed
 *       (0), total (0: sum of counts). The tool's keep probability.
 *   kernels.w2v_init(syn0, syn1, seed): uniform in [-0.5/d, 0.5/d), zero.
 * The streamed corpus (kernels/cr_w2v_corpus.h), what lua/models/word2vec.lua
 * trains with:
 *   kernels.w2v_vocab(path [, {min_count = 5}]) -> {words, counts, text, n,
 *       kept, raw, lines} | nil, msg   (text: "word count" lines)
 *   kernels.w2v_reader(path, text [, {part, parts, batch, max_sentence,
 *       sample, seed}]) -> R | nil, msg, with
 *     R:next() -> keys (the batch's distinct words), raw, words, kept | nil
 *     R:peek() -> keys of the batch after the current one | nil (read
 *       ahead; the next R:next() returns that batch)
 *     R:pool(sampled keys) -> out keys (the batch's words, then the pool's others)
 *     R:train(syn0, syn1, pool_rows [, {model, window, negative, alpha,
 *       sigmoid, loss}]) -> out change, loss, pairs  (syn0 becomes the input
 *       change; changes are after - before, for tables with optimizer add)
 *     R:rewind(epoch), R:close()
 *   kernels.w2v_copy_rows(dst, at, src), w2v_write_vectors(path, M, words),
 *       w2v_read_vectors(path) -> M, words   (word2vec text format)
 * Misuse (wrong shapes, names, indices) raises, naming the function; file
 * problems return nil, msg. */
#include <lauxlib.h>
#include <lua.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"
#include "kernels/cr_mf.h"
#include "kernels/cr_w2v.h"
#include "kernels/cr_w2v_corpus.h"
#include "kernels/cr_w2v_io.h"
#include "lua/l_sandbox.h"
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

static const char *const w2v_neg_modes[] = {"pool", "position", "pick", NULL};
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
    {"neg_mode", CR_OPT_ENUM, WO(neg_mode), 0, 0, 0, "pool", NULL, "negatives: a pool read cyclically, k per token, or picked at random from the pool",
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
                      o.neg_pos, NULL, NULL, o.neg_mode == 2};
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

/* ---- the streamed corpus (kernels/cr_w2v_corpus.h) ---- */

#define W2VR_MT "crescent.W2VReader"

typedef struct w2vr {
    cr_w2v_vocab v;
    cr_w2v_reader *r;
    cr_w2v_rbatch b;
    int state; /* 0 no batch, 1 batch read, 2 pool mapped */
    cr_rng rng;    /* window shrink and pool picks */
    uint64_t seed; /* rng's: reseeded per epoch by R:rewind */
    int64_t part;
    size_t charged; /* bytes counted against a model's cap (cr_lsandbox_reserve) */
} w2vr;

static w2vr *check_w2vr(lua_State *L, int idx) {
    w2vr *u = luaL_checkudata(L, idx, W2VR_MT);
    if (!u->r) luaL_error(L, "word2vec reader is closed");
    return u;
}

static int w2vr_gc(lua_State *L) {
    w2vr *u = luaL_checkudata(L, 1, W2VR_MT);
    cr_w2v_reader_close(&u->r);
    cr_w2v_vocab_free(&u->v);
    cr_sandbox_uncharge(L, u->charged);
    u->charged = 0;
    return 0;
}

/* w2v_vocab(path [, {min_count = 5}]) -> {words = {...}, counts = Ints, text, n, kept, raw, lines} | nil, msg
 * text: "word count" lines, what w2v_reader takes as its vocabulary. */
typedef struct w2v_vocab_opts {
    int64_t min_count;
} w2v_vocab_opts;

static const cr_opt w2v_vocab_rows[] = {
    {"min_count", CR_OPT_INT, offsetof(w2v_vocab_opts, min_count), CR_OPT_RANGE, 1, 9007199254740992.0, "5", NULL,
     "drop words seen fewer times", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

static void set_int(lua_State *L, const char *k, int64_t x) {
    lua_pushinteger(L, x);
    lua_setfield(L, -2, k);
}

/* [-0, +1] The result table of w2v_vocab from v. */
static void push_vocab(lua_State *L, const cr_w2v_vocab *v) {
    int64_t n = v->words.n;
    lua_createtable(L, 0, 8);
    lua_createtable(L, (int)n, 0);
    for (int64_t i = 0; i < n; i++) {
        lua_pushstring(L, cr_dict_name(&v->words, i));
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "words");
    cr_ints *c = cr_lints_new(L, n);
    memcpy(c->data, v->count, (size_t)n * sizeof *c->data);
    lua_setfield(L, -2, "counts");
    size_t len;
    char *text = cr_w2v_vocab_text(v, &len);
    lua_pushlstring(L, text, len);
    free(text);
    lua_setfield(L, -2, "text");
    set_int(L, "n", n);
    set_int(L, "kept", v->kept);
    set_int(L, "raw", v->raw);
    set_int(L, "lines", v->lines);
}

static int l_w2v_vocab(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    static const cr_lopt_set set = {"w2v_vocab", NULL, w2v_vocab_rows};
    w2v_vocab_opts o;
    cr_lopt_read(L, 2, &set, &o);
    w2vr *u = lua_newuserdatauv(L, sizeof *u, 0); /* owns v until the end (freed by __gc on a raise) */
    memset(u, 0, sizeof *u); /* the count (or parse) below initializes v */
    luaL_setmetatable(L, W2VR_MT);
    cr_err e;
    if (cr_w2v_vocab_count(path, o.min_count, &u->v, &e) != 0) return cr_lfail(L, e.msg);
    push_vocab(L, &u->v);
    cr_w2v_vocab_free(&u->v);
    return 1;
}

typedef struct w2v_reader_opts {
    int64_t part, parts, batch, max_sentence, seed;
    double sample;
} w2v_reader_opts;

#define RO(f) offsetof(w2v_reader_opts, f)
static const cr_opt w2v_reader_rows[] = {
    {"part", CR_OPT_INT, RO(part), CR_OPT_RANGE, 0, 1 << 30, "0", NULL, "this reader's share of the lines", NULL,
     NULL},
    {"parts", CR_OPT_INT, RO(parts), CR_OPT_RANGE, 1, 1 << 30, "1", NULL, "readers sharing the file", NULL, NULL},
    {"batch", CR_OPT_INT, RO(batch), CR_OPT_RANGE, 1, 1 << 30, "20000", NULL, "tokens read per batch", NULL, NULL},
    {"max_sentence", CR_OPT_INT, RO(max_sentence), CR_OPT_RANGE, 1, 1 << 30, "1000", NULL, "kept words per sentence",
     NULL, NULL},
    {"sample", CR_OPT_DOUBLE, RO(sample), CR_OPT_RANGE, 0, 1, "1e-3", NULL, "subsampling threshold t (0: none)", NULL,
     NULL},
    {"seed", CR_OPT_INT, RO(seed), 0, 0, 0, "1", NULL, "subsampling, window and pool draws", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* w2v_reader(path, vocab_text [, opts]) -> reader | nil, msg */
static int l_w2v_reader(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    size_t len;
    const char *text = luaL_checklstring(L, 2, &len);
    static const cr_lopt_set set = {"w2v_reader", NULL, w2v_reader_rows};
    w2v_reader_opts o;
    cr_lopt_read(L, 3, &set, &o);
    if (o.part >= o.parts) luaL_error(L, "w2v_reader: part %d is not below parts %d", (int)o.part, (int)o.parts);
    w2vr *u = lua_newuserdatauv(L, sizeof *u, 0);
    memset(u, 0, sizeof *u);
    luaL_setmetatable(L, W2VR_MT);
    /* the parsed vocabulary (about the text again, plus a count and three
     * slots per word) and two batches of up to batch + max_sentence tokens,
     * each an int32 row and an int64 key */
    u->charged = cr_lsandbox_reserve(L, 2.0 * (double)len + 2.0 * ((double)o.batch + (double)o.max_sentence) * 12,
                                     "w2v_reader");
    cr_err e;
    if (cr_w2v_vocab_parse(text, len, &u->v, &e) != 0) luaL_error(L, "w2v_reader: %s", e.msg);
    if (u->v.words.n == 0) luaL_error(L, "w2v_reader: empty vocabulary");
    cr_w2v_reader_opts ro = {o.part, o.parts, o.batch, o.max_sentence, o.sample};
    u->r = cr_w2v_reader_open(path, &u->v, &ro, (uint64_t)o.seed, &e);
    if (!u->r) return cr_lfail(L, e.msg);
    u->seed = (uint64_t)o.seed * 0x2545F4914F6CDD1Dull + 7;
    u->part = o.part;
    cr_rng_seed2(&u->rng, u->seed, (uint64_t)u->part);
    return 1;
}

/* [-0, +1] n keys as a new Ints. The reader's key array is NULL until a
 * batch has a word, and memcpy's pointers must be valid even for 0 bytes. */
static void push_keys(lua_State *L, const int64_t *keys, int64_t n) {
    cr_ints *k = cr_lints_new(L, n);
    if (n > 0) memcpy(k->data, keys, (size_t)n * sizeof *k->data);
}

/* R:next() -> keys (Ints: the batch's distinct words), raw tokens, vocabulary tokens, kept tokens | nil */
static int w2vr_next(lua_State *L) {
    w2vr *u = check_w2vr(L, 1);
    cr_err e;
    int rc = cr_w2v_reader_next(u->r, &u->b, &e);
    if (rc < 0) luaL_error(L, "%s", e.msg);
    u->state = rc;
    if (rc == 0) {
        lua_pushnil(L);
        return 1;
    }
    push_keys(L, u->b.keys, u->b.nkeys);
    lua_pushinteger(L, u->b.raw);
    lua_pushinteger(L, u->b.words);
    lua_pushinteger(L, u->b.n);
    return 4;
}

/* R:peek() -> keys (Ints: the next batch's distinct words) | nil at the end.
 * Reads the batch after the current one ahead (the current batch stays
 * trainable); the next R:next() returns it. For models that move the next
 * batch's rows while this one trains (docs/management.md). */
static int w2vr_peek(lua_State *L) {
    w2vr *u = check_w2vr(L, 1);
    cr_err e;
    cr_w2v_rbatch b;
    int rc = cr_w2v_reader_peek(u->r, &b, &e);
    if (rc < 0) luaL_error(L, "%s", e.msg);
    if (rc == 0) {
        lua_pushnil(L);
        return 1;
    }
    push_keys(L, b.keys, b.nkeys);
    return 1;
}

/* R:pool(keys) -> out keys (Ints: the batch's words, then the pool's other words) */
static int w2vr_pool(lua_State *L) {
    w2vr *u = check_w2vr(L, 1);
    cr_ints *p = cr_lints_check(L, 2);
    if (u->state < 1) luaL_error(L, "pool: no batch (call next first)");
    cr_err e;
    if (cr_w2v_reader_pool(u->r, &u->b, p->data, p->n, &e) != 0) luaL_error(L, "pool: %s", e.msg);
    u->state = 2;
    push_keys(L, u->b.keys, u->b.nkeys + u->b.nextra);
    return 1;
}

/* R:rewind(epoch) */
static int w2vr_rewind(lua_State *L) {
    w2vr *u = check_w2vr(L, 1);
    cr_err e;
    lua_Integer epoch = luaL_checkinteger(L, 2);
    if (cr_w2v_reader_rewind(u->r, epoch, &e) != 0) luaL_error(L, "%s", e.msg);
    /* an epoch's draws depend on the seed, the part and the epoch only, not
     * on the epochs before it: a run resumed from a checkpoint repeats them */
    cr_rng_seed2(&u->rng, u->seed + (uint64_t)epoch * 0x9E3779B97F4A7C15ull, (uint64_t)u->part);
    u->state = 0;
    return 0;
}

typedef struct w2v_train_opts {
    int64_t window, negative;
    double alpha;
    int model, sigmoid, loss;
} w2v_train_opts;

static const char *const w2v_models[] = {"sg", "cbow", NULL};

#define TO(f) offsetof(w2v_train_opts, f)
static const cr_opt w2v_train_rows[] = {
    {"model", CR_OPT_ENUM, TO(model), 0, 0, 0, "sg", NULL, "skip-gram or CBOW", w2v_models, NULL},
    {"window", CR_OPT_INT, TO(window), CR_OPT_RANGE, 1, 1000, "5", NULL, "largest window", NULL, NULL},
    {"negative", CR_OPT_INT, TO(negative), CR_OPT_RANGE, 0, CR_W2V_MAX_NEG, "5", NULL, "negatives per update", NULL,
     NULL},
    {"alpha", CR_OPT_DOUBLE, TO(alpha), CR_OPT_RANGE, 0, 1e9, "0.025", NULL, "learning rate", NULL, NULL},
    {"sigmoid", CR_OPT_ENUM, TO(sigmoid), 0, 0, 0, "table", NULL, "the tool's table or exact", w2v_sigmoids, NULL},
    {"loss", CR_OPT_FLAG, TO(loss), 0, 0, 0, "0", NULL, "compute the loss (an exp and a log per target)", NULL, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* dst = dst - before over n floats: the change the kernel made */
static void to_delta(float *dst, const float *before, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] -= before[i];
}

/* [-0, +1] The batch's output rows: the pulled rows of its words, then the
 * pool's fetched rows of the other words. */
static cr_mat *w2vr_syn1(lua_State *L, const w2vr *u, const cr_mat *s1, const cr_mat *prow) {
    const cr_w2v_rbatch *b = &u->b;
    int64_t d = s1->cols, n = b->nkeys + (u->state == 2 ? b->nextra : 0);
    cr_mat *m = cr_lmat_new(L, n, d);
    memcpy(m->data, s1->data, (size_t)(b->nkeys * d) * sizeof(float));
    for (int64_t x = 0; u->state == 2 && x < b->nextra; x++)
        memcpy(cr_mat_row(m, b->nkeys + x), cr_mat_row(prow, b->extra_src[x]), (size_t)d * sizeof(float));
    return m;
}

/* R:train(syn0, syn1, pool_rows [, opts]) -> out delta (Matrix), loss, pairs
 * syn0, syn1: the pulled input and output rows of the batch's words (keys of
 * next); pool_rows: the fetched rows of the pool given to R:pool (nil when
 * negative = 0). Trains in place, then turns syn0 into the change of the
 * input rows and returns the change of the output rows (out keys of pool),
 * both as after - before: push them to tables with the add optimizer. */
static int w2vr_train(lua_State *L) {
    w2vr *u = check_w2vr(L, 1);
    cr_mat *s0 = cr_lmat_check(L, 2), *s1 = cr_lmat_check(L, 3);
    static const cr_lopt_set set = {"train", NULL, w2v_train_rows};
    w2v_train_opts o;
    cr_lopt_read(L, 5, &set, &o);
    const cr_w2v_rbatch *b = &u->b;
    if (u->state < 1) luaL_error(L, "train: no batch (call next first)");
    if (o.negative > 0 && u->state != 2) luaL_error(L, "train: negative > 0 needs a pool (call pool first)");
    int64_t d = s0->cols;
    if (s0->rows != b->nkeys || s1->rows != b->nkeys || s1->cols != d || d < 1 || d > CR_W2V_MAX_DIM)
        luaL_error(L, "train: syn0 and syn1 must be %d x d matrices (the batch's words), got %d x %d and %d x %d",
                   (int)b->nkeys, (int)s0->rows, (int)d, (int)s1->rows, (int)s1->cols);
    cr_mat *prow = NULL;
    if (u->state == 2) {
        prow = cr_lmat_check(L, 4);
        if (prow->rows != b->nnegs || prow->cols != d)
            luaL_error(L, "train: pool rows must be %d x %d, got %d x %d", (int)b->nnegs, (int)d, (int)prow->rows,
                       (int)prow->cols);
    }
    cr_mat *m1 = w2vr_syn1(L, u, s1, prow);
    float *k0 = cr_w2v_reader_scratch(u->r, 0, s0->rows * d), *k1 = cr_w2v_reader_scratch(u->r, 1, m1->rows * d);
    if (s0->rows > 0) memcpy(k0, s0->data, (size_t)(s0->rows * d) * sizeof(float)); /* k0, k1: NULL until used */
    if (m1->rows > 0) memcpy(k1, m1->data, (size_t)(m1->rows * d) * sizeof(float));
    cr_w2v_batch kb = {b->n, b->row, b->row, b->sent, b->nsent};
    cr_w2v_negs ng = {(int)o.negative, b->negs, u->state == 2 ? b->nnegs : 0, 0, 0, NULL, NULL, 1};
    if (o.negative > 0 && ng.n == 0) luaL_error(L, "train: an empty pool");
    cr_w2v_params p = {(int)o.window, (float)o.alpha, o.sigmoid == 1, o.loss};
    cr_w2v_stats st = {0, 0};
    (o.model == 1 ? cr_w2v_cbow : cr_w2v_sgns)(&kb, &p, &ng, &u->rng, s0, m1, &st);
    to_delta(s0->data, k0, s0->rows * d);
    to_delta(m1->data, k1, m1->rows * d);
    lua_pushnumber(L, st.loss);
    lua_pushinteger(L, st.pairs);
    return 3;
}

/* w2v_copy_rows(dst, at, src): dst rows at+1 .. at+#src = src (0-based at) */
static int l_w2v_copy_rows(lua_State *L) {
    cr_mat *dst = cr_lmat_check(L, 1), *src = cr_lmat_check(L, 3);
    lua_Integer at = luaL_checkinteger(L, 2);
    if (src->cols != dst->cols || at < 0 || at > dst->rows - src->rows)
        luaL_error(L, "w2v_copy_rows: %d x %d rows do not fit at row %d of a %d x %d matrix", (int)src->rows,
                   (int)src->cols, (int)at, (int)dst->rows, (int)dst->cols);
    memcpy(cr_mat_row(dst, at), src->data, (size_t)(src->rows * src->cols) * sizeof(float));
    return 0;
}

/* [-0, +1] words (a Lua array of n strings) as a C array (Lua-owned). */
static const char **w2v_words(lua_State *L, int idx, int64_t n) {
    luaL_checktype(L, idx, LUA_TTABLE);
    if (luaL_len(L, idx) != n) luaL_error(L, "%d words for %d rows", (int)luaL_len(L, idx), (int)n);
    const char **w = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *w, 0);
    for (int64_t i = 0; i < n; i++) {
        if (lua_rawgeti(L, idx, i + 1) != LUA_TSTRING) luaL_error(L, "word %d is not a string", (int)i + 1);
        w[i] = lua_tostring(L, -1); /* kept alive by the table */
        lua_pop(L, 1);
    }
    return w;
}

/* w2v_write_vectors(path, M, words) -> true | nil, msg (word2vec text format) */
static int l_w2v_write_vectors(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_mat *m = cr_lmat_check(L, 2);
    const char **w = w2v_words(L, 3, m->rows);
    cr_err e;
    if (cr_w2v_write_vectors(path, m, w, &e) != 0) return cr_lfail(L, e.msg);
    lua_pushboolean(L, 1);
    return 1;
}

/* w2v_read_vectors(path) -> M, words | nil, msg */
static int l_w2v_read_vectors(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_mat m;
    cr_dict d;
    cr_err e;
    if (cr_w2v_read_vectors(path, &m, &d, &e) != 0) return cr_lfail(L, e.msg);
    cr_mat *out = cr_lmat_new(L, m.rows, m.cols); /* raises only on out of memory */
    memcpy(out->data, m.data, (size_t)(m.rows * m.cols) * sizeof(float));
    free(m.data);
    lua_createtable(L, (int)d.n, 0);
    for (int64_t i = 0; i < d.n; i++) {
        lua_pushstring(L, cr_dict_name(&d, i));
        lua_rawseti(L, -2, i + 1);
    }
    cr_dict_free(&d);
    return 2;
}

static const luaL_Reg w2vr_methods[] = {
    {"next", w2vr_next}, {"peek", w2vr_peek}, {"pool", w2vr_pool}, {"train", w2vr_train},
    {"rewind", w2vr_rewind}, {"close", w2vr_gc}, {NULL, NULL},
};

static const luaL_Reg w2v_funcs[] = {
    {"w2v_sgns", l_w2v_sgns},
    {"w2v_cbow", l_w2v_cbow},
    {"w2v_subsample", l_w2v_subsample},
    {"w2v_init", l_w2v_init},
    {"w2v_vocab", l_w2v_vocab},
    {"w2v_reader", l_w2v_reader},
    {"w2v_copy_rows", l_w2v_copy_rows},
    {"w2v_write_vectors", l_w2v_write_vectors},
    {"w2v_read_vectors", l_w2v_read_vectors},
    {NULL, NULL},
};

void cr_lkernels_add_w2v(lua_State *L) {
    cr_lmetatable(L, W2VR_MT, w2vr_methods, w2vr_gc, NULL);
    luaL_setfuncs(L, w2v_funcs, 0);
}
