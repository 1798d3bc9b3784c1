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
 *   table.append_whole(path, s)     -> true | nil, "PATH: cannot open|write: reason"
 *       s appended whole or not at all (base/cr_file.h)
 *
 *   table.sparse_owner(kind, nodes, key) -> node of a sparse table's key
 *       (kind "hash" or "range", ps/cr_place.h)
 *   table.keyed_state(keys, state), table.sparse_parts(kind, nodes, values, keyed)
 *       a sparse table's rows in a checkpoint (keys in the state's first
 *       two columns) and back, split by node
 *   table.placement(keys, nodes, spec, name) -> Placement of table `name`:
 *       spec "range", "hash" or a placement file's path (crescent partition
 *       --out); raises a one-line message naming the file (and line) and
 *       the table when the file cannot be read, is cut short, places another
 *       number of keys or is for another number of nodes.
 *     P:kind() -> "range"|"hash"|"file"; P:owner(k) -> node; P:id(k) -> the
 *     key's internal id (ps/cr_place.h); P:count(node) -> keys on node;
 *     P:lo(node) -> node's first id; P:gather(k0, n, parts) -> Matrix of the
 *     rows of keys [k0, k0+n) in key order from parts[node+1] (the rows of
 *     node's keys among them, in id order, e.g. J:get_rows(node, P:span(..)));
 *     P:span(k0, n, node) -> first id, count: node's keys among [k0, k0+n)
 *     (consecutive ids); P:scatter(k0, n, m) -> {[node+1] = Matrix}: the
 *     inverse of gather (nodes without keys there are left out).
 *
 * All placement goes through cr_table_block and cr_place (src/ps), the one
 * definition the shards use. Misuse (keys < 1, nodes < 1, key or node out of
 * range) raises. */
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cr_alloc.h"
#include "base/cr_file.h"
#include "data/cr_assign.h"
#include "lua/l_modules.h"
#include "lua/l_ps_impl.h"
#include "lua/l_util.h"
#include "ps/cr_place.h"
#include "ps/cr_table.h"

#define PLACE_MT "crescent.Placement"

static int64_t check_placement(lua_State *L, int *nodes);

typedef struct lplace {
    cr_place *p;
} lplace;

cr_place *cr_lplace_check(lua_State *L, int idx) {
    lplace *u = luaL_checkudata(L, idx, PLACE_MT);
    if (!u->p) luaL_error(L, "placement already freed");
    return u->p;
}

static int p_gc(lua_State *L) {
    lplace *u = luaL_checkudata(L, 1, PLACE_MT);
    cr_place_destroy(&u->p);
    return 0;
}

/* The file's key-to-node map, checked against the table: the same number
 * of keys and the job's node count. NULL with a message. */
static uint32_t *file_owners(const char *path, int64_t keys, int nodes, const char *name, cr_err *e) {
    cr_err le;
    cr_assign *f = cr_assign_load(path, &le);
    if (!f) return cr_errf(e, "table '%s': placement %s", name, le.msg), NULL;
    uint32_t *owner = NULL;
    if ((int64_t)f->nv != keys)
        cr_errf(e, "table '%s': placement file %s places %u keys, the table has %lld (a placement of another table?)",
                name, path, f->nv, (long long)keys);
    else if ((int64_t)f->k != nodes)
        cr_errf(e, "table '%s': placement file %s is for k = %u machines, the job has %d nodes", name, path, f->k,
                nodes);
    else {
        owner = cr_xmalloc((size_t)keys * sizeof *owner + 1);
        memcpy(owner, f->v_part, (size_t)keys * sizeof *owner);
    }
    cr_assign_destroy(&f);
    return owner;
}

/* sparse_owner(kind, nodes, key) -> node of key of a sparse table */
static int l_sparse_owner(lua_State *L) {
    const char *kind = luaL_checkstring(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2), k = luaL_checkinteger(L, 3);
    luaL_argcheck(L, n >= 1 && n <= 1 << 20, 2, "nodes must be in 1..2^20");
    lua_pushinteger(L, cr_place_sparse_owner(strcmp(kind, "range") ? CR_PLACE_HASH : CR_PLACE_RANGE, (int)n, k));
    return 1;
}

/* keyed_state(keys, state) -> Matrix n x (2 + sdim): each row's key (two
 * floats' bit patterns, low half first) then its state: a sparse table's
 * rows as a checkpoint keeps them (ps/cr_ckpt.h, CR_CKPT_SPARSE) */
static int l_keyed_state(lua_State *L) {
    cr_ints *k = cr_lints_check(L, 1);
    cr_mat *st = cr_lmat_check(L, 2);
    luaL_argcheck(L, st->rows == k->n, 2, "one state row per key expected");
    cr_mat *out = cr_lmat_new(L, k->n, st->cols + 2);
    for (int64_t i = 0; i < k->n; i++) {
        float *o = out->data + (size_t)i * (size_t)out->cols;
        uint64_t u = (uint64_t)k->data[i];
        uint32_t lo = (uint32_t)u, hi = (uint32_t)(u >> 32);
        memcpy(o, &lo, 4);
        memcpy(o + 1, &hi, 4);
        if (st->cols) memcpy(o + 2, st->data + (size_t)i * (size_t)st->cols, (size_t)st->cols * sizeof(float));
    }
    return 1;
}

/* sparse_parts(kind, nodes, values, keyed_state) -> {[node+1] = {keys, values, state}}: rows read from a
 * checkpoint split by the node of their key (nodes without rows left out) */
static int l_sparse_parts(lua_State *L) {
    int kind = strcmp(luaL_checkstring(L, 1), "range") ? CR_PLACE_HASH : CR_PLACE_RANGE;
    lua_Integer nodes = luaL_checkinteger(L, 2);
    luaL_argcheck(L, nodes >= 1 && nodes <= 1 << 20, 2, "nodes must be in 1..2^20");
    cr_mat *v = cr_lmat_check(L, 3), *ks = cr_lmat_check(L, 4);
    luaL_argcheck(L, ks->rows == v->rows && ks->cols >= 2, 4, "keyed state rows expected");
    int dt = cr_lmat_dtype(L, 3);
    int64_t n = v->rows, sd = ks->cols - 2;
    int64_t *cnt = cr_xcalloc((size_t)nodes, sizeof *cnt), *key = cr_xmalloc((size_t)n * sizeof *key + 1);
    int *own = cr_xmalloc((size_t)n * sizeof *own + 1);
    for (int64_t i = 0; i < n; i++) {
        uint32_t lo, hi;
        memcpy(&lo, ks->data + (size_t)i * (size_t)ks->cols, 4);
        memcpy(&hi, ks->data + (size_t)i * (size_t)ks->cols + 1, 4);
        key[i] = (int64_t)((uint64_t)hi << 32 | lo);
        own[i] = cr_place_sparse_owner(kind, (int)nodes, key[i]);
        cnt[own[i]]++;
    }
    lua_createtable(L, (int)nodes, 0);
    for (int o = 0; o < nodes; o++) {
        if (!cnt[o]) continue;
        lua_createtable(L, 3, 0);
        cr_ints *pk = cr_lints_new(L, cnt[o]);
        lua_rawseti(L, -2, 1);
        cr_mat *pv = cr_lmat_new_typed(L, cnt[o], v->cols, dt);
        lua_rawseti(L, -2, 2);
        cr_mat *ps = cr_lmat_new(L, cnt[o], sd);
        lua_rawseti(L, -2, 3);
        int64_t j = 0;
        for (int64_t i = 0; i < n; i++) {
            if (own[i] != o) continue;
            pk->data[j] = key[i];
            memcpy(pv->data + (size_t)j * (size_t)v->cols, v->data + (size_t)i * (size_t)v->cols, (size_t)v->cols * 4);
            if (sd) memcpy(ps->data + (size_t)j * (size_t)sd, ks->data + (size_t)i * (size_t)ks->cols + 2, (size_t)sd * 4);
            j++;
        }
        lua_rawseti(L, -2, o + 1);
    }
    free(cnt);
    free(key);
    free(own);
    return 1;
}

/* placement(keys, nodes, spec, name) -> Placement */
static int l_placement(lua_State *L) {
    int nodes;
    int64_t keys = check_placement(L, &nodes);
    const char *spec = luaL_checkstring(L, 3), *name = luaL_checkstring(L, 4);
    int kind = !strcmp(spec, "range") ? CR_PLACE_RANGE : !strcmp(spec, "hash") ? CR_PLACE_HASH : CR_PLACE_FILE;
    lplace *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->p = NULL;
    luaL_setmetatable(L, PLACE_MT);
    cr_err e;
    uint32_t *owner = kind == CR_PLACE_FILE ? file_owners(spec, keys, nodes, name, &e) : NULL;
    char what[CR_TABLE_NAME_MAX + 16];
    snprintf(what, sizeof what, "table '%s'", name);
    if (kind != CR_PLACE_FILE || owner) u->p = cr_place_new(keys, nodes, kind, owner, what, &e);
    free(owner);
    if (!u->p) return luaL_error(L, "%s", e.msg);
    return 1;
}

static int p_kind(lua_State *L) {
    lua_pushstring(L, cr_place_kind_name(cr_lplace_check(L, 1)->kind));
    return 1;
}

static int64_t check_key(lua_State *L, const cr_place *p, int idx) {
    lua_Integer k = luaL_checkinteger(L, idx);
    luaL_argcheck(L, k >= 0 && k < p->keys, idx, "key out of range");
    return k;
}

static int check_node(lua_State *L, const cr_place *p, int idx) {
    lua_Integer n = luaL_checkinteger(L, idx);
    luaL_argcheck(L, n >= 0 && n < p->nodes, idx, "node out of range");
    return (int)n;
}

static int p_owner(lua_State *L) {
    cr_place *p = cr_lplace_check(L, 1);
    lua_pushinteger(L, cr_place_owner(p, check_key(L, p, 2)));
    return 1;
}

static int p_id(lua_State *L) {
    cr_place *p = cr_lplace_check(L, 1);
    lua_pushinteger(L, cr_place_id(p, check_key(L, p, 2)));
    return 1;
}

static int p_count(lua_State *L) {
    cr_place *p = cr_lplace_check(L, 1);
    lua_pushinteger(L, p->cnt[check_node(L, p, 2)]);
    return 1;
}

static int p_lo(lua_State *L) {
    cr_place *p = cr_lplace_check(L, 1);
    lua_pushinteger(L, cr_place_lo(p, check_node(L, p, 2)));
    return 1;
}

/* [-0, +0] The chunk [k0, k0+n) at 2 and 3, checked. */
static int64_t check_chunk(lua_State *L, const cr_place *p, int64_t *n) {
    lua_Integer k0 = luaL_checkinteger(L, 2), c = luaL_checkinteger(L, 3);
    luaL_argcheck(L, k0 >= 0 && k0 <= p->keys, 2, "key out of range");
    luaL_argcheck(L, c >= 0 && c <= p->keys - k0, 3, "count out of range");
    *n = c;
    return k0;
}

/* span(k0, n, node) -> first id, count */
static int p_span(lua_State *L) {
    cr_place *p = cr_lplace_check(L, 1);
    int64_t n, k0 = check_chunk(L, p, &n), first = -1, c = 0;
    int node = check_node(L, p, 4);
    for (int64_t k = k0; k < k0 + n; k++) {
        if (cr_place_owner(p, k) != node) continue;
        if (first < 0) first = cr_place_id(p, k);
        c++;
    }
    lua_pushinteger(L, first < 0 ? cr_place_lo(p, node) : first);
    lua_pushinteger(L, c);
    return 2;
}

/* gather(k0, n, parts) -> Matrix n x cols in key order */
static int p_gather(lua_State *L) {
    cr_place *p = cr_lplace_check(L, 1);
    int64_t n, k0 = check_chunk(L, p, &n);
    luaL_checktype(L, 4, LUA_TTABLE);
    lua_settop(L, 4);
    cr_mat **part = cr_xcalloc((size_t)p->nodes, sizeof *part);
    int64_t cols = -1;
    int dt = CR_LDT_F32;
    for (int o = 0; o < p->nodes; o++) { /* the parts stay referenced by table 4 */
        lua_rawgeti(L, 4, o + 1);
        part[o] = cr_lmat_test(L, -1);
        if (part[o] && cols < 0) cols = part[o]->cols, dt = cr_lmat_dtype(L, -1);
        lua_pop(L, 1);
    }
    cr_mat *out = cr_lmat_new_typed(L, n, cols < 0 ? 0 : cols, dt);
    int64_t *next = cr_xcalloc((size_t)p->nodes, sizeof *next);
    for (int64_t k = k0; k < k0 + n; k++) {
        int o = cr_place_owner(p, k);
        cr_mat *m = part[o];
        if (!m || m->cols != out->cols || next[o] >= m->rows) {
            free(next);
            free(part);
            return luaL_error(L, "gather: the part of node %d misses rows", o);
        }
        if (m->cols)
            memcpy(out->data + (size_t)(k - k0) * m->cols, m->data + (size_t)next[o] * m->cols,
                   (size_t)m->cols * sizeof(float));
        next[o]++;
    }
    free(next);
    free(part);
    return 1;
}

/* scatter(k0, n, m) -> {[node+1] = Matrix} */
static int p_scatter(lua_State *L) {
    cr_place *p = cr_lplace_check(L, 1);
    int64_t n, k0 = check_chunk(L, p, &n);
    cr_mat *m = cr_lmat_check(L, 4);
    luaL_argcheck(L, m->rows == n, 4, "one row per key expected");
    int dt = cr_lmat_dtype(L, 4);
    int64_t *cnt = cr_xcalloc((size_t)p->nodes, sizeof *cnt);
    for (int64_t k = k0; k < k0 + n; k++) cnt[cr_place_owner(p, k)]++;
    lua_createtable(L, p->nodes, 0);
    cr_mat **part = cr_xcalloc((size_t)p->nodes, sizeof *part);
    for (int o = 0; o < p->nodes; o++) {
        if (!cnt[o]) continue;
        part[o] = cr_lmat_new_typed(L, cnt[o], m->cols, dt);
        lua_rawseti(L, -2, o + 1);
        cnt[o] = 0;
    }
    for (int64_t k = k0; k < k0 + n; k++) {
        int o = cr_place_owner(p, k);
        if (m->cols) memcpy(part[o]->data + (size_t)cnt[o] * m->cols, m->data + (size_t)(k - k0) * m->cols,
                            (size_t)m->cols * sizeof(float));
        cnt[o]++;
    }
    free(cnt);
    free(part);
    return 1;
}

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

/* append_whole(path, s) -> true | nil, "PATH: cannot open|write: reason"
 * (s is appended whole or the file is left as it was) */
static int l_append_whole(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    cr_err e;
    if (cr_file_append_whole(path, s, len, &e) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, e.msg);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

int cr_lopen_table(lua_State *L) {
    static const luaL_Reg fns[] = {{"block", l_block},
                                   {"owner", l_owner},
                                   {"range", l_range},
                                   {"target_kind", l_target_kind},
                                   {"append_whole", l_append_whole},
                                   {"placement", l_placement},
                                   {"sparse_owner", l_sparse_owner},
                                   {"keyed_state", l_keyed_state},
                                   {"sparse_parts", l_sparse_parts},
                                   {NULL, NULL}};
    static const luaL_Reg pmethods[] = {{"kind", p_kind},       {"owner", p_owner},   {"id", p_id},
                                        {"count", p_count},     {"lo", p_lo},         {"span", p_span},
                                        {"gather", p_gather},   {"scatter", p_scatter}, {NULL, NULL}};
    cr_lmetatable(L, PLACE_MT, pmethods, p_gc, NULL);
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
