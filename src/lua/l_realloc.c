/* crescent.core.partition: dynamic parameter reallocation (paper 001,
 * Algorithms 3-4; src/partition/cr_realloc.h, docs/partitioning-mbp-dppa.md).
 *
 *   lru(capacity)            -> Cache: the samples trained recently
 *   cache:put(id, sample, keys)   remember sample `id` and the keys it accessed
 *   cache:put_rows(first_id, batch [, keys])  the same for every row of a batch
 *   cache:size(), #cache, cache:capacity(), cache:contains(id), cache:bytes()
 *   reallocate{placement =, cache =, batch = [, r, c, threshold, horizon,
 *              max_moves, sizes]} -> {moves, migration_volume, edges,
 *              max_before, min_before, max_after, min_after, key, from, to}
 *
 * A sparse sample is {idx = Ints or {ids}, val = Matrix or {numbers} or nil}:
 * 0-based feature ids, strictly increasing, below 2^32; val has #idx values
 * (nil: all 1). A batch is a list of samples or a CSR table {ptr = Ints
 * (n + 1 offsets from 0), idx = Ints, val = Matrix or nil}, the shape
 * cr.data.libsvm returns, so big batches never go through Lua tables per
 * entry. reallocate moves keys in placement.v (an Ints, key y -> server at
 * y + 1) in place and returns the moves (0-based keys and servers).
 *
 * Every buffer a call needs lives in a userdata (or the cache's scratch),
 * so the argument errors raised half-way leak nothing. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/l_opt.h"
#include "lua/l_realloc.h"
#include "lua/l_util.h"
#include "partition/cr_realloc.h"

#define LRU_MT "crescent.Cache"
#define RESULT_MT "crescent.ReallocResult"
#define LRU_MAX (1 << 24) /* entries; the fixed tables alone then take about 1 GB */

typedef struct llru {
    cr_lru *l;
    void *buf; /* scratch for put's converted rows */
    size_t cap;
} llru;

static llru *check_lru(lua_State *L, int idx) {
    llru *c = luaL_checkudata(L, idx, LRU_MT);
    if (!c->l) luaL_error(L, "cache is closed");
    return c;
}

static int lru_gc(lua_State *L) {
    llru *c = luaL_checkudata(L, 1, LRU_MT);
    cr_lru_destroy(&c->l);
    free(c->buf);
    c->buf = NULL;
    c->cap = 0;
    return 0;
}

/* lru(capacity) -> Cache */
static int l_lru(lua_State *L) {
    lua_Integer cap = luaL_checkinteger(L, 1);
    if (cap < 1 || cap > LRU_MAX)
        return luaL_error(L, "lru: capacity must be in [1, %I] (got %I)", (lua_Integer)LRU_MAX, cap);
    llru *c = lua_newuserdatauv(L, sizeof *c, 0);
    *c = (llru){0};
    luaL_setmetatable(L, LRU_MT);
    c->l = cr_lru_new((uint32_t)cap);
    return 1;
}

/* [-0, +0] Number of values at vi: a Matrix (rows x cols), a table (#t), or
 * -1 for nil (all ones). Raises on anything else. */
static int64_t vals_len(lua_State *L, int vi, const char *what) {
    cr_mat *m = cr_lmat_test(L, vi);
    if (m) return m->rows * m->cols;
    if (lua_istable(L, vi)) return (int64_t)luaL_len(L, vi);
    if (lua_isnil(L, vi)) return -1;
    return luaL_error(L, "%s: val must be a Matrix, a table of numbers or nil (got %s)", what, luaL_typename(L, vi));
}

/* [-0, +0] Copy entries off .. off+n-1 of the ids (Ints ids) and of the
 * values at vi (checked by vals_len) into idx/val. Raises naming `what` and
 * the 1-based position when an id is out of range or not above the last. */
static void copy_sparse(lua_State *L, const cr_ints *ids, int vi, int64_t off, int64_t n, const char *what,
                        uint32_t *idx, float *val) {
    cr_mat *m = cr_lmat_test(L, vi);
    for (int64_t j = 0; j < n; j++) {
        int64_t x = ids->data[off + j];
        if (x < 0 || x > (int64_t)UINT32_MAX)
            luaL_error(L, "%s: feature id %I at position %I out of range [0, 2^32)", what, (lua_Integer)x,
                       (lua_Integer)j + 1);
        if (j > 0 && (uint32_t)x <= idx[j - 1])
            luaL_error(L, "%s: feature ids not strictly increasing at position %I", what, (lua_Integer)j + 1);
        idx[j] = (uint32_t)x;
        if (m) {
            val[j] = m->data[off + j];
        } else if (lua_istable(L, vi)) {
            lua_geti(L, vi, off + j + 1);
            int ok;
            lua_Number y = lua_tonumberx(L, -1, &ok);
            if (!ok) luaL_error(L, "%s: val[%I] is not a number", what, (lua_Integer)(off + j + 1));
            val[j] = (float)y;
            lua_pop(L, 1);
        } else {
            val[j] = 1.0f;
        }
    }
}

/* [-0, +2] Fields idx (as Ints, converted when a table) and val of the
 * sample table at t; returns the ids. Raises on a malformed sample. */
static cr_ints *sample_fields(lua_State *L, int t, const char *what) {
    if (!lua_istable(L, t)) luaL_error(L, "%s: expected a table {idx = ..., val = ...} (got %s)", what, luaL_typename(L, t));
    lua_getfield(L, t, "idx");
    if (!cr_lints_test(L, -1) && !lua_istable(L, -1))
        luaL_error(L, "%s: idx must be an Ints or a table of integers (got %s)", what, luaL_typename(L, -1));
    cr_ints *ids = cr_lints_from_arg(L, -1);
    lua_remove(L, -2);
    lua_getfield(L, t, "val");
    int64_t nv = vals_len(L, -1, what);
    if (nv >= 0 && nv != ids->n)
        luaL_error(L, "%s: val has %I values for %I ids", what, (lua_Integer)nv, (lua_Integer)ids->n);
    return ids;
}

/* Scratch of at least n bytes owned by the cache (freed by __gc). */
static void *scratch(lua_State *L, llru *c, size_t n) {
    if (n > c->cap) {
        void *p = realloc(c->buf, n);
        if (!p) luaL_error(L, "out of memory");
        c->buf = p;
        c->cap = n;
    }
    return c->buf;
}

/* cache:put(id, sample, keys): keys = Ints or table of 0-based key ids. */
static int lru_put(lua_State *L) {
    llru *c = check_lru(L, 1);
    lua_Integer id = luaL_checkinteger(L, 2);
    if (id < 0) return luaL_error(L, "put: id must be non-negative (got %I)", id);
    if (lua_isnoneornil(L, 4)) return luaL_error(L, "put: keys (the keys the sample accessed) expected");
    lua_settop(L, 4);
    cr_ints *ids = sample_fields(L, 3, "put: sample"); /* 5, 6 */
    cr_ints *keys = cr_lints_from_arg(L, 4);
    if (ids->n > UINT32_MAX || keys->n > UINT32_MAX) return luaL_error(L, "put: sample too large");
    size_t nf = (size_t)ids->n, nk = (size_t)keys->n;
    uint32_t *idx = scratch(L, c, nf * (sizeof *idx + sizeof(float)) + nk * sizeof(uint32_t) + 1);
    float *val = (float *)(idx + nf);
    uint32_t *kk = (uint32_t *)(val + nf);
    copy_sparse(L, ids, 6, 0, ids->n, "put: sample", idx, val);
    for (size_t j = 0; j < nk; j++) {
        if (keys->data[j] < 0 || keys->data[j] >= (int64_t)UINT32_MAX)
            return luaL_error(L, "put: key %I at position %I out of range", (lua_Integer)keys->data[j],
                              (lua_Integer)j + 1);
        kk[j] = (uint32_t)keys->data[j];
    }
    cr_err e;
    if (cr_lru_put(c->l, (uint64_t)id, idx, val, (uint32_t)nf, kk, (uint32_t)nk, &e) != 0)
        return luaL_error(L, "%s", e.msg);
    return 0;
}

static int lru_size(lua_State *L) {
    lua_pushinteger(L, cr_lru_size(check_lru(L, 1)->l));
    return 1;
}

static int lru_capacity(lua_State *L) {
    lua_pushinteger(L, cr_lru_capacity(check_lru(L, 1)->l));
    return 1;
}

static int lru_contains(lua_State *L) {
    llru *c = check_lru(L, 1);
    lua_Integer id = luaL_checkinteger(L, 2);
    lua_pushboolean(L, id >= 0 && cr_lru_contains(c->l, (uint64_t)id));
    return 1;
}

/* Bytes held in C: the cache's tables, its rows and the put scratch. */
static int lru_bytes(lua_State *L) {
    llru *c = check_lru(L, 1);
    lua_pushinteger(L, (lua_Integer)(cr_lru_bytes(c->l) + c->cap));
    return 1;
}

static int lru_tostring(lua_State *L) {
    llru *c = luaL_checkudata(L, 1, LRU_MT);
    if (!c->l) lua_pushliteral(L, "crescent.Cache(closed)");
    else lua_pushfstring(L, "crescent.Cache(%d of %d)", (int)cr_lru_size(c->l), (int)cr_lru_capacity(c->l));
    return 1;
}

/* ---- reallocate ---- */

/* [-0, +1] The batch at b as nb samples in one userdata: a CSR table
 * {ptr, idx, val} or a list of sample tables (read twice: sizes, then
 * rows; a list that changes in between is an error, not an overflow).
 * Errors start with `name` ("reallocate: batch"). */
static cr_sample *read_batch(lua_State *L, int b, const char *name, uint32_t *nb) {
    char what[96];
    snprintf(what, sizeof what, "%s", name);
    if (!lua_istable(L, b)) luaL_error(L, "%s must be a list of samples or {ptr, idx, val}", name);
    int top = lua_gettop(L);
    lua_getfield(L, b, "ptr");
    cr_ints *ptr = NULL, *ids = NULL;
    int64_t n, total = 0;
    if (!lua_isnil(L, -1)) { /* top+2 ptr, top+3 idx (as Ints), top+4 val */
        ptr = cr_lints_from_arg(L, top + 1);
        lua_getfield(L, b, "idx");
        ids = cr_lints_from_arg(L, top + 3);
        lua_remove(L, top + 3);
        lua_getfield(L, b, "val");
        int64_t nv = vals_len(L, top + 4, what);
        n = ptr->n - 1;
        if (n < 0 || ptr->data[0] != 0 || ptr->data[n] != ids->n || (nv >= 0 && nv != ids->n))
            luaL_error(L, "%s: ptr must run from 0 to #idx (%I), val must have #idx values", name,
                       (lua_Integer)ids->n);
        for (int64_t i = 0; i < n; i++)
            if (ptr->data[i + 1] < ptr->data[i] || ptr->data[i + 1] - ptr->data[i] > (int64_t)UINT32_MAX)
                luaL_error(L, "%s: ptr decreases at position %I", name, (lua_Integer)i + 2);
        total = ids->n;
    } else {
        n = (int64_t)luaL_len(L, b);
        for (int64_t i = 0; i < n; i++) {
            lua_geti(L, b, i + 1);
            snprintf(what, sizeof what, "%s sample %lld", name, (long long)i + 1);
            total += sample_fields(L, top + 2, what)->n;
            lua_settop(L, top + 1);
        }
    }
    if (n > UINT32_MAX) luaL_error(L, "%s too large", name);
    size_t sz = (size_t)n * sizeof(cr_sample) + (size_t)total * (sizeof(uint32_t) + sizeof(float));
    cr_sample *s = lua_newuserdatauv(L, sz ? sz : 1, 0);
    uint32_t *idx = (uint32_t *)(s + n);
    float *val = (float *)(idx + total);
    int64_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t len;
        if (ptr) {
            len = ptr->data[i + 1] - ptr->data[i];
            snprintf(what, sizeof what, "%s row %lld", name, (long long)i + 1);
            copy_sparse(L, ids, top + 4, at, len, what, idx + at, val + at);
        } else {
            lua_geti(L, b, i + 1);
            snprintf(what, sizeof what, "%s sample %lld", name, (long long)i + 1);
            cr_ints *row = sample_fields(L, lua_gettop(L), what);
            len = row->n;
            if (len > total - at) luaL_error(L, "%s: the batch changed while it was read", what);
            copy_sparse(L, row, lua_gettop(L), 0, len, what, idx + at, val + at);
            lua_pop(L, 3);
        }
        s[i] = (cr_sample){idx + at, val + at, (uint32_t)len};
        at += len;
    }
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    *nb = (uint32_t)n;
    return s;
}

/* cache:put_rows(first_id, batch [, keys]): put every row of a batch (a
 * list of samples or a CSR {ptr, idx, val}, as reallocate takes) with ids
 * first_id, first_id + 1, ...; keys, in the same two shapes (val unused),
 * lists the keys each row accessed, one row per batch row; without keys a
 * row accessed its own feature ids (feature j is key j). One call for a
 * whole batch from cr.data.libsvm. */
static int lru_put_rows(lua_State *L) {
    llru *c = check_lru(L, 1);
    lua_Integer first = luaL_checkinteger(L, 2);
    if (first < 0) return luaL_error(L, "put_rows: first id must be non-negative (got %I)", first);
    lua_settop(L, 4);
    uint32_t nb, nk;
    cr_sample *rows = read_batch(L, 3, "put_rows: batch", &nb); /* 5 */
    cr_sample *keys = rows;
    if (!lua_isnil(L, 4)) {
        keys = read_batch(L, 4, "put_rows: keys", &nk); /* 6 */
        if (nk != nb) return luaL_error(L, "put_rows: %d rows of keys for %d rows", (int)nk, (int)nb);
    }
    cr_err e;
    for (uint32_t i = 0; i < nb; i++)
        if (cr_lru_put(c->l, (uint64_t)first + i, rows[i].idx, rows[i].val, rows[i].nnz, keys[i].idx, keys[i].nnz,
                       &e) != 0)
            return luaL_error(L, "%s", e.msg);
    return 0;
}

/* reallocate{}'s scalar options (the others are read where they are used). */
typedef struct ropts {
    int64_t r, max_moves;
    double c, threshold, horizon;
} ropts;

#define R(f) offsetof(ropts, f)
static const cr_opt ropt_rows[] = {
    {"placement", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "{k = K, v = Ints}", NULL, NULL},
    {"cache", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "an open cr.partition.lru", NULL, NULL},
    {"batch", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "samples or {ptr, idx, val}", NULL, NULL},
    {"sizes", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "per-key sizes", NULL, NULL},
    {"r", CR_OPT_INT, R(r), CR_OPT_RANGE, 1, UINT32_MAX, NULL, NULL, "nearest neighbours per sample", NULL,
     "an integer >= 1"},
    {"c", CR_OPT_DOUBLE, R(c), CR_OPT_RANGE, 0, 1, NULL, NULL, "edge threshold on f(d, p)", NULL, NULL},
    {"threshold", CR_OPT_DOUBLE, R(threshold), CR_OPT_RANGE, 0, HUGE_VAL, NULL, NULL, "load gap to act on", NULL,
     NULL},
    {"horizon", CR_OPT_DOUBLE, R(horizon), CR_OPT_RANGE, 0, HUGE_VAL, NULL, NULL, "batches a move pays off over",
     NULL, NULL},
    {"max_moves", CR_OPT_INT, R(max_moves), CR_OPT_RANGE, 0, 9007199254740992.0, NULL, NULL, "0 = no limit", NULL,
     "an integer >= 0 (0 = no limit)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* [-0, +0] The options table at 1 into o (unknown keys and bad values raise). */
static void read_ropts(lua_State *L, cr_realloc_opts *o) {
    static const cr_lopt_set set = {"reallocate", NULL, ropt_rows};
    cr_realloc_opts_default(o);
    ropts v = {o->r, (int64_t)o->max_moves, o->c, o->threshold, o->horizon};
    cr_lopt_read(L, 1, &set, &v);
    *o = (cr_realloc_opts){(uint32_t)v.r, v.c, v.threshold, v.horizon, (uint64_t)v.max_moves};
}

/* [-0, +1] placement.v (pushed) with every server checked against placement.k. */
static cr_ints *check_server(lua_State *L, uint32_t *k) {
    lua_getfield(L, 1, "placement");
    if (!lua_istable(L, -1))
        luaL_error(L, "reallocate: 'placement' must be {k = K, v = Ints} (from cr.partition or cr.partition.load)");
    lua_getfield(L, -1, "k");
    lua_Integer kk = lua_tointeger(L, -1);
    lua_getfield(L, -2, "v");
    cr_ints *v = cr_lints_test(L, -1);
    if (kk < 1 || kk >= UINT32_MAX || !v)
        luaL_error(L, "reallocate: 'placement' must be {k = K, v = Ints} (from cr.partition or cr.partition.load)");
    if (v->n >= UINT32_MAX) luaL_error(L, "reallocate: too many keys");
    for (int64_t p = 0; p < v->n; p++)
        if (v->data[p] < 0 || v->data[p] >= kk)
            luaL_error(L, "reallocate: placement: key %I on server %I, not in [0, %I)", (lua_Integer)p,
                       (lua_Integer)v->data[p], kk);
    lua_replace(L, -3);
    lua_pop(L, 1);
    *k = (uint32_t)kk;
    return v;
}

/* [-0, +1] Migration cost per key (nil pushed and NULL when unset). */
static const double *read_sizes(lua_State *L, int64_t nkeys) {
    lua_getfield(L, 1, "sizes");
    if (lua_isnil(L, -1)) return NULL;
    int isnum;
    lua_Number one = lua_tonumberx(L, -1, &isnum);
    cr_mat *m = cr_lmat_test(L, -1);
    if (!isnum && !m && !lua_istable(L, -1))
        luaL_error(L, "reallocate: 'sizes' must be a number, a table or a Matrix (got %s)", luaL_typename(L, -1));
    if (!isnum && (m ? m->rows * m->cols : (int64_t)luaL_len(L, -1)) != nkeys)
        luaL_error(L, "reallocate: 'sizes' must have one entry per key (%I)", (lua_Integer)nkeys);
    double *s = lua_newuserdatauv(L, ((size_t)nkeys + 1) * sizeof *s, 0);
    for (int64_t p = 0; p < nkeys; p++) {
        if (isnum) s[p] = one;
        else if (m) s[p] = m->data[p];
        else {
            lua_geti(L, -2, p + 1);
            int ok;
            s[p] = lua_tonumberx(L, -1, &ok);
            if (!ok) luaL_error(L, "reallocate: sizes[%I] is not a number", (lua_Integer)p + 1);
            lua_pop(L, 1);
        }
    }
    lua_replace(L, -2);
    return s;
}

static int result_gc(lua_State *L) {
    cr_realloc_result_free(luaL_checkudata(L, 1, RESULT_MT));
    return 0;
}

static void set_num(lua_State *L, const char *name, double x) {
    lua_pushnumber(L, x);
    lua_setfield(L, -2, name);
}

static void set_ints(lua_State *L, const char *name, const uint32_t *x, uint64_t n) {
    cr_ints *v = cr_lints_new(L, (int64_t)n);
    for (uint64_t i = 0; i < n; i++) v->data[i] = x[i];
    lua_setfield(L, -2, name);
}

/* [-0, +1] The result table. */
static void push_result(lua_State *L, const cr_realloc_result *r, uint64_t edges) {
    lua_createtable(L, 0, 10);
    lua_pushinteger(L, (lua_Integer)r->moves);
    lua_setfield(L, -2, "moves");
    lua_pushinteger(L, (lua_Integer)edges);
    lua_setfield(L, -2, "edges");
    set_num(L, "migration_volume", r->migration_volume);
    set_num(L, "max_before", r->max_before);
    set_num(L, "min_before", r->min_before);
    set_num(L, "max_after", r->max_after);
    set_num(L, "min_after", r->min_after);
    set_ints(L, "key", r->key, r->moves);
    set_ints(L, "from", r->from, r->moves);
    set_ints(L, "to", r->to, r->moves);
}

/* reallocate{...}: estimate each key's accesses in the batch from the
 * cache (Algorithm 3), then move keys of placement.v (in place) while the
 * bottleneck saving pays for the migration (Algorithm 4). */
static int l_reallocate(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    cr_realloc_opts o;
    read_ropts(L, &o);
    uint32_t k;
    cr_ints *v = check_server(L, &k); /* 2 */
    uint32_t nkeys = (uint32_t)v->n;
    lua_getfield(L, 1, "cache"); /* 3 */
    llru *c = luaL_testudata(L, 3, LRU_MT);
    if (!c || !c->l) return luaL_error(L, "reallocate: 'cache' must be an open cache from cr.partition.lru");
    lua_getfield(L, 1, "batch"); /* 4 */
    uint32_t nb;
    cr_sample *batch = read_batch(L, 4, "reallocate: batch", &nb); /* 5 */
    const double *size = read_sizes(L, nkeys); /* 6 */
    uint32_t *server = lua_newuserdatauv(L, ((size_t)nkeys + 1) * sizeof *server, 0);
    double *w = lua_newuserdatauv(L, ((size_t)nkeys + 1) * sizeof *w, 0);
    for (uint32_t p = 0; p < nkeys; p++) server[p] = (uint32_t)v->data[p], w[p] = 0;
    cr_err e;
    uint64_t edges = 0;
    if (cr_realloc_estimate(c->l, batch, nb, &o, nkeys, w, &edges, &e) != 0) return luaL_error(L, "%s", e.msg);
    cr_realloc_result *r = lua_newuserdatauv(L, sizeof *r, 0);
    memset(r, 0, sizeof *r);
    luaL_setmetatable(L, RESULT_MT);
    if (cr_realloc_run(k, nkeys, server, w, size, &o, r, &e) != 0) return luaL_error(L, "%s", e.msg);
    push_result(L, r, edges);
    for (uint32_t p = 0; p < nkeys; p++) v->data[p] = server[p];
    return 1;
}

void cr_lrealloc_register(lua_State *L) {
    const luaL_Reg methods[] = {{"put", lru_put},           {"size", lru_size},   {"capacity", lru_capacity},
                                {"contains", lru_contains}, {"bytes", lru_bytes}, {"put_rows", lru_put_rows},
                                {NULL, NULL}};
    const luaL_Reg mt[] = {{"__len", lru_size}, {"__tostring", lru_tostring}, {NULL, NULL}};
    cr_lmetatable(L, LRU_MT, methods, lru_gc, mt);
    cr_lmetatable(L, RESULT_MT, NULL, result_gc, NULL);
    const luaL_Reg fns[] = {{"lru", l_lru}, {"reallocate", l_reallocate}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
