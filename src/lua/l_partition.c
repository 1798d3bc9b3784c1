/* crescent.core.partition: graphs, partitioners, metrics and placement files.
 *
 *   graph(path [, format])        -> Graph | nil, msg   (format: libsvm, mm, edges)
 *   graph_from_edges(u, v [, nu, nv]) -> Graph          (0-based ids; tables or Ints)
 *   run(graph, k, method, opts)   -> placement, metrics | nil, msg
 *   metrics(graph, placement)     -> metrics
 *   load(path)                    -> placement | nil, msg
 *   save(placement, path [, comment]) -> true | nil, msg
 *   methods()                     -> { {name=, available=}, ... }
 *   lru, reallocate               dynamic reallocation (l_realloc.c)
 *
 * A placement is a table {k = K, u = Ints (example x -> worker at position
 * x + 1), v = Ints (key y -> server at y + 1)}; machines are 0-based. Metrics
 * are {m_max, t_max, t_sum, load, product, m = {...}, t = {...}, u_count =
 * {...}} with per-machine lists indexed 1..k; dppa with hash_bins > 0 adds
 * hashing = {bins, bins_used, edges, edge_ratio, density, mean_v_degree}
 * (cr_fhash_stats of the graph hashed with the run's seed). */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_time.h"
#include "lua/l_modules.h"
#include "lua/l_opt.h"
#include "lua/l_realloc.h"
#include "lua/l_util.h"
#include "partition/cr_fhash.h"
#include "partition/cr_part_opt.h"
#include "partition/cr_partition.h"

#define GRAPH_MT "crescent.Graph"

typedef struct lgraph {
    cr_bigraph *g;
} lgraph;

static cr_bigraph *check_graph(lua_State *L, int idx) {
    lgraph *lg = luaL_checkudata(L, idx, GRAPH_MT);
    if (!lg->g) luaL_error(L, "graph is closed");
    return lg->g;
}

/* [-0, +1] Wrap g (ownership moves to Lua). */
static void push_graph(lua_State *L, cr_bigraph *g) {
    lgraph *lg = lua_newuserdatauv(L, sizeof *lg, 0);
    lg->g = NULL;
    luaL_setmetatable(L, GRAPH_MT);
    lg->g = g;
}

static int graph_gc(lua_State *L) {
    lgraph *lg = luaL_checkudata(L, 1, GRAPH_MT);
    cr_bigraph_destroy(&lg->g);
    return 0;
}

static int graph_index(lua_State *L) {
    cr_bigraph *g = check_graph(L, 1);
    const char *key = luaL_checkstring(L, 2);
    if (!strcmp(key, "examples")) lua_pushinteger(L, g->nu);
    else if (!strcmp(key, "keys")) lua_pushinteger(L, g->nv);
    else if (!strcmp(key, "edges")) lua_pushinteger(L, (lua_Integer)g->ne);
    else lua_pushnil(L);
    return 1;
}

static int graph_tostring(lua_State *L) {
    cr_bigraph *g = check_graph(L, 1);
    lua_pushfstring(L, "crescent.Graph(%d examples, %d keys, %d edges)", (int)g->nu, (int)g->nv, (int)g->ne);
    return 1;
}

static int l_graph(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_bigraph_format fmt = cr_bigraph_format_guess(path);
    if (!lua_isnoneornil(L, 2) && cr_bigraph_format_parse(luaL_checkstring(L, 2), &fmt) != 0)
        return luaL_error(L, "unknown graph format '%s' (libsvm, mm, edges)", lua_tostring(L, 2));
    cr_err e;
    cr_bigraph *g = cr_bigraph_load(path, fmt, &e);
    if (!g) {
        return cr_lfail(L, e.msg);
    }
    push_graph(L, g);
    return 1;
}

static int l_graph_from_edges(lua_State *L) {
    cr_ints *u = cr_lints_from_arg(L, 1); /* pushes at 5 */
    cr_ints *v = cr_lints_from_arg(L, 2); /* pushes at 6 */
    lua_Integer nu = luaL_optinteger(L, 3, 0), nv = luaL_optinteger(L, 4, 0);
    if (u->n != v->n) return luaL_error(L, "edge lists differ in length (%d and %d)", (int)u->n, (int)v->n);
    if (nu < 0 || nv < 0 || nu >= UINT32_MAX || nv >= UINT32_MAX) return luaL_error(L, "bad graph size");
    for (int64_t i = 0; i < u->n; i++)
        if (u->data[i] < 0 || u->data[i] >= UINT32_MAX || v->data[i] < 0 || v->data[i] >= UINT32_MAX)
            return luaL_error(L, "edge %d: ids must be non-negative 32-bit integers", (int)i + 1);
    uint32_t *a = malloc(((size_t)u->n + 1) * sizeof *a), *b = malloc(((size_t)u->n + 1) * sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return luaL_error(L, "out of memory");
    }
    for (int64_t i = 0; i < u->n; i++) a[i] = (uint32_t)u->data[i], b[i] = (uint32_t)v->data[i];
    cr_err e;
    cr_bigraph *g = cr_bigraph_from_edges(a, b, (uint64_t)u->n, (uint32_t)nu, (uint32_t)nv, &e);
    free(a), free(b);
    if (!g) return luaL_error(L, "%s", e.msg);
    push_graph(L, g);
    return 1;
}

/* [-0, +1] placement table */
static void push_placement(lua_State *L, const cr_assign *p) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, p->k);
    lua_setfield(L, -2, "k");
    cr_ints *u = cr_lints_new(L, p->nu);
    for (uint32_t x = 0; x < p->nu; x++) u->data[x] = p->u_part[x];
    lua_setfield(L, -2, "u");
    cr_ints *v = cr_lints_new(L, p->nv);
    for (uint32_t x = 0; x < p->nv; x++) v->data[x] = p->v_part[x];
    lua_setfield(L, -2, "v");
}

static void push_list(lua_State *L, const uint64_t *x, uint32_t n, const char *name) {
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)x[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, name);
}

/* [-0, +1] metrics table (frees m) */
static void push_metrics(lua_State *L, cr_part_metrics *m) {
    lua_createtable(L, 0, 9);
    const struct { const char *n; uint64_t v; } f[] = {
        {"k", m->k}, {"m_max", m->m_max}, {"t_max", m->t_max}, {"t_sum", m->t_sum}, {"load", m->load}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        lua_pushinteger(L, (lua_Integer)f[i].v);
        lua_setfield(L, -2, f[i].n);
    }
    lua_pushnumber(L, m->product);
    lua_setfield(L, -2, "product");
    push_list(L, m->u_count, m->k, "u_count");
    push_list(L, m->m, m->k, "m");
    push_list(L, m->t, m->k, "t");
    cr_part_metrics_free(m);
}

/* Read a placement table at idx into a new cr_assign (caller destroys).
 * Raises on a malformed table; p_out is set before any raise can leak. */
static cr_assign *check_placement(lua_State *L, int idx, uint32_t nu, uint32_t nv, int sized) {
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_getfield(L, idx, "k");
    lua_Integer k = lua_tointeger(L, -1);
    lua_getfield(L, idx, "u");
    cr_ints *u = cr_lints_test(L, -1);
    lua_getfield(L, idx, "v");
    cr_ints *v = cr_lints_test(L, -1);
    lua_pop(L, 3);
    if (k <= 0 || k >= UINT32_MAX || !u || !v)
        luaL_error(L, "bad placement (expected {k = K, u = Ints, v = Ints})");
    if (sized && (u->n != nu || v->n != nv))
        luaL_error(L, "placement is for %d examples and %d keys, graph has %d and %d", (int)u->n, (int)v->n, (int)nu,
                   (int)nv);
    for (int64_t i = 0; i < u->n; i++)
        if (u->data[i] < 0 || u->data[i] >= k) luaL_error(L, "placement: example %d on machine %d >= k", (int)i, (int)u->data[i]);
    for (int64_t i = 0; i < v->n; i++)
        if (v->data[i] < 0 || v->data[i] >= k) luaL_error(L, "placement: key %d on machine %d >= k", (int)i, (int)v->data[i]);
    cr_assign *p = cr_assign_new((uint32_t)k, (uint32_t)u->n, (uint32_t)v->n);
    for (int64_t i = 0; i < u->n; i++) p->u_part[i] = (uint32_t)u->data[i];
    for (int64_t i = 0; i < v->n; i++) p->v_part[i] = (uint32_t)v->data[i];
    return p;
}

/* The methods' options: the rows `crescent partition` reads too. */
static const cr_opt part_rows[] = {CR_PART_OPT_ROWS(0), {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

/* Options table -> cr_part_opts; unknown keys and bad values raise
 * ("unknown partition option 'x'", "partition option 'x' must be ..."). */
static void read_opts(lua_State *L, int idx, cr_part_opts *o) {
    static const cr_lopt_set set = {NULL, "partition option", part_rows};
    cr_part_optv v;
    cr_part_optv_init(&v);
    cr_lopt_read(L, idx, &set, &v);
    cr_part_optv_get(&v, o);
}

/* [-0, +0] metrics.hashing for the table on top: how hashing g into
 * o->hash_bins bins (the seed dppa used) densified it. Returns 0 or -1. */
static int set_hashing(lua_State *L, const cr_bigraph *g, const cr_part_opts *o, cr_err *e) {
    cr_fhash_stats s;
    if (cr_fhash_stats_for(g, o->hash_bins, o->seed, &s, e) < 0) return -1;
    lua_createtable(L, 0, 6);
    const struct { const char *n; double v; } f[] = {
        {"bins", s.bins}, {"bins_used", s.bins_used}, {"edges", (double)s.edges}, {"edge_ratio", s.edge_ratio},
        {"density", s.density}, {"mean_v_degree", s.mean_v_degree}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (i < 3) lua_pushinteger(L, (lua_Integer)f[i].v);
        else lua_pushnumber(L, f[i].v);
        lua_setfield(L, -2, f[i].n);
    }
    lua_setfield(L, -2, "hashing");
    return 0;
}

static int l_run(lua_State *L) {
    cr_bigraph *g = check_graph(L, 1);
    lua_Integer k = luaL_checkinteger(L, 2);
    const char *name = luaL_checkstring(L, 3);
    if (k < 1 || k > (1 << 20)) return luaL_error(L, "k must be in [1, 1048576] (got %d)", (int)k);
    int avail;
    cr_part_fn fn = cr_part_method(name, &avail);
    if (!fn) return luaL_error(L, "unknown partition method '%s' (random, parsa, tsh1, tsh2, mbp, dppa, metis)", name);
    cr_part_opts o;
    read_opts(L, 4, &o);
    if (!avail) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: unavailable (libmetis not installed)", name);
        return 2;
    }
    cr_assign *p = cr_assign_new((uint32_t)k, g->nu, g->nv);
    cr_err e;
    double t0 = cr_now();
    int rc = fn(g, (uint32_t)k, &o, p, &e);
    double secs = cr_now() - t0;
    cr_part_metrics m;
    if (rc == 0) rc = cr_part_metrics_compute(g, p, &m, &e);
    if (rc != 0) {
        cr_assign_destroy(&p);
        return cr_lfail(L, e.msg);
    }
    push_placement(L, p);
    cr_assign_destroy(&p);
    push_metrics(L, &m);
    lua_pushnumber(L, secs);
    lua_setfield(L, -2, "seconds");
    if (fn == cr_part_dppa && o.hash_bins > 0 && set_hashing(L, g, &o, &e) != 0) return cr_lfail(L, e.msg);
    return 2;
}

static int l_metrics(lua_State *L) {
    cr_bigraph *g = check_graph(L, 1);
    cr_assign *p = check_placement(L, 2, g->nu, g->nv, 1);
    cr_part_metrics m;
    cr_err e;
    int rc = cr_part_metrics_compute(g, p, &m, &e);
    cr_assign_destroy(&p);
    if (rc != 0) return luaL_error(L, "%s", e.msg);
    push_metrics(L, &m);
    return 1;
}

static int l_load(lua_State *L) {
    cr_err e;
    cr_assign *p = cr_assign_load(luaL_checkstring(L, 1), &e);
    if (!p) {
        return cr_lfail(L, e.msg);
    }
    push_placement(L, p);
    cr_assign_destroy(&p);
    return 1;
}

static int l_save(lua_State *L) {
    const char *path = luaL_checkstring(L, 2);
    const char *comment = luaL_optstring(L, 3, NULL);
    cr_assign *p = check_placement(L, 1, 0, 0, 0);
    cr_err e;
    int rc = cr_assign_save(path, p, comment, &e);
    cr_assign_destroy(&p);
    if (rc != 0) {
        return cr_lfail(L, e.msg);
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int l_methods(lua_State *L) {
    lua_newtable(L);
    for (size_t i = 0; cr_part_method_name(i); i++) {
        int avail;
        cr_part_method(cr_part_method_name(i), &avail);
        lua_createtable(L, 0, 2);
        lua_pushstring(L, cr_part_method_name(i));
        lua_setfield(L, -2, "name");
        lua_pushboolean(L, avail);
        lua_setfield(L, -2, "available");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

int cr_lopen_partition(lua_State *L) {
    const luaL_Reg mt[] = {{"__index", graph_index}, {"__tostring", graph_tostring}, {NULL, NULL}};
    cr_lmetatable(L, GRAPH_MT, NULL, graph_gc, mt);
    const luaL_Reg fns[] = {{"graph", l_graph}, {"graph_from_edges", l_graph_from_edges}, {"run", l_run},
                            {"metrics", l_metrics}, {"load", l_load}, {"save", l_save},
                            {"methods", l_methods}, {NULL, NULL}};
    luaL_newlib(L, fns);
    cr_lrealloc_register(L);
    return 1;
}
