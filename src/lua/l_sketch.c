/* core.sketch: access-count sketches (src/ps/cr_sketch.h) as userdata
 * "crescent.Sketch", for the scheduler's side of the automatic choice
 * (lua/crescent/manage.lua): read a node's serialised sketches, merge
 * them, subtract the previous window's, list the heavy hitters.
 *
 *   sketch.new(nkeys [, width, depth, topk, seed]) -> S
 *   sketch.read(bytes) -> S | nil, message
 *   S:add(keys)            count a Lua list of keys
 *   S:merge(T), S:sub(T)   S += T, S -= T (same shape and seed)
 *   S:clone() -> S'        S:write() -> bytes
 *   S:estimate(k), S:total(), S:bound(), S:distinct(), S:exact(), S:bytes()
 *   S:heavy(threshold [, max]) -> {{key =, count =}, ...} largest first */
#include "lua/l_sketch.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "lua/l_util.h"
#include "ps/cr_sketch.h"

#define MT "crescent.Sketch"

static cr_sketch **check(lua_State *L, int idx) {
    cr_sketch **u = luaL_checkudata(L, idx, MT);
    if (!*u) luaL_argerror(L, idx, "sketch is closed");
    return u;
}

/* [-0, +1] A userdata holding sk (taken). */
static void push(lua_State *L, cr_sketch *sk) {
    cr_sketch **u = lua_newuserdatauv(L, sizeof *u, 0);
    *u = NULL;
    luaL_setmetatable(L, MT);
    *u = sk;
}

static int l_new(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    lua_Integer w = luaL_optinteger(L, 2, CR_SKETCH_DEFAULT_WIDTH);
    lua_Integer d = luaL_optinteger(L, 3, CR_SKETCH_DEFAULT_DEPTH);
    lua_Integer k = luaL_optinteger(L, 4, CR_SKETCH_DEFAULT_TOPK);
    lua_Integer seed = luaL_optinteger(L, 5, 1);
    luaL_argcheck(L, w > 0 && w <= CR_SKETCH_MAX_WIDTH, 2, "width out of range");
    luaL_argcheck(L, d > 0 && d <= CR_SKETCH_MAX_DEPTH, 3, "depth out of range");
    luaL_argcheck(L, k >= 0 && k <= CR_SKETCH_MAX_TOPK, 4, "topk out of range");
    cr_err e;
    cr_sketch *sk = cr_sketch_new(n, (int)w, (int)d, (int)k, (uint64_t)seed, &e);
    if (!sk) return luaL_error(L, "%s", e.msg);
    push(L, sk);
    return 1;
}

static int l_read(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    cr_err e;
    cr_sketch *sk = cr_sketch_read(s, n, &e);
    if (!sk) {
        lua_pushnil(L);
        lua_pushstring(L, e.msg);
        return 2;
    }
    push(L, sk);
    return 1;
}

static int l_add(lua_State *L) {
    cr_sketch *sk = *check(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 2);
    int64_t buf[256];
    int m = 0;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 2, i);
        int ok;
        lua_Integer k = lua_tointegerx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok) return luaL_error(L, "sketch:add: keys[%d] is not an integer", (int)i);
        buf[m++] = k;
        if (m == 256 || i == n) {
            cr_sketch_add_keys(sk, buf, m);
            m = 0;
        }
    }
    return 0;
}

static int combine(lua_State *L, int sub) {
    cr_sketch *a = *check(L, 1), *b = *check(L, 2);
    cr_err e;
    if ((sub ? cr_sketch_sub(a, b, &e) : cr_sketch_merge(a, b, &e)) < 0) return luaL_error(L, "%s", e.msg);
    lua_settop(L, 1);
    return 1;
}
static int l_merge(lua_State *L) { return combine(L, 0); }
static int l_sub(lua_State *L) { return combine(L, 1); }

static int l_clone(lua_State *L) {
    push(L, cr_sketch_clone(*check(L, 1)));
    return 1;
}

static int l_write(lua_State *L) {
    cr_sketch *sk = *check(L, 1);
    size_t cap = cr_sketch_wire_size(sk);
    char *buf = malloc(cap);
    if (!buf) return luaL_error(L, "sketch:write: out of memory");
    size_t n = cr_sketch_write(sk, buf, cap);
    lua_pushlstring(L, buf, n);
    free(buf);
    return 1;
}

static int l_estimate(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)cr_sketch_estimate(*check(L, 1), luaL_checkinteger(L, 2)));
    return 1;
}
static int l_total(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)cr_sketch_total(*check(L, 1)));
    return 1;
}
static int l_bound(lua_State *L) {
    lua_pushnumber(L, cr_sketch_bound(*check(L, 1)));
    return 1;
}
static int l_distinct(lua_State *L) {
    lua_pushinteger(L, cr_sketch_distinct(*check(L, 1)));
    return 1;
}
static int l_exact(lua_State *L) {
    lua_pushboolean(L, cr_sketch_exact(*check(L, 1)));
    return 1;
}
static int l_bytes(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)cr_sketch_bytes(*check(L, 1)));
    return 1;
}

static int l_heavy(lua_State *L) {
    cr_sketch *sk = *check(L, 1);
    lua_Number thr = luaL_checknumber(L, 2);
    lua_Integer max = luaL_optinteger(L, 3, CR_SKETCH_MAX_TOPK);
    luaL_argcheck(L, max >= 0 && max <= 1 << 24, 3, "max out of range");
    cr_sketch_hit *h = malloc((size_t)(max ? max : 1) * sizeof *h);
    if (!h) return luaL_error(L, "sketch:heavy: out of memory");
    int n = cr_sketch_heavy(sk, thr < 0 ? 0 : (uint64_t)thr, h, (int)max);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_createtable(L, 0, 2);
        lua_pushinteger(L, h[i].key);
        lua_setfield(L, -2, "key");
        lua_pushinteger(L, (lua_Integer)h[i].count);
        lua_setfield(L, -2, "count");
        lua_rawseti(L, -2, i + 1);
    }
    free(h);
    return 1;
}

static int l_gc(lua_State *L) {
    cr_sketch **u = luaL_checkudata(L, 1, MT);
    cr_sketch_destroy(u);
    return 0;
}

int cr_lopen_sketch(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"add", l_add},       {"merge", l_merge},       {"sub", l_sub},     {"clone", l_clone},
        {"write", l_write},   {"estimate", l_estimate}, {"total", l_total}, {"bound", l_bound},
        {"distinct", l_distinct}, {"exact", l_exact},   {"bytes", l_bytes}, {"heavy", l_heavy},
        {NULL, NULL}};
    cr_lmetatable(L, MT, methods, l_gc, NULL);
    static const luaL_Reg fns[] = {{"new", l_new}, {"read", l_read}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
