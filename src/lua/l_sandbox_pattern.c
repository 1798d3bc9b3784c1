/* Pattern matching with a bounded worst case, for sandboxed scripts.
 *
 * Lua's matcher backtracks, and it runs inside one C call, where the
 * sandbox's count hook cannot stop it: string.find(("a"):rep(30),
 * ("a*"):rep(30) .. "b") would hold a node, or the scheduler checking a
 * policy or running a decision script, for longer than the universe has
 * left. So in a sandbox string.find, match, gmatch and gsub first bound
 * the work their call may take and refuse one over the limit, before
 * matching anything.
 *
 * The bound. A pattern of `items` items (single-character classes, each
 * with its repetition if any, %b, %f, back references), `reps` of which
 * may match a variable length (*, +, -, ?, %b and back references), is
 * tried at each of the n + 1 start positions (one if anchored with ^). In
 * one attempt the matcher's choices are where each variable item stops:
 * positions that never go back, so at most C(n + reps, reps) of them per
 * start and C(n + reps + 1, reps + 1) over all starts, each costing at most
 * `items` steps. Measured with Lua 5.4 on this project's machines, a step
 * is 2 to 7 ns; CR_PATTERN_STEPS (3e8) is therefore at most a second or
 * two. The bound is a worst case, so it is far above what ordinary input
 * takes, but ordinary patterns still fit: "^(%w+)=(.*)$" on a 10,000-byte
 * subject is 1.5e8 steps, "%d+" unanchored on 20,000 bytes 2e8,
 * "^%s*(.-)%s*$" on 800 bytes 2.6e8.
 * A pattern that is refused can be anchored with ^, run on a shorter
 * subject, or replaced by a plain find (string.find(s, p, 1, true)). */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "lua/l_sandbox.h"

/* Where the set starting at p[j] ('[') ends: after the first ']' that is
 * not its first character (or escaped). */
static size_t set_end(const char *p, size_t pl, size_t j) {
    j++;
    if (j < pl && p[j] == '^') j++;
    do {
        if (j >= pl) return pl;
        if (p[j++] == '%') j++;
    } while (j < pl && p[j] != ']');
    return j + 1;
}

/* How many items and variable items the pattern has (a malformed pattern is
 * counted as far as it goes: the real function then raises its own error). */
static void pattern_shape(const char *p, size_t pl, int *anchored, double *items, double *reps) {
    size_t i = 0;
    *anchored = pl > 0 && p[0] == '^';
    *items = *reps = 0;
    if (*anchored) i = 1;
    while (i < pl) {
        char c = p[i], d = i + 1 < pl ? p[i + 1] : '\0';
        if (c == '(' || c == ')' || (c == '$' && i + 1 == pl)) {
            i++;
            continue;
        }
        *items += 1;
        if (c == '%' && d == 'b') { /* %bxy: scans ahead */
            *reps += 1, i += 4;
            continue;
        }
        if (c == '%' && d >= '0' && d <= '9') { /* a back reference */
            *reps += 1, i += 2;
            continue;
        }
        if (c == '%' && d == 'f') { /* %f[set]: one test */
            i = i + 2 < pl && p[i + 2] == '[' ? set_end(p, pl, i + 2) : i + 2;
            continue;
        }
        size_t end = c == '%' ? i + 2 : c == '[' ? set_end(p, pl, i) : i + 1;
        if (end < pl && strchr("*+-?", p[end])) *reps += 1, end++;
        i = end;
    }
    if (*items < 1) *items = 1;
}

double cr_pattern_steps(size_t n, const char *p, size_t pl, int can_anchor) {
    int anchored;
    double items, reps;
    pattern_shape(p, pl, &anchored, &items, &reps);
    /* C(n + k, k), k = reps (anchored) or reps + 1 (every start) */
    double k = reps + (anchored && can_anchor ? 0 : 1), c = 1;
    for (double j = 1; j <= k && c < 1e300; j++) c = c * ((double)n + j) / j;
    return c * items;
}

/* The wrapper: upvalue 1 the library's function, 2 its name, 3 whether a
 * leading ^ anchors it (not for gmatch), 4 whether argument 4 can ask for a
 * plain search (find). */
static int sb_pattern(lua_State *L) {
    size_t n, pl;
    luaL_checklstring(L, 1, &n);
    const char *p = luaL_checklstring(L, 2, &pl);
    int plain = lua_toboolean(L, lua_upvalueindex(4)) && lua_toboolean(L, 4);
    if (!plain) {
        double steps = cr_pattern_steps(n, p, pl, lua_toboolean(L, lua_upvalueindex(3)));
        if (steps > CR_PATTERN_STEPS) {
            char why[300];
            snprintf(why, sizeof why,
                     "pattern too costly for a sandboxed script (up to %.3g steps on a subject of %zu bytes, "
                     "limit %.3g): anchor it with ^, shorten the subject, or search plain text with "
                     "string.find(s, p, 1, true)",
                     steps, n, (double)CR_PATTERN_STEPS);
            return luaL_error(L, "%s: %s", lua_tostring(L, lua_upvalueindex(2)), why);
        }
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

void cr_sandbox_bound_patterns(lua_State *L) {
    static const struct {
        const char *name;
        int anchors, plain;
    } fns[] = {{"find", 1, 1}, {"match", 1, 0}, {"gmatch", 0, 0}, {"gsub", 1, 0}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        if (lua_getfield(L, -1, fns[i].name) != LUA_TFUNCTION) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushfstring(L, "string.%s", fns[i].name);
        lua_pushboolean(L, fns[i].anchors);
        lua_pushboolean(L, fns[i].plain);
        lua_pushcclosure(L, sb_pattern, 4);
        lua_setfield(L, -2, fns[i].name);
    }
}
