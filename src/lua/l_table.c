/* crescent.core.table: what the C tables know that the scheduler-side Lua
 * (the modules under lua/crescent) must not compute a second time.
 *
 *   table.block(keys, nodes)        -> keys per node of the range placement
 *   table.owner(keys, nodes, key)   -> node owning key (0-based)
 *   table.range(keys, nodes, node)  -> lo, hi: node's keys [lo, hi)
 *   table.init                      -> {zeros = 0, uniform = 1, normal = 2}
 *                                      (cr_init_kind, what a table def carries)
 *   table.target_kind(path)         -> "missing" | "file" | "link" | "directory"
 *                                      | "device" | "fifo" | "socket" | "other"
 *       what a file written at path would replace (lstat: a symlink is
 *       "link", not its target); nil, msg if path cannot be examined.
 *
 * All placement goes through cr_table_block (src/ps/cr_table.c), the one
 * definition the shards use. Misuse (keys < 1, nodes < 1, key or node out of
 * range) raises. */
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <string.h>
#include <sys/stat.h>

#include "lua/l_modules.h"
#include "ps/cr_table.h"

/* [-0, +0] keys and nodes arguments at 1 and 2, checked. */
static int64_t check_placement(lua_State *L, int *nodes) {
    lua_Integer keys = luaL_checkinteger(L, 1), n = luaL_checkinteger(L, 2);
    luaL_argcheck(L, keys >= 1, 1, "keys must be >= 1");
    luaL_argcheck(L, n >= 1 && n <= 1 << 20, 2, "nodes must be in 1..2^20");
    *nodes = (int)n;
    return keys;
}

/* [-0, +0] integer argument 3, checked to be in 0..n-1 (else raises msg). */
static lua_Integer check_index(lua_State *L, int64_t n, const char *msg) {
    lua_Integer i = luaL_checkinteger(L, 3);
    luaL_argcheck(L, i >= 0 && i < n, 3, msg);
    return i;
}

/* block(keys, nodes) -> block */
static int l_block(lua_State *L) {
    int nodes;
    int64_t keys = check_placement(L, &nodes);
    lua_pushinteger(L, cr_table_block(keys, nodes));
    return 1;
}

/* owner(keys, nodes, key) -> node */
static int l_owner(lua_State *L) {
    int nodes;
    int64_t keys = check_placement(L, &nodes);
    lua_Integer k = check_index(L, keys, "key out of range");
    lua_pushinteger(L, k / cr_table_block(keys, nodes));
    return 1;
}

/* range(keys, nodes, node) -> lo, hi (hi == lo for a node left without keys) */
static int l_range(lua_State *L) {
    int nodes;
    int64_t keys = check_placement(L, &nodes);
    lua_Integer node = check_index(L, nodes, "node out of range");
    int64_t b = cr_table_block(keys, nodes), lo = node * b, hi = lo + b;
    if (lo > keys) lo = keys;
    if (hi > keys) hi = keys;
    lua_pushinteger(L, lo);
    lua_pushinteger(L, hi);
    return 2;
}

static const char *kind_name(mode_t m) {
    if (S_ISREG(m)) return "file";
    if (S_ISLNK(m)) return "link";
    if (S_ISDIR(m)) return "directory";
    if (S_ISCHR(m) || S_ISBLK(m)) return "device";
    if (S_ISFIFO(m)) return "fifo";
    if (S_ISSOCK(m)) return "socket";
    return "other";
}

/* target_kind(path) -> kind | nil, "path: reason" */
static int l_target_kind(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (lstat(path, &st) == 0) {
        lua_pushstring(L, kind_name(st.st_mode));
        return 1;
    }
    if (errno == ENOENT) {
        lua_pushliteral(L, "missing");
        return 1;
    }
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
}

int cr_lopen_table(lua_State *L) {
    static const luaL_Reg fns[] = {{"block", l_block},
                                   {"owner", l_owner},
                                   {"range", l_range},
                                   {"target_kind", l_target_kind},
                                   {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, CR_INIT_ZEROS);
    lua_setfield(L, -2, "zeros");
    lua_pushinteger(L, CR_INIT_UNIFORM);
    lua_setfield(L, -2, "uniform");
    lua_pushinteger(L, CR_INIT_NORMAL);
    lua_setfield(L, -2, "normal");
    lua_setfield(L, -2, "init");
    return 1;
}
