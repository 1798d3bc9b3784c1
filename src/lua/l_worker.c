/* Worker threads: sandboxed Lua states running model scripts.
 *
 * The model script returns a table M; M.init(ctx, opts) runs once after the
 * script is loaded, then the scheduler calls M.epoch / M.evaluate / any
 * M.<name>(ctx, args). Results are plain tables sent back serialized. */
#include "lua/l_worker.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_time.h"
#include "base/cr_utf8.h"
#include "lua/l_sandbox.h"
#include "lua/l_sandbox_core.h"
#include "lua/l_util.h"
#include "lua/l_worker_serial.h"
#include "ps/cr_wclient.h"
#include "ps/cr_wsample.h"

#define WTABLE_MT "crescent.WorkerTable"
#define STR_(x) #x
#define STR(x) STR_(x)
#define SHANDLE_MT "crescent.SampleHandle"
#define WORKER_KEY "crescent.worker"
#define CTX_KEY "crescent.ctx"

typedef struct lworker {
    cr_node *n;
    int lw, gw;
    cr_wclient *wc;
    cr_wsample *ws;  /* NULL once destroyed (handles collected after that do nothing) */
    lua_State *L;
    uint64_t pol_gen;
    int pol_ref;     /* registry ref of the policy table, or LUA_NOREF */
    int next_async;  /* ids for pull_async/push_async */
    int named;       /* the error being raised already names the worker */
    double pol_until; /* while the policy's code runs: when it is stopped (0: not running) */
    char pol_err[CR_SANDBOX_MSG_MAX]; /* why the policy did not load */
} lworker;

typedef struct {
    cr_shard *s;
} wtable;

static lworker *get_worker(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, WORKER_KEY);
    lworker *w = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return w;
}

/* ---------- worker-side tables ---------- */

static cr_shard *check_wtable(lua_State *L) { return ((wtable *)luaL_checkudata(L, 1, WTABLE_MT))->s; }

static void raise_err(lua_State *L, cr_err *e) { luaL_error(L, "%s", e->msg); }

/* Pending async requests live in registry table "crescent.pending":
 * [id] = {creq, matrix-or-true}. */
static int remember_keys(lua_State *L, lworker *w, uint32_t creq, int result_idx, int keys_idx) {
    result_idx = lua_absindex(L, result_idx);
    keys_idx = keys_idx ? lua_absindex(L, keys_idx) : 0;
    lua_getfield(L, LUA_REGISTRYINDEX, "crescent.pending");
    int id = ++w->next_async;
    lua_createtable(L, 3, 0);
    lua_pushinteger(L, creq);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, result_idx);
    lua_rawseti(L, -2, 2);
    if (keys_idx) { /* a sample pull: [3] = keys, creq is the pull's pend id */
        lua_pushvalue(L, keys_idx);
        lua_rawseti(L, -2, 3);
    }
    lua_rawseti(L, -2, id);
    lua_pop(L, 1);
    lua_pushinteger(L, id);
    return 1;
}

/* [-0, +(0|1)] The keys k of a table placed other than by range as its
 * internal ids (ps/cr_place.h), in a new Ints pushed on the stack; k itself
 * under range placement (nothing pushed). A key out of range raises. */
static cr_ints *ids_of(lua_State *L, cr_shard *s, cr_ints *k, const char *op) {
    if (!s->pl) return k;
    cr_ints *id = cr_lints_new(L, k->n);
    for (int64_t i = 0; i < k->n; i++) {
        if (k->data[i] < 0 || k->data[i] >= s->def.keys)
            luaL_error(L, "%s: key %I (position %I) out of range [0, %I) of table '%s'", op, (lua_Integer)k->data[i],
                       (lua_Integer)i + 1, (lua_Integer)s->def.keys, s->def.name);
        id->data[i] = cr_place_id(s->pl, k->data[i]);
    }
    return id;
}

/* [-0, +1] A new n x dim matrix of the table's value type (int32 counts
 * for an i32 table). */
static cr_mat *rows_of(lua_State *L, cr_shard *s, int64_t n) {
    return cr_lmat_new_typed(L, n, s->def.dim, cr_shard_i32(s) ? CR_LDT_I32 : CR_LDT_F32);
}

/* [-0, +1] The matrix the rows go into: argument `into` (a Matrix of
 * n x dim of the table's value type, reused: a model that pulls large
 * row sets every sweep need not allocate and fault in a new one each
 * time) or, when it is absent, a new one. */
static cr_mat *rows_into(lua_State *L, cr_shard *s, int64_t n, int into) {
    if (lua_isnoneornil(L, into)) return rows_of(L, s, n);
    cr_mat *m = cr_lmat_test(L, into);
    if (!m) luaL_argerror(L, into, "crescent.Matrix expected (the rows go into it)");
    int i32 = cr_shard_i32(s);
    if (m->rows != n || m->cols != s->def.dim || (cr_lmat_dtype(L, into) == CR_LDT_I32) != i32)
        luaL_error(L, "pull: %d keys of table '%s' need a %d x %d %s matrix to go into, got %d x %d %s", (int)n,
                   s->def.name, (int)n, (int)s->def.dim, i32 ? "i32" : "f32", (int)m->rows, (int)m->cols,
                   cr_lmat_dtype(L, into) == CR_LDT_I32 ? "i32" : "f32");
    lua_pushvalue(L, into);
    return m;
}

static int start_pull(lua_State *L, uint32_t *req) {
    lua_settop(L, 3); /* keys (converted ones are pushed above) and into */
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    cr_ints *k = ids_of(L, s, cr_lints_from_arg(L, 2), "pull");
    cr_mat *m = rows_into(L, s, k->n, 3);
    cr_err e;
    if (cr_wclient_pull_copy(w->wc, s, k->data, k->n, m->data, req, &e) < 0) raise_err(L, &e);
    return lua_gettop(L); /* the matrix */
}

static int remember(lua_State *L, lworker *w, uint32_t creq, int result_idx) {
    return remember_keys(L, w, creq, result_idx, 0);
}

/* T:pull(keys [, into]) -> Matrix (rows in key order) */
static int t_pull(lua_State *L) {
    lua_settop(L, 3); /* keys (converted ones are pushed above) and into */
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    cr_ints *k = ids_of(L, s, cr_lints_from_arg(L, 2), "pull");
    cr_mat *m = rows_into(L, s, k->n, 3);
    cr_err e;
    if (cr_wclient_pull_borrow(w->wc, s, k->data, k->n, m->data, &e) < 0) raise_err(L, &e);
    return 1;
}

/* [-0, +1] The ids of keys [lo, hi) (arguments 2 and 3, checked against
 * the table) as a new Ints, in key order. */
static cr_ints *range_ids(lua_State *L, cr_shard *s, const char *op) {
    lua_Integer lo = luaL_checkinteger(L, 2), hi = luaL_checkinteger(L, 3);
    if (s->sp) luaL_error(L, "%s: table '%s' is sparse: range operations need a dense table", op, s->def.name);
    if (lo < 0 || hi < lo || hi > s->def.keys)
        luaL_error(L, "%s: range [%I, %I) out of range [0, %I) of table '%s'", op, lo, hi, (lua_Integer)s->def.keys,
                   s->def.name);
    cr_ints *id = cr_lints_new(L, hi - lo);
    for (lua_Integer k = lo; k < hi; k++) id->data[k - lo] = s->pl ? cr_place_id(s->pl, k) : k;
    return id;
}

/* T:pull_range(lo, hi [, into]) -> Matrix of the rows of keys lo .. hi-1 */
static int t_pull_range(lua_State *L) {
    lua_settop(L, 4);
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    cr_ints *id = range_ids(L, s, "pull_range");
    cr_mat *m = rows_into(L, s, id->n, 4);
    cr_err e;
    if (cr_wclient_pull_range(w->wc, s, id->data, id->n, m->data, &e) < 0) raise_err(L, &e);
    return 1;
}

/* T:push_range(lo, hi, rows): rows (hi-lo) x dim, one per key lo .. hi-1 */
static int t_push_range(lua_State *L) {
    lua_settop(L, 4);
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    cr_mat *m = cr_lmat_test(L, 4);
    if (!m) luaL_argerror(L, 4, "crescent.Matrix of rows expected");
    cr_ints *id = range_ids(L, s, "push_range");
    if (m->rows != id->n || m->cols != s->def.dim)
        luaL_error(L, "push_range: %d keys need a %d x %d matrix of rows for table '%s', got %d x %d", (int)id->n,
                   (int)id->n, (int)s->def.dim, s->def.name, (int)m->rows, (int)m->cols);
    int want = cr_shard_i32(s) ? CR_LDT_I32 : CR_LDT_F32;
    if (cr_lmat_dtype(L, 4) != want)
        luaL_error(L, "push_range: table '%s' holds %s values, got an %s matrix", s->def.name, cr_dtype_name(want),
                   cr_dtype_name(!want));
    cr_err e;
    if (cr_wclient_push_range(w->wc, s, id->data, id->n, m->data, &e) < 0) raise_err(L, &e);
    return 0;
}

/* T:pull_async(keys [, into]) -> id */
static int t_pull_async(lua_State *L) {
    uint32_t req;
    int m = start_pull(L, &req);
    return remember(L, get_worker(L), req, m);
}

/* sync: push and wait, without copying the rows */
static void start_push(lua_State *L, uint32_t *req, int sync) {
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    cr_ints *k = ids_of(L, s, cr_lints_from_arg(L, 2), "push");
    cr_mat *m = cr_lmat_test(L, 3);
    if (!m) luaL_argerror(L, 3, "crescent.Matrix of rows expected");
    if (m->rows != k->n || m->cols != s->def.dim)
        luaL_error(L, "push: %d keys need a %d x %d matrix of rows for table '%s', got %d x %d", (int)k->n,
                   (int)k->n, (int)s->def.dim, s->def.name, (int)m->rows, (int)m->cols);
    int want = cr_shard_i32(s) ? CR_LDT_I32 : CR_LDT_F32;
    if (cr_lmat_dtype(L, 3) != want)
        luaL_error(L, "push: table '%s' holds %s values, got an %s matrix (cr.core.util.matrix(rows, cols, \"%s\"))",
                   s->def.name, cr_dtype_name(want), cr_dtype_name(!want), cr_dtype_name(want));
    cr_err e;
    *req = 0;
    if ((sync ? cr_wclient_push_borrow(w->wc, s, k->data, k->n, m->data, &e)
              : cr_wclient_push_copy(w->wc, s, k->data, k->n, m->data, req, &e)) < 0)
        raise_err(L, &e);
}

/* T:push(keys, rows) */
static int t_push(lua_State *L) {
    uint32_t req;
    start_push(L, &req, 1);
    return 0;
}

/* T:push_async(keys, rows) -> id */
static int t_push_async(lua_State *L) {
    uint32_t req;
    start_push(L, &req, 0);
    lua_pushboolean(L, 1);
    return remember(L, get_worker(L), req, -1);
}

/* T:wait(id) -> Matrix (pull), true (push) or keys, rows (pull_sample_async) */
static int t_wait(lua_State *L) {
    check_wtable(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    lworker *w = get_worker(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "crescent.pending");
    if (lua_rawgeti(L, -1, id) != LUA_TTABLE)
        return luaL_error(L, "wait: unknown or already completed request id %d", (int)id);
    lua_rawgeti(L, -1, 1);
    uint32_t creq = (uint32_t)lua_tointeger(L, -1);
    int sample = lua_rawgeti(L, -2, 3) != LUA_TNIL; /* keys */
    lua_rawgeti(L, -3, 2);                          /* rows or result */
    lua_pushnil(L);
    lua_rawseti(L, -6, id);
    cr_err e;
    if (sample) {
        if (creq && !w->ws) return luaL_error(L, "wait: sampling is shut down");
        if (creq && cr_wsample_finish(w->ws, creq, &e) < 0) raise_err(L, &e);
        return 2;
    }
    if (cr_wclient_wait(w->wc, creq, &e) < 0) raise_err(L, &e);
    return 1;
}

/* ---------- sampling (ps/cr_wsample.h) ---------- */

typedef struct lshandle {
    cr_shandle h;
    cr_shard *t;
    size_t charged; /* bytes of the sampler's buffer counted against the cap */
} lshandle;

/* The handle's buffer is gone (closed, or all its samples pulled): its
 * bytes no longer count against the cap. */
static void h_release(lua_State *L, lshandle *h) {
    cr_sandbox_uncharge(L, h->charged);
    h->charged = 0;
}

static int h_gc(lua_State *L) {
    lshandle *h = luaL_checkudata(L, 1, SHANDLE_MT);
    lworker *w = get_worker(L);
    if (w && w->ws && h->t) cr_wsample_close(w->ws, h->h);
    h->t = NULL;
    h_release(L, h);
    return 0;
}

/* Why charge: a handle of n samples holds n cr_samples (40 bytes; twice
 * that under long-term postponing) in the sampler, and its userdata is
 * tiny, so neither the cap nor the collector saw them: a loop of
 * prepare_sample(d, 2^24) grew the node by 640 MB a turn. A full
 * collection first gives back the buffers of handles no longer reachable. */
static void charge_samples(lua_State *L, lshandle *h, lua_Integer n) {
    size_t bytes = n >= 0 && n <= CR_WSAMPLE_MAX_N ? (size_t)(n + 1) * sizeof(cr_sample) : 0;
    if (cr_sandbox_charge(L, bytes) < 0) {
        lua_gc(L, LUA_GCCOLLECT);
        if (cr_sandbox_charge(L, bytes) < 0)
            luaL_error(L, "prepare_sample: %I samples need %d MB, more than is left under the model script's "
                          "cap of %d MB (option memory_mb)",
                       n, (int)(bytes >> 20) + 1, cr_sandbox_limit(L));
    }
    h->charged = bytes;
}

/* T:prepare_sample(dist, n) -> handle */
static int t_prepare_sample(lua_State *L) {
    cr_shard *s = check_wtable(L);
    const char *dist = luaL_checkstring(L, 2);
    lua_Integer n = luaL_checkinteger(L, 3);
    lworker *w = get_worker(L);
    if (cr_shard_i32(s))
        return luaL_error(L, "prepare_sample: table '%s' holds i32 counts; sampling is for f32 tables", s->def.name);
    cr_err pe;
    if (cr_shard_need_range(s, "sampling", &pe) < 0) raise_err(L, &pe);
    lshandle *h = lua_newuserdatauv(L, sizeof *h, 0);
    h->t = NULL;
    h->charged = 0;
    luaL_setmetatable(L, SHANDLE_MT);
    charge_samples(L, h, n);
    cr_err e;
    if (cr_wsample_prepare(w->ws, s, dist, (int64_t)n, &h->h, &e) < 0) {
        h_release(L, h);
        raise_err(L, &e);
    }
    h->t = s;
    return 1;
}

/* Pull m (default: all left) samples of the handle at 2 into new keys and
 * rows (pushed); pend: see cr_wsample_pull. */
static void start_sample(lua_State *L, uint32_t *pend) {
    cr_shard *s = check_wtable(L);
    lshandle *h = luaL_checkudata(L, 2, SHANDLE_MT);
    lworker *w = get_worker(L);
    if (cr_shard_i32(s))
        luaL_error(L, "pull_sample: table '%s' holds i32 counts; sampling is for f32 tables", s->def.name);
    int64_t left = h->t ? cr_wsample_left(w->ws, h->h) : -1;
    lua_Integer m = luaL_optinteger(L, 3, left > 0 ? left : 0);
    if (left < 0) luaL_error(L, "pull_sample: the handle is closed (all its samples were pulled, or it was closed)");
    if (m < 0 || m > left) luaL_error(L, "pull_sample: the handle has %I samples left, asked for %I", (lua_Integer)left, m);
    cr_ints *k = cr_lints_new(L, m);
    cr_mat *r = cr_lmat_new(L, m, s->def.dim);
    cr_err e;
    if (cr_wsample_pull(w->ws, s, h->h, m, k->data, r->data, pend, &e) < 0) raise_err(L, &e);
    if (cr_wsample_left(w->ws, h->h) < 0) h_release(L, h); /* its last samples: closed */
}

/* T:pull_sample(handle [, m]) -> keys (Ints), rows (Matrix m x dim) */
static int t_pull_sample(lua_State *L) {
    start_sample(L, NULL);
    return 2;
}

/* T:pull_sample_async(handle [, m]) -> id; T:wait(id) -> keys, rows */
static int t_pull_sample_async(lua_State *L) {
    uint32_t pend;
    start_sample(L, &pend);
    return remember_keys(L, get_worker(L), pend, -1, -2);
}

/* T:localize(keys [, wait]) -> id (T:wait(id) -> true), or nothing when
 * wait is true: move the keys to this node (docs/management.md). */
static int t_localize(lua_State *L) {
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    int block = lua_toboolean(L, 3); /* before the keys are converted onto the stack */
    cr_ints *k = ids_of(L, s, cr_lints_from_arg(L, 2), "localize");
    uint32_t req;
    cr_err e;
    if (cr_wclient_localize(w->wc, s, k->data, k->n, &req, &e) < 0) raise_err(L, &e);
    if (block) {
        if (cr_wclient_wait(w->wc, req, &e) < 0) raise_err(L, &e);
        return 0;
    }
    lua_pushboolean(L, 1);
    return remember(L, w, req, -1);
}

/* T:owner(k) -> node */
static int t_owner(lua_State *L) {
    cr_shard *s = check_wtable(L);
    lua_Integer k = luaL_checkinteger(L, 2);
    if (s->sp) {
        lua_pushinteger(L, cr_shard_owner(s, k));
        return 1;
    }
    if (k < 0 || k >= s->def.keys)
        return luaL_error(L, "owner: key %I out of range [0, %I) of table '%s'", k, (lua_Integer)s->def.keys, s->def.name);
    lua_pushinteger(L, s->pl ? cr_place_owner(s->pl, k) : cr_shard_owner(s, k));
    return 1;
}

/* T:local_range() -> lo, hi (this node's keys [lo, hi)) */
static int t_local_range(lua_State *L) {
    cr_shard *s = check_wtable(L);
    cr_err e;
    if (cr_shard_need_range(s, "local_range (T:local_keys() lists this node's keys)", &e) < 0) raise_err(L, &e);
    lua_pushinteger(L, s->lo);
    lua_pushinteger(L, s->hi);
    return 2;
}

/* T:local_keys() -> Ints: this node's keys, increasing */
static int t_local_keys(lua_State *L) {
    cr_shard *s = check_wtable(L);
    if (s->sp) return luaL_error(L, "local_keys: table '%s' is sparse (its keys are any 64-bit integers)", s->def.name);
    cr_ints *k = cr_lints_new(L, s->hi - s->lo);
    for (int64_t i = s->lo; i < s->hi; i++) k->data[i - s->lo] = cr_shard_user_key(s, i);
    return 1;
}

static int t_index(lua_State *L) {
    cr_shard *s = check_wtable(L);
    const char *k = luaL_checkstring(L, 2);
    if (!strcmp(k, "keys")) {
        if (s->sp) lua_pushliteral(L, "sparse");
        else lua_pushinteger(L, s->def.keys);
    } else if (!strcmp(k, "sparse")) lua_pushboolean(L, s->sp != NULL);
    else if (!strcmp(k, "dim")) lua_pushinteger(L, s->def.dim);
    else if (!strcmp(k, "name")) lua_pushstring(L, s->def.name);
    else if (!strcmp(k, "dtype")) lua_pushstring(L, cr_dtype_name(s->def.dtype));
    else {
        lua_getmetatable(L, 1);
        lua_getfield(L, -1, "methods");
        lua_getfield(L, -1, k);
        if (lua_isnil(L, -1)) return luaL_error(L, "table '%s' has no field '%s'", s->def.name, k);
    }
    return 1;
}

static void refresh_tables(lua_State *L, lworker *w) {
    lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY);
    if (lua_getfield(L, -1, "tables") != LUA_TTABLE) { /* the model overwrote it: a new one */
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, "tables");
    }
    int n = cr_node_table_count(w->n);
    for (int i = 0; i < n; i++) {
        cr_shard *s = cr_node_table_at(w->n, i, NULL);
        if (lua_getfield(L, -1, s->def.name) == LUA_TNIL) {
            lua_pop(L, 1);
            wtable *t = lua_newuserdatauv(L, sizeof *t, 0);
            t->s = s;
            luaL_setmetatable(L, WTABLE_MT);
            lua_setfield(L, -2, s->def.name);
        } else
            lua_pop(L, 1);
    }
    lua_pop(L, 2);
}

/* ---------- ctx ---------- */

/* The policy's source, or its question, for the protected functions
 * below: nothing may raise across the node's C frames that call us. */
typedef struct polcall {
    lworker *w;
    const char *src, *chunk, *opts;
    size_t n, optsn;
    int64_t my, mn;
    const int64_t *clocks;
    int nw;
} polcall;

/* [-1, +0] Run the policy source and its constructor in a fresh sandbox
 * environment of the model's state: a policy sees neither `cr` nor `ctx`
 * nor the model's globals; its memory counts against the same cap. */
static int policy_run(lua_State *L) {
    const polcall *p = lua_touserdata(L, 1);
    cr_sandbox_push_env(L);
    lua_pushfstring(L, "@%s", p->chunk);
    if (cr_sandbox_load(L, p->src, p->n, lua_tostring(L, -1), -2) != LUA_OK) return lua_error(L);
    lua_call(L, 0, 1);
    if (!lua_isfunction(L, -1)) return luaL_error(L, "%s: policy must return a constructor function(opts)", p->chunk);
    if (cr_lser_load(L, p->opts, p->optsn) < 0) return lua_error(L);
    lua_call(L, 1, 1);
    if (!lua_istable(L, -1)) return luaL_error(L, "%s: policy constructor must return a table", p->chunk);
    luaL_unref(L, LUA_REGISTRYINDEX, p->w->pol_ref);
    p->w->pol_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* [-2, +1] policy.may_proceed(my, min, clocks) */
static int policy_ask(lua_State *L) {
    const polcall *p = lua_touserdata(L, 2);
    lua_getfield(L, 1, "may_proceed");
    if (!lua_isfunction(L, -1)) return luaL_error(L, "policy has no may_proceed function");
    lua_pushinteger(L, p->my);
    lua_pushinteger(L, p->mn);
    lua_createtable(L, p->nw, 0);
    for (int i = 0; i < p->nw; i++) {
        lua_pushinteger(L, p->clocks[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_call(L, 3, 1);
    return 1;
}

/* lua_pcall of f on the nargs values at the top, as the policy's code:
 * leaves one result, or returns non-zero with the message in err (memory
 * errors name the policy; written before the label changes back). The
 * code has CR_SANDBOX_CHECK_SECONDS, as the scheduler's check of its
 * constructor: a may_proceed that loops would hold the worker for ever. */
static int policy_pcall(lworker *w, lua_CFunction f, int nargs, char *err, size_t errn) {
    lua_State *L = w->L;
    const char *label = cr_sandbox_set_label(L, "policy script");
    lua_pushcfunction(L, f);
    lua_insert(L, -nargs - 1);
    w->pol_until = cr_now() + CR_SANDBOX_CHECK_SECONDS;
    int rc = lua_pcall(L, nargs, 1, 0);
    w->pol_until = 0;
    if (rc != LUA_OK) cr_sandbox_message(L, rc, err, errn);
    cr_sandbox_set_label(L, label);
    return rc;
}

static int policy_load(void *arg, const char *src, size_t n, const char *chunk, const char *opts, size_t optsn) {
    lworker *w = arg;
    lua_State *L = w->L;
    int top = lua_gettop(L);
    polcall p = {.w = w, .src = src, .chunk = chunk, .opts = opts, .n = n, .optsn = optsn};
    if (!lua_checkstack(L, 4)) return -1;
    lua_pushlightuserdata(L, &p);
    int rc = policy_pcall(w, policy_run, 1, w->pol_err, sizeof w->pol_err);
    lua_settop(L, top);
    return rc == LUA_OK ? 0 : -1;
}

static int decide(void *arg, int64_t my, int64_t mn, const int64_t *clocks, int nw, cr_err *e) {
    lworker *w = arg;
    lua_State *L = w->L;
    if (w->pol_ref == LUA_NOREF) return 1;
    int top = lua_gettop(L);
    polcall p = {.my = my, .mn = mn, .clocks = clocks, .nw = nw};
    if (!lua_checkstack(L, 4)) return cr_errf(e, "policy: Lua stack overflow");
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->pol_ref);
    lua_pushlightuserdata(L, &p);
    char msg[CR_SANDBOX_MSG_MAX];
    int rc = policy_pcall(w, policy_ask, 2, msg, sizeof msg);
    if (rc != LUA_OK)
        rc = cr_errf(e, "policy: %s", msg);
    else
        rc = lua_toboolean(L, -1) ? 1 : 0;
    lua_settop(L, top);
    return rc;
}

/* ctx:clock(): end of one unit of work; waits as the policy says. */
static int c_clock(lua_State *L) {
    lworker *w = get_worker(L);
    cr_err e;
    if (cr_wclient_drain(w->wc, &e) < 0) raise_err(L, &e);
    if (cr_node_policy_refresh(w->n, &w->pol_gen, policy_load, w) < 0)
        return luaL_error(L, "cannot load consistency policy: %s", w->pol_err);
    if (cr_node_clock(w->n, w->lw, decide, w, &e) < 0) raise_err(L, &e);
    lua_pushinteger(L, cr_node_worker_clock(w->n, w->lw));
    return 1;
}

static int c_barrier(lua_State *L) {
    lworker *w = get_worker(L);
    cr_err e;
    if (cr_wclient_flush(w->wc, &e) < 0 || cr_wclient_drain(w->wc, &e) < 0 || cr_node_barrier(w->n, w->lw, &e) < 0)
        raise_err(L, &e);
    return 0;
}

/* A cancelled command (another worker failed, or Ctrl-C at the REPL) ends
 * at the model's next progress, clock, barrier or sleep, and in pure Lua
 * code at the next count hook (interrupted() below). */
static void check_cancel(lua_State *L, lworker *w) {
    if (cr_node_cancelled(w->n, w->lw)) luaL_error(L, "%s", CR_NODE_CANCELLED_MSG);
}

static int c_progress(lua_State *L) {
    lworker *w = get_worker(L);
    cr_node_progress(w->n, luaL_checkinteger(L, 2));
    check_cancel(L, w);
    return 0;
}

static int c_sleep(lua_State *L) {
    double s = luaL_checknumber(L, 2);
    lworker *w = get_worker(L);
    cr_err e;
    (void)cr_node_sleep(w->n, w->lw, s, &e); /* returns early when cancelled or stopping */
    check_cancel(L, w);
    return 0;
}

static int c_log(lua_State *L) {
    lworker *w = get_worker(L);
    int top = lua_gettop(L); /* before luaL_buffinit, which may push a placeholder */
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "[worker %d] ", w->gw);
    luaL_addvalue(&b);
    for (int i = 2; i <= top; i++) {
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
        if (i < top) luaL_addchar(&b, '\t');
    }
    luaL_pushresult(&b);
    size_t n;
    const char *line = lua_tolstring(L, -1, &n);
    char *out = n < SIZE_MAX / 4 ? malloc(4 * n + 1) : NULL; /* no Lua error while it is held */
    if (!out) return luaL_error(L, "log: out of memory");
    cr_utf8_escape(line, n, out, 0); /* one record, one line, nothing the terminal would act on */
    fprintf(stderr, "%s\n", out);
    free(out);
    return 0;
}

static void make_ctx(lua_State *L, lworker *w) {
    static const luaL_Reg fns[] = {{"clock", c_clock}, {"barrier", c_barrier}, {"progress", c_progress},
                                   {"sleep", c_sleep}, {"log", c_log},         {NULL, NULL}};
    cr_node *n = w->n;
    luaL_newlib(L, fns);
    lua_pushinteger(L, cr_node_id(n));
    lua_setfield(L, -2, "node");
    lua_pushinteger(L, cr_node_count(n));
    lua_setfield(L, -2, "nodes");
    lua_pushinteger(L, w->gw);
    lua_setfield(L, -2, "worker");
    lua_pushinteger(L, (lua_Integer)cr_node_count(n) * cr_node_workers_per_node(n));
    lua_setfield(L, -2, "workers");
    lua_pushinteger(L, w->lw);
    lua_setfield(L, -2, "local_worker");
    lua_pushinteger(L, cr_node_workers_per_node(n));
    lua_setfield(L, -2, "workers_per_node");
    lua_pushinteger(L, (lua_Integer)cr_node_seed(n));
    lua_setfield(L, -2, "seed");
    lua_newtable(L);
    lua_setfield(L, -2, "tables");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, CTX_KEY); /* the script may reassign its global */
    lua_setglobal(L, "ctx");
}

/* ---------- the state ---------- */

/* The count hook's question (l_sandbox.h): a runaway loop in the model or
 * its policy ends when the node stops or the command is cancelled, even if
 * it never calls ctx:clock, barrier, progress or sleep. */
static const char *interrupted(void *arg) {
    lworker *w = arg;
    if (cr_node_stopping(w->n)) return "job stopped";
    if (cr_node_cancelled(w->n, w->lw)) return CR_NODE_CANCELLED_MSG;
    if (w->pol_until > 0 && cr_now() > w->pol_until)
        return "policy script ran longer than " STR(CR_SANDBOX_CHECK_SECONDS) " s (stopped)";
    return NULL;
}

/* [-1, +0] The worker's globals over the sandbox: `cr` (the allow-listed
 * crescent functions, l_sandbox_core.h) and `ctx`. Protected. */
static int setup(lua_State *L) {
    static const luaL_Reg methods[] = {{"pull", t_pull}, {"push", t_push}, {"pull_async", t_pull_async},
                                       {"push_async", t_push_async}, {"wait", t_wait}, {"owner", t_owner}, {"localize", t_localize},
                                       {"local_range", t_local_range}, {"local_keys", t_local_keys}, {"pull_range", t_pull_range}, {"push_range", t_push_range}, {"prepare_sample", t_prepare_sample},
                                       {"pull_sample", t_pull_sample}, {"pull_sample_async", t_pull_sample_async},
                                       {NULL, NULL}};
    lworker *w = lua_touserdata(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, WORKER_KEY);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "crescent.pending");
    cr_sandbox_push_worker_core(L);
    lua_setglobal(L, "cr");
    luaL_newmetatable(L, WTABLE_MT);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "methods");
    lua_pushcfunction(L, t_index);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    cr_lmetatable(L, SHANDLE_MT, NULL, h_gc, NULL);
    make_ctx(L, w);
    cr_sandbox_protect_metatables(L);
    return 0;
}

static lua_State *worker_state(lworker *w) {
    lua_State *L = cr_sandbox_new(CR_SANDBOX_DEFAULT_MB, "model script");
    if (!L) return NULL;
    lua_pushcfunction(L, setup);
    lua_pushlightuserdata(L, w);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        cr_sandbox_close(&L);
        return NULL;
    }
    cr_sandbox_set_interrupt(L, interrupted, w);
    return L;
}

/* ---------- command execution ---------- */

/* A message the script chose, escaped for the terminal it ends on. */
#define SAFE_MSG_MAX (4 * CR_SANDBOX_MSG_MAX + 1)

/* The message of the call that failed with status (at the top of L, as
 * cr_sandbox_message words it) into out (SAFE_MSG_MAX bytes), its control
 * characters and newlines escaped: error("\27[2J\nall done") must neither
 * clear the user's screen nor print a line of its own (cr_utf8_escape). */
static void safe_message(lua_State *L, int status, char *out) {
    char msg[CR_SANDBOX_MSG_MAX];
    cr_sandbox_message(L, status, msg, sizeof msg);
    cr_utf8_escape(msg, strlen(msg), out, 0);
}

/* Message handler of the model's calls: the worker's name, the message
 * (memory errors reworded, l_sandbox.h; escaped) and a traceback. */
static int traceback(lua_State *L) {
    char msg[SAFE_MSG_MAX];
    safe_message(L, LUA_ERRRUN, msg);
    lworker *w = get_worker(L);
    lua_pushfstring(L, "worker %d (node %d): %s", w->gw, cr_node_id(w->n), msg);
    luaL_traceback(L, L, lua_tostring(L, -1), 1);
    return 1;
}

/* [-?, +0] Raise the message at the top as the command's answer: a
 * message handler's output (named = 1) or one still to be named. */
static int fail(lua_State *L, lworker *w, int status, int named) {
    if (!named) {
        char msg[SAFE_MSG_MAX];
        safe_message(L, status, msg);
        lua_pushfstring(L, "worker %d (node %d): %s", w->gw, cr_node_id(w->n), msg);
    } else if (status == LUA_ERRMEM) { /* the handler did not run */
        return fail(L, w, status, 0);
    }
    w->named = 1;
    return lua_error(L);
}

static int failf(lua_State *L, lworker *w, const char *msg) {
    lua_pushstring(L, msg);
    return fail(L, w, LUA_ERRRUN, 0);
}

/* The model option memory_mb (at idx, or the default) becomes the cap. */
static void set_memory(lua_State *L, lworker *w, int idx) {
    lua_Integer mb = CR_SANDBOX_DEFAULT_MB;
    if (lua_istable(L, idx) && lua_getfield(L, idx, "memory_mb") != LUA_TNIL) {
        int ok;
        mb = lua_tointegerx(L, -1, &ok);
        if (!ok || mb < 1 || mb > CR_SANDBOX_MAX_MB)
            failf(L, w, "model option 'memory_mb' must be an integer number of MB in [1, 1048576]");
    }
    if ((size_t)mb << 20 < cr_sandbox_used(L)) lua_gc(L, LUA_GCCOLLECT); /* the last model's garbage */
    if (cr_sandbox_set_limit(L, (int)mb) < 0)
        failf(L, w, lua_pushfstring(L, "model option 'memory_mb' = %d MB is less than the model's state holds (%d MB)",
                                    (int)mb, (int)(cr_sandbox_used(L) >> 20) + 1));
}

/* The files of the model option allow_read (at idx) become readable. */
static void set_reads(lua_State *L, lworker *w, int idx) {
    if (lua_getfield(L, idx, "allow_read") == LUA_TNIL) return;
    if (!lua_istable(L, -1)) failf(L, w, "model option 'allow_read' must be a list of file paths");
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++, lua_pop(L, 1))
        if (!lua_isstring(L, -1) || !cr_sandbox_allow_read(L, lua_tostring(L, -1)))
            failf(L, w, lua_pushfstring(L, "model option 'allow_read': '%s' is not a regular file",
                                        luaL_tolstring(L, -1, NULL)));
}

/* [-0, +0] Options of the sandbox itself, taken out of the model's options
 * table at idx (the model never sees them): memory_mb = N (MB, default
 * CR_SANDBOX_DEFAULT_MB) and allow_read = {paths}. Every other string in the
 * options that names a regular file is a file the model may read. */
static void sandbox_opts(lua_State *L, lworker *w, int idx) {
    int top = lua_gettop(L);
    cr_sandbox_clear_reads(L);
    set_memory(L, w, idx);
    if (!lua_istable(L, idx)) return;
    set_reads(L, w, idx);
    lua_settop(L, top);
    lua_pushnil(L);
    lua_setfield(L, idx, "memory_mb");
    lua_pushnil(L);
    lua_setfield(L, idx, "allow_read");
    cr_sandbox_allow_from(L, idx);
}

/* [-0, +0] A command starts with no async request of an earlier one: the
 * client is drained (an error or a cancel ended that command between a
 * request and its wait), then its ids are forgotten, with the matrices and
 * sample pulls they held. Before this every such request stayed in
 * "crescent.pending" for good: a REPL session that hit model errors or
 * Ctrl-C during epochs grew by their rows each time. Drained first: a
 * reply still on its way writes into one of those matrices. */
static void forget_pending(lua_State *L, lworker *w) {
    cr_err e;
    if (cr_wclient_drain(w->wc, &e) < 0) return; /* the node is stopping: keep them */
    if (w->ws) cr_wsample_drop_pulls(w->ws);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "crescent.pending");
}

/* [-2, +1] Load the model: options first (they set the sandbox), then the
 * script, then M.init(ctx, opts). Protected; errors are the answer. */
static int model_main(lua_State *L) {
    lworker *w = lua_touserdata(L, 1);
    const cr_cmd *c = lua_touserdata(L, 2);
    size_t cl = strnlen(c->p2, c->n2);
    const char *opts = cl < c->n2 ? c->p2 + cl + 1 : "nil";
    size_t on = cl < c->n2 ? c->n2 - cl - 1 : 3;
    lua_settop(L, 0);
    forget_pending(L, w);
    refresh_tables(L, w);
    lua_pushcfunction(L, traceback);                               /* 1 */
    if (cr_lser_load(L, opts, on) < 0) return fail(L, w, LUA_ERRRUN, 0); /* 2 */
    sandbox_opts(L, w, 2);
    lua_pushliteral(L, "@");
    lua_pushlstring(L, c->p2, cl);
    lua_concat(L, 2);
    const char *chunk = lua_tostring(L, -1);
    int rc = cr_sandbox_load(L, c->p1, c->n1, chunk, 0);
    if (rc != LUA_OK) return fail(L, w, rc, 0);
    if ((rc = lua_pcall(L, 0, 1, 1)) != LUA_OK) return fail(L, w, rc, 1);
    if (!lua_istable(L, -1))
        return failf(L, w, lua_pushfstring(L, "%s: model script must return a table of functions", chunk + 1));
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "crescent.model");
    if (lua_getfield(L, -1, "init") == LUA_TFUNCTION) {
        lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY);
        lua_pushvalue(L, 2);
        if ((rc = lua_pcall(L, 2, 0, 1)) != LUA_OK) return fail(L, w, rc, 1);
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* [-2, +1] M.<name>(ctx, args); nil becomes {}. Protected. */
static int call_main(lua_State *L) {
    lworker *w = lua_touserdata(L, 1);
    const cr_cmd *c = lua_touserdata(L, 2);
    lua_settop(L, 0);
    forget_pending(L, w);
    refresh_tables(L, w);
    lua_pushcfunction(L, traceback);
    if (lua_getfield(L, LUA_REGISTRYINDEX, "crescent.model") != LUA_TTABLE)
        return failf(L, w, "no model loaded (call job:model first)");
    char fn[128];
    snprintf(fn, sizeof fn, "%.*s", (int)c->n1, c->p1);
    if (lua_getfield(L, -1, fn) != LUA_TFUNCTION)
        return failf(L, w, lua_pushfstring(L, "the model has no function '%s'", fn));
    lua_getfield(L, LUA_REGISTRYINDEX, CTX_KEY);
    if (cr_lser_load(L, c->p2, c->n2) < 0) return fail(L, w, LUA_ERRRUN, 0);
    int rc = lua_pcall(L, 2, 1, 1);
    if (rc != LUA_OK) return fail(L, w, rc, 1);
    cr_err e;
    if (cr_wclient_flush(w->wc, &e) < 0 || cr_wclient_drain(w->wc, &e) < 0) return failf(L, w, e.msg); /* sigmod's residuals go */
    if (lua_isnil(L, -1)) lua_newtable(L);
    return 1;
}

static void reply_error(lworker *w, const char *msg) { cr_node_reply(w->n, w->lw, 0, msg, strlen(msg)); }

static void reply_top(lworker *w, lua_State *L) {
    char *out, err[300];
    size_t len;
    if (cr_lser_dump_max(L, -1, CR_LSER_RESULT_MAX, &out, &len, err, sizeof err) < 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "worker %d (node %d): result %s", w->gw, cr_node_id(w->n), err);
        reply_error(w, msg);
        return;
    }
    cr_node_reply(w->n, w->lw, 1, out, len);
    free(out);
}

/* One command, start to answer. Everything that touches Lua runs under
 * lua_pcall (a capped state can fail any allocation; an unprotected error
 * would end the node). */
static void run_cmd(lworker *w, const cr_cmd *c) {
    lua_State *L = w->L;
    cr_sandbox_reset(L);
    lua_settop(L, 0);
    lua_pushcfunction(L, c->type == CR_CMD_MODEL ? model_main : call_main);
    lua_pushlightuserdata(L, w);
    lua_pushlightuserdata(L, (void *)c);
    w->named = 0;
    int rc = lua_pcall(L, 2, 1, 0);
    if (rc == LUA_OK) {
        reply_top(w, L);
    } else if (w->named && lua_type(L, -1) == LUA_TSTRING) {
        reply_error(w, lua_tostring(L, -1));
    } else {
        char msg[SAFE_MSG_MAX], named[SAFE_MSG_MAX + 64];
        safe_message(L, rc, msg);
        snprintf(named, sizeof named, "worker %d (node %d): %s", w->gw, cr_node_id(w->n), msg);
        reply_error(w, named);
    }
    lua_settop(L, 0);
}

static void worker_main(cr_node *n, int lw) {
    lworker w = {.n = n, .lw = lw, .gw = cr_node_id(n) * cr_node_workers_per_node(n) + lw,
                 .pol_ref = LUA_NOREF};
    cr_err e;
    char msg[CR_ERR_MAX + 64] = "";
    w.wc = cr_wclient_new(n, lw, &e);
    if (w.wc) w.ws = cr_wsample_new(n, lw, w.wc);
    if (!w.wc) snprintf(msg, sizeof msg, "%s", e.msg);
    else if (!(w.L = worker_state(&w))) snprintf(msg, sizeof msg, "worker %d: cannot create Lua state", w.gw);
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        if (msg[0]) reply_error(&w, msg);
        else run_cmd(&w, &c);
    }
    /* samplers, then sockets: nothing may still read a borrowed matrix when Lua frees it */
    cr_wsample_destroy(&w.ws);
    cr_wclient_destroy(&w.wc);
    cr_sandbox_close(&w.L);
}

const cr_node_hooks cr_lworker_hooks = {worker_main};
