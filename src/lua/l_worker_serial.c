#include "lua/l_worker_serial.h"

#include "base/cr_alloc.h"

#include <ctype.h>
#include <lauxlib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *b;
    size_t n, cap;
    size_t values, max_values; /* values written so far, and the bound */
} sbuf;

static void put(sbuf *s, const char *p, size_t n) {
    if (s->n + n + 1 > s->cap) {
        while (s->n + n + 1 > s->cap) s->cap = s->cap ? 2 * s->cap : 256;
        s->b = realloc(s->b, s->cap);
    }
    memcpy(s->b + s->n, p, n);
    s->n += n;
    s->b[s->n] = '\0';
}

static void puts_(sbuf *s, const char *p) { put(s, p, strlen(p)); }

static void put_string(sbuf *s, const char *p, size_t n) {
    put(s, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        char tmp[8];
        if (c == '"' || c == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)c;
            put(s, tmp, 2);
        } else if (c < 32 || c == 127) {
            snprintf(tmp, sizeof tmp, "\\%03u", c);
            put(s, tmp, 4);
        } else
            put(s, (const char *)&c, 1);
    }
    put(s, "\"", 1);
}

static int dump(lua_State *L, int idx, sbuf *s, int depth, char *err, size_t en, const char *path) {
    char tmp[64];
    if (++s->values > s->max_values) {
        (void)path; /* the whole value is too large, not the element where counting stopped */
        snprintf(err, en, "too large: more than %zu values (each key and each value counts; keep bulk data in tables)",
                 s->max_values);
        return -1;
    }
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        puts_(s, "nil");
        return 0;
    case LUA_TBOOLEAN:
        puts_(s, lua_toboolean(L, idx) ? "true" : "false");
        return 0;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) snprintf(tmp, sizeof tmp, "%lld", (long long)lua_tointeger(L, idx));
        else {
            double d = lua_tonumber(L, idx);
            if (isnan(d)) snprintf(tmp, sizeof tmp, "(0/0)");
            else if (isinf(d)) snprintf(tmp, sizeof tmp, d > 0 ? "(1/0)" : "(-1/0)");
            else snprintf(tmp, sizeof tmp, "%.17g", d);
            if (!strpbrk(tmp, ".en(")) strcat(tmp, ".0");
        }
        puts_(s, tmp);
        return 0;
    case LUA_TSTRING: {
        size_t n;
        const char *p = lua_tolstring(L, idx, &n);
        put_string(s, p, n);
        return 0;
    }
    case LUA_TTABLE:
        break;
    default:
        snprintf(err, en, "%s: cannot send a %s (plain data only)", path, luaL_typename(L, idx));
        return -1;
    }
    if (depth > 64) {
        snprintf(err, en, "%s: tables nested too deeply (cycle?)", path);
        return -1;
    }
    idx = lua_absindex(L, idx);
    if (!lua_checkstack(L, 4)) { /* not luaL_checkstack: a worker's reply runs unprotected */
        snprintf(err, en, "%s: no memory left to serialize it (the state is at its memory cap)", path);
        return -1;
    }
    puts_(s, "{");
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int kt = lua_type(L, -2);
        if (kt != LUA_TNUMBER && kt != LUA_TSTRING && kt != LUA_TBOOLEAN) {
            lua_pop(L, 2);
            snprintf(err, en, "%s: table key of type %s cannot be sent", path, lua_typename(L, kt));
            return -1;
        }
        char sub[256];
        if (kt == LUA_TSTRING) snprintf(sub, sizeof sub, "%s.%s", path, lua_tostring(L, -2));
        else snprintf(sub, sizeof sub, "%s[?]", path);
        puts_(s, "[");
        lua_pushvalue(L, -2); /* do not let tostring-like calls touch the key */
        int rc = dump(L, -1, s, depth + 1, err, en, sub);
        lua_pop(L, 1);
        if (rc == 0) {
            puts_(s, "]=");
            rc = dump(L, -1, s, depth + 1, err, en, sub);
        }
        if (rc < 0) {
            lua_pop(L, 2);
            return -1;
        }
        puts_(s, ",");
        lua_pop(L, 1);
    }
    puts_(s, "}");
    return 0;
}

int cr_lser_dump(lua_State *L, int idx, char **out, size_t *len, char *err, size_t err_n) {
    return cr_lser_dump_max(L, idx, SIZE_MAX, out, len, err, err_n);
}

int cr_lser_dump_max(lua_State *L, int idx, size_t max_values, char **out, size_t *len, char *err, size_t err_n) {
    sbuf s = {0};
    s.max_values = max_values;
    put(&s, "", 0);
    if (dump(L, idx, &s, 0, err, err_n, "value") < 0) {
        free(s.b);
        return -1;
    }
    *out = s.b;
    *len = s.n;
    return 0;
}

/* 1 if s is a literal as dump() writes it: outside its strings no name but
 * true, false, nil and field names ({x = 1}). Without other names there is no loop, no method and no call
 * that does anything, so evaluating it is bounded by its length (a crafted
 * message or checkpoint can neither hang the reader nor call a function). */
static int plain_literal(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\') i++;
            i++;
        } else if (isdigit(c) || (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1]))) {
            while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '.')) i++; /* 1.5e10, 0x1p4 */
        } else if (isalpha(c) || c == '_') {
            size_t b = i;
            while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
            size_t w = i - b, j = i;
            while (j < n && isspace((unsigned char)s[j])) j++;
            if (j < n && s[j] == '=' && (j + 1 >= n || s[j + 1] != '=')) continue; /* a field name: {x=1} */
            if (!((w == 4 && !memcmp(s + b, "true", 4)) || (w == 5 && !memcmp(s + b, "false", 5)) ||
                  (w == 3 && !memcmp(s + b, "nil", 3))))
                return 0;
        } else if (c == '\'' || c == '`' || c == '\\') {
            return 0; /* dump writes only double-quoted strings */
        } else if (c == '[' && i + 1 < n && (s[i + 1] == '[' || s[i + 1] == '=')) {
            return 0; /* long strings and comments are not dump's */
        } else
            i++;
    }
    return 1;
}

int cr_lser_load(lua_State *L, const char *s, size_t n) {
    if (!plain_literal(s, n)) {
        lua_pushliteral(L, "not plain data (only literals of numbers, strings, booleans and tables)");
        return -1;
    }
    char *code = cr_xmalloc(n + 8);
    memcpy(code, "return ", 7);
    memcpy(code + 7, s, n);
    int rc = luaL_loadbufferx(L, code, n + 7, "=data", "t");
    free(code);
    if (rc != LUA_OK) return -1;
    lua_newtable(L);
    lua_setupvalue(L, -2, 1); /* _ENV = {} */
    return lua_pcall(L, 0, 1, 0) == LUA_OK ? 0 : -1;
}
