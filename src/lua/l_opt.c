/* Lua options tables against cr_opt rows: the bindings' one option reader. */
#include "lua/l_opt.h"

#include <lauxlib.h>
#include <string.h>

/* "FN: " or "" */
static const char *pre(lua_State *L, const cr_lopt_set *s) {
    return s->fn ? lua_pushfstring(L, "%s: ", s->fn) : "";
}

/* [-0, +0, raises] The value at -1 is not acceptable for row o. */
static void bad(lua_State *L, const cr_lopt_set *s, const cr_opt *o) {
    char want[256];
    cr_opt_want(o, want, sizeof want);
    const char *got = luaL_tolstring(L, -1, NULL);
    luaL_error(L, "%s%s%s'%s' must be %s (got %s)", pre(L, s), s->noun ? s->noun : "", s->noun ? " " : "", o->name,
               want, got);
}

static void set_number(lua_State *L, const cr_lopt_set *s, const cr_opt *o, void *out) {
    if (lua_type(L, -1) != LUA_TNUMBER) bad(L, s, o);
    lua_Number x = lua_tonumber(L, -1);
    if (!cr_opt_ok(o, (double)x)) bad(L, s, o);
    if (o->type == CR_OPT_INT) *(int64_t *)cr_opt_field(o, out) = (int64_t)x;
    else if (o->type == CR_OPT_FLOAT) *(float *)cr_opt_field(o, out) = (float)x;
    else *(double *)cr_opt_field(o, out) = (double)x;
}

/* [-0, +0] Row o's field from the value on top. */
static void set_value(lua_State *L, const cr_lopt_set *s, const cr_opt *o, void *out) {
    int t = lua_type(L, -1);
    switch (o->type) {
    case CR_OPT_INT:
        if (lua_isinteger(L, -1)) {
            lua_Integer v = lua_tointeger(L, -1);
            if (!cr_opt_ok(o, (double)v)) bad(L, s, o);
            *(int64_t *)cr_opt_field(o, out) = v;
            return;
        }
        set_number(L, s, o, out);
        return;
    case CR_OPT_DOUBLE:
    case CR_OPT_FLOAT: set_number(L, s, o, out); return;
    case CR_OPT_STRING:
        if (t != LUA_TSTRING) bad(L, s, o);
        *(const char **)cr_opt_field(o, out) = lua_tostring(L, -1);
        return;
    case CR_OPT_FLAG:
        if (t != LUA_TBOOLEAN && t != LUA_TNUMBER) bad(L, s, o);
        *(int *)cr_opt_field(o, out) = t == LUA_TBOOLEAN ? lua_toboolean(L, -1) : lua_tonumber(L, -1) != 0;
        return;
    case CR_OPT_ENUM:
        for (int i = 0; t == LUA_TSTRING && o->choices[i]; i++)
            if (!strcmp(lua_tostring(L, -1), o->choices[i])) {
                *(int *)cr_opt_field(o, out) = i;
                return;
            }
        bad(L, s, o);
        return;
    case CR_OPT_CUSTOM: return;
    }
}

static void required(lua_State *L, const cr_lopt_set *s, uint64_t seen) {
    int i = 0;
    for (const cr_opt *o = s->opts; o->name; o++, i++)
        if ((o->flags & CR_OPT_REQUIRED) && !(seen >> i & 1))
            luaL_error(L, "%s%s%s'%s' is required", pre(L, s), s->noun ? s->noun : "", s->noun ? " " : "", o->name);
}

uint64_t cr_lopt_read(lua_State *L, int idx, const cr_lopt_set *s, void *out) {
    cr_err e;
    if (cr_opt_defaults(s->opts, out, &e) != 0) luaL_error(L, "%s", e.msg);
    uint64_t seen = 0;
    if (lua_isnoneornil(L, idx)) {
        required(L, s, seen);
        return seen;
    }
    idx = lua_absindex(L, idx);
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const cr_opt *o = lua_type(L, -2) == LUA_TSTRING ? cr_opt_find(s->opts, lua_tostring(L, -2)) : NULL;
        if (!o || strcmp(o->name, lua_tostring(L, -2)) != 0) { /* Lua keys are exact: no '-' for '_' */
            lua_pop(L, 1);
            const char *k = luaL_tolstring(L, -1, NULL);
            luaL_error(L, "%sunknown %s '%s'", pre(L, s), s->noun ? s->noun : "option", k);
        }
        set_value(L, s, o, out);
        seen |= (uint64_t)1 << (o - s->opts);
        lua_pop(L, 1);
    }
    required(L, s, seen);
    return seen;
}
