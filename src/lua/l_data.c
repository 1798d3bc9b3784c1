/* crescent.core.data: readers and generators as Lua functions.
 *
 * Convention: every reader here returns its result, or nil plus a one-line
 * message ("file:line: what is wrong") for expected failures (missing file,
 * bad line, truncated gzip). Wrong argument types raise. lua/crescent/data.lua
 * wraps these and re-raises with error(msg, 2), so a user's script sees the
 * message with its own file:line in front. Results are plain tables holding
 * crescent.Ints / crescent.Matrix userdata: never one Lua value per element. */
#include <lauxlib.h>
#include <lua.h>
#include <stddef.h>
#include <string.h>

#include "data/cr_dict.h"
#include "data/cr_gen.h"
#include "data/cr_graph.h"
#include "data/cr_libsvm.h"
#include "data/cr_mm.h"
#include "data/cr_text.h"
#include "lua/l_modules.h"
#include "lua/l_opt.h"
#include "lua/l_util.h"

/* Options, declared once per reader as cr_opt rows (src/lua/l_opt.h);
 * dictionaries (CR_OPT_CUSTOM) are read by opt_dict. */
typedef struct data_opts {
    int cache, rebuild, grow, names;
    int64_t features, min_count, max_sentence, table_size;
    double sample, power;
} data_opts;

#define DO(f) offsetof(data_opts, f)
#define END_ROWS {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}
static const cr_opt mm_rows[] = {
    {"cache", CR_OPT_FLAG, DO(cache), 0, 0, 0, "1", NULL, "use and write the binary cache beside the file", NULL,
     NULL},
    {"rebuild", CR_OPT_FLAG, DO(rebuild), 0, 0, 0, "0", NULL, "rebuild the cache", NULL, NULL},
    END_ROWS};
static const cr_opt libsvm_rows[] = {
    {"features", CR_OPT_INT, DO(features), CR_OPT_RANGE, 0, 9007199254740992.0, "0", NULL,
     "feature count, 0 = from the file", NULL, NULL},
    END_ROWS};
static const cr_opt triples_rows[] = {
    {"entities", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "a Dict or a path", NULL, NULL},
    {"relations", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "a Dict or a path", NULL, NULL},
    {"grow", CR_OPT_FLAG, DO(grow), 0, 0, 0, NULL, NULL, "add unknown names to the dictionaries", NULL, NULL},
    END_ROWS};
static const cr_opt write_triples_rows[] = {
    {"names", CR_OPT_FLAG, DO(names), 0, 0, 0, NULL, NULL, "write names, not ids", NULL, NULL}, END_ROWS};
static const cr_opt text_rows[] = {
    {"min_count", CR_OPT_INT, DO(min_count), CR_OPT_RANGE, 1, 9007199254740992.0, "1", NULL,
     "drop words seen fewer times", NULL, NULL},
    {"max_sentence", CR_OPT_INT, DO(max_sentence), CR_OPT_RANGE, 0, 9007199254740992.0, "0", NULL,
     "split longer lines, 0 = never", NULL, NULL},
    {"table_size", CR_OPT_INT, DO(table_size), CR_OPT_RANGE, 1, 1e9, "1000000", NULL, "negative-sampling table",
     NULL, NULL},
    {"sample", CR_OPT_DOUBLE, DO(sample), 0, 0, 0, "0", NULL, "subsampling threshold t", NULL, NULL},
    {"power", CR_OPT_DOUBLE, DO(power), 0, 0, 0, "0.75", NULL, "exponent of the sampling table", NULL, NULL},
    {"vocab", CR_OPT_CUSTOM, 0, 0, 0, 0, NULL, NULL, "a Dict", NULL, NULL},
    END_ROWS};

/* [-0, +0] The options table at t (nil: defaults) against rows into o;
 * returns the rows given. */
static uint64_t read_opts(lua_State *L, int t, const cr_opt *rows, data_opts *o) {
    cr_lopt_set set = {NULL, NULL, rows};
    *o = (data_opts){0};
    return cr_lopt_read(L, t, &set, o);
}

/* ---- shared helpers ---- */

/* [-0, +1] A new Ints holding a copy of a[0..n). */
static cr_ints *push_ints(lua_State *L, const int64_t *a, int64_t n) {
    cr_ints *v = cr_lints_new(L, n);
    if (n) memcpy(v->data, a, (size_t)n * sizeof *a);
    return v;
}

/* [-0, +1] A new n x 1 Matrix holding a copy of a[0..n). */
static void push_col(lua_State *L, const float *a, int64_t n) {
    cr_mat *m = cr_lmat_new(L, n, 1);
    if (n) memcpy(m->data, a, (size_t)n * sizeof *a);
}

static void set_int(lua_State *L, const char *k, int64_t v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

/* Field k of table t as an Ints / Matrix (raises with the field's name). */
static cr_ints *field_ints(lua_State *L, int t, const char *k) {
    lua_getfield(L, t, k);
    cr_ints *v = cr_lints_test(L, -1);
    if (!v) luaL_error(L, "field '%s' must be a crescent.Ints", k);
    lua_pop(L, 1); /* still referenced by the table */
    return v;
}

static cr_mat *field_mat(lua_State *L, int t, const char *k) {
    lua_getfield(L, t, k);
    cr_mat *m = cr_lmat_test(L, -1);
    if (!m) luaL_error(L, "field '%s' must be a crescent.Matrix", k);
    lua_pop(L, 1);
    return m;
}

/* Convert a loaded C result into Lua values without leaking it: build runs
 * under lua_pcall with the C object as a light userdata (plus nargs values
 * from the stack top), the C object is freed either way, then an error is
 * re-raised. [-nargs, +1] */
static int build_then_free(lua_State *L, lua_CFunction build, void *obj, void (*free_fn)(void *), int nargs) {
    lua_pushcfunction(L, build);
    lua_pushlightuserdata(L, obj);
    lua_rotate(L, -(nargs + 2), 2); /* build, obj below the nargs values */
    int st = lua_pcall(L, nargs + 1, 1, 0);
    free_fn(obj);
    if (st != LUA_OK) return lua_error(L);
    return 1;
}

/* Field k of table t as an integer (raises with the field's name). */
static int64_t field_int(lua_State *L, int t, const char *k) {
    lua_getfield(L, t, k);
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok) luaL_error(L, "field '%s' must be an integer", k);
    lua_pop(L, 1);
    return v;
}

/* ---- matrix_market ---- */

typedef struct coo_ud {
    lua_State *L;
    int base; /* stack top before the three arrays */
} coo_ud;

/* [-1, +3] Three arrays for n entries (run under lua_pcall: may raise). */
static int make_coo_arrays(lua_State *L) {
    int64_t n = lua_tointeger(L, 1);
    cr_lints_new(L, n);
    cr_lints_new(L, n);
    cr_lmat_new(L, n, 1);
    return 3;
}

/* cr_coo_alloc: the arrays are userdata left on the Lua stack at base+1..3.
 * Created under lua_pcall, so an allocation failure becomes an error return
 * instead of a longjmp through cr_mm_load (which holds an open file). */
static int coo_alloc(void *p, cr_coo *m, cr_err *e) {
    coo_ud *u = p;
    lua_settop(u->L, u->base);
    lua_pushcfunction(u->L, make_coo_arrays);
    lua_pushinteger(u->L, m->nnz);
    if (lua_pcall(u->L, 1, 3, 0) != LUA_OK) {
        cr_errf(e, "cannot allocate %lld entries: %s", (long long)m->nnz, lua_tostring(u->L, -1));
        lua_settop(u->L, u->base);
        return -1;
    }
    m->row = cr_lints_check(u->L, -3)->data;
    m->col = cr_lints_check(u->L, -2)->data;
    m->val = cr_lmat_check(u->L, -1)->data;
    return 0;
}

/* matrix_market(path [, {cache=true, rebuild=false}]) -> {rows, cols, nnz,
 * row = Ints, col = Ints (0-based), val = Matrix nnz x 1, cached = bool}
 * | nil, msg */
static int l_matrix_market(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    data_opts o;
    read_opts(L, 2, mm_rows, &o);
    int flags = (o.cache ? 0 : CR_MM_NO_CACHE) | (o.rebuild ? CR_MM_REBUILD : 0);
    coo_ud u = {L, lua_gettop(L)};
    cr_coo m;
    cr_err e;
    int cached;
    if (cr_mm_load(path, flags, coo_alloc, &u, &m, &cached, &e) != 0) {
        lua_settop(L, u.base);
        return cr_lfail(L, e.msg);
    }
    lua_createtable(L, 0, 8);
    lua_rotate(L, u.base + 1, 1); /* result table below the three arrays */
    lua_setfield(L, u.base + 1, "val");
    lua_setfield(L, u.base + 1, "col");
    lua_setfield(L, u.base + 1, "row");
    lua_pushinteger(L, m.rows);
    lua_setfield(L, -2, "rows");
    lua_pushinteger(L, m.cols);
    lua_setfield(L, -2, "cols");
    lua_pushinteger(L, m.nnz);
    lua_setfield(L, -2, "nnz");
    lua_pushboolean(L, cached);
    lua_setfield(L, -2, "cached");
    lua_pushstring(L, path);
    lua_setfield(L, -2, "path");
    return 1;
}

/* ---- chunked MatrixMarket reading: crescent.MMReader ---- */

#define MMREADER_MT "crescent.MMReader"

typedef struct lmmr {
    cr_mm_reader *r; /* NULL once closed or at the end */
    cr_mm_header h;
} lmmr;

static int mmr_close(lua_State *L) {
    lmmr *u = luaL_checkudata(L, 1, MMREADER_MT);
    cr_mm_close(&u->r);
    return 0;
}

/* mm_open(path) -> reader | nil, msg. reader.rows/cols/nnz via
 * reader:header(); reader:next(n) -> row Ints, col Ints, val Matrix n x 1
 * (at most n entries, 0-based ids), or nil at the end, or nil, msg on a bad
 * line (the reader is then closed). Use with `local r <close> = ...`. */
static int l_mm_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    lmmr *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->r = NULL;
    luaL_setmetatable(L, MMREADER_MT);
    cr_err e;
    u->r = cr_mm_open(path, &u->h, &e);
    if (!u->r) return cr_lfail(L, e.msg);
    return 1;
}

/* reader:header() -> rows, cols, nnz */
static int mmr_header(lua_State *L) {
    lmmr *u = luaL_checkudata(L, 1, MMREADER_MT);
    lua_pushinteger(L, u->h.rows);
    lua_pushinteger(L, u->h.cols);
    lua_pushinteger(L, u->h.nnz);
    return 3;
}

static int mmr_next(lua_State *L) {
    lmmr *u = luaL_checkudata(L, 1, MMREADER_MT);
    lua_Integer cap = luaL_optinteger(L, 2, 65536);
    luaL_argcheck(L, cap >= 1 && cap <= (1 << 26), 2, "chunk size must be in 1..2^26");
    if (!u->r) return 0;
    cr_ints *row = cr_lints_new(L, cap), *col = cr_lints_new(L, cap);
    cr_mat *val = cr_lmat_new(L, cap, 1);
    cr_err e;
    long got = cr_mm_read(u->r, row->data, col->data, val->data, (size_t)cap, &e);
    if (got <= 0) {
        cr_mm_close(&u->r);
        if (got < 0) return cr_lfail(L, e.msg);
        return 0;
    }
    if (got < cap) { /* the last chunk: exact-size copies */
        push_ints(L, row->data, got);
        push_ints(L, col->data, got);
        push_col(L, val->data, got);
    }
    return 3;
}

/* write_matrix_market(path, {rows=, cols=, row=Ints, col=Ints, val=Matrix}
 * [, pattern]) -> true | nil, msg */
static int l_write_matrix_market(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    int pattern = lua_toboolean(L, 3);
    cr_coo m;
    m.rows = field_int(L, 2, "rows");
    m.cols = field_int(L, 2, "cols");
    lua_getfield(L, 2, "row");
    lua_getfield(L, 2, "col");
    lua_getfield(L, 2, "val");
    cr_ints *r = cr_lints_test(L, -3), *c = cr_lints_test(L, -2);
    cr_mat *v = cr_lmat_test(L, -1);
    if (!r || !c) return luaL_error(L, "fields 'row' and 'col' must be crescent.Ints");
    if (!v && !(pattern && lua_isnil(L, -1))) return luaL_error(L, "field 'val' must be a crescent.Matrix");
    m.nnz = r->n;
    if (c->n != m.nnz || (v && v->rows * v->cols != m.nnz))
        return luaL_error(L, "row, col and val must have the same length");
    for (int64_t i = 0; i < m.nnz; i++)
        if (r->data[i] < 0 || r->data[i] >= m.rows || c->data[i] < 0 || c->data[i] >= m.cols)
            return luaL_error(L, "entry %I: (%I, %I) outside %I x %I", (lua_Integer)i + 1, (lua_Integer)r->data[i],
                              (lua_Integer)c->data[i], (lua_Integer)m.rows, (lua_Integer)m.cols);
    m.row = r->data;
    m.col = c->data;
    m.val = v ? v->data : NULL; /* NULL only when pattern: values are not written */
    cr_err e;
    if (cr_mm_write(path, &m, pattern, &e) != 0) {
        return cr_lfail(L, e.msg);
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- crescent.Dict: name <-> id dictionaries ---- */

#define DICT_MT "crescent.Dict"

typedef struct ldict {
    cr_dict d;
    int live;
} ldict;

/* [-0, +1] A new empty dictionary (never raises after allocation). */
static ldict *dict_new(lua_State *L) {
    ldict *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->live = 0;
    luaL_setmetatable(L, DICT_MT);
    cr_dict_init(&u->d);
    u->live = 1;
    return u;
}

static ldict *dict_check(lua_State *L, int i) { return luaL_checkudata(L, i, DICT_MT); }

static int d_gc(lua_State *L) {
    ldict *u = dict_check(L, 1);
    if (u->live) cr_dict_free(&u->d);
    u->live = 0;
    return 0;
}

static int d_len(lua_State *L) {
    lua_pushinteger(L, dict_check(L, 1)->d.n);
    return 1;
}

/* d:id(name) -> 0-based id | nil */
static int d_id(lua_State *L) {
    ldict *u = dict_check(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    int64_t id = cr_dict_find(&u->d, s, n);
    if (id < 0) luaL_pushfail(L);
    else lua_pushinteger(L, id);
    return 1;
}

/* d:name(id) -> string | nil (ids are 0-based, as in the data arrays) */
static int d_name(lua_State *L) {
    ldict *u = dict_check(L, 1);
    lua_Integer id = luaL_checkinteger(L, 2);
    if (id < 0 || id >= u->d.n) luaL_pushfail(L);
    else lua_pushstring(L, cr_dict_name(&u->d, id));
    return 1;
}

/* d:names() -> {name_of_id_0, ...} (a Lua array: 1-based positions) */
static int d_names(lua_State *L) {
    ldict *u = dict_check(L, 1);
    lua_createtable(L, (int)u->d.n, 0);
    for (int64_t i = 0; i < u->d.n; i++) {
        lua_pushstring(L, cr_dict_name(&u->d, i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* d:write(path) -> true | nil, msg   ("ID<TAB>NAME" lines) */
static int d_write(lua_State *L) {
    ldict *u = dict_check(L, 1);
    cr_err e;
    if (cr_dict_write(&u->d, luaL_checkstring(L, 2), &e) != 0) return cr_lfail(L, e.msg);
    lua_pushboolean(L, 1);
    return 1;
}

/* dict(path) -> Dict | nil, msg   (reads "ID<TAB>NAME" lines) */
static int l_dict(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    ldict *u = dict_new(L);
    cr_err e;
    if (cr_dict_load(&u->d, path, &e) != 0) return cr_lfail(L, e.msg);
    return 1;
}

/* ---- libsvm ---- */

static void free_csr(void *m) { cr_csr_free(m); }

static int build_libsvm(lua_State *L) {
    const cr_csr *m = lua_touserdata(L, 1);
    lua_createtable(L, 0, 8);
    set_int(L, "rows", m->rows);
    set_int(L, "cols", m->cols);
    set_int(L, "nnz", m->nnz);
    push_ints(L, m->ptr, m->rows + 1);
    lua_setfield(L, -2, "ptr");
    push_ints(L, m->idx, m->nnz);
    lua_setfield(L, -2, "idx");
    push_col(L, m->val, m->nnz);
    lua_setfield(L, -2, "val");
    push_col(L, m->label, m->rows);
    lua_setfield(L, -2, "label");
    return 1;
}

/* libsvm(path [, {features = N}]) -> {rows, cols, nnz, ptr = Ints (rows+1),
 * idx = Ints (0-based feature ids), val = Matrix nnz x 1, label = Matrix
 * rows x 1} | nil, msg */
static int l_libsvm(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    data_opts o;
    read_opts(L, 2, libsvm_rows, &o);
    int64_t features = o.features;
    cr_csr m;
    cr_err e;
    if (cr_libsvm_load(path, features, &m, &e) != 0) return cr_lfail(L, e.msg);
    return build_then_free(L, build_libsvm, &m, free_csr, 0);
}

/* write_libsvm(path, {ptr, idx, val, label}) -> true | nil, msg */
static int l_write_libsvm(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    cr_ints *ptr = field_ints(L, 2, "ptr"), *idx = field_ints(L, 2, "idx");
    cr_mat *val = field_mat(L, 2, "val"), *label = field_mat(L, 2, "label");
    int64_t rows = ptr->n - 1;
    if (rows < 0 || label->rows * label->cols != rows || val->rows * val->cols != idx->n ||
        ptr->data[0] != 0 || ptr->data[rows] != idx->n)
        return luaL_error(L, "inconsistent CSR: ptr must have rows+1 entries from 0 to #idx, label rows entries");
    for (int64_t i = 0; i < rows; i++)
        if (ptr->data[i + 1] < ptr->data[i]) return luaL_error(L, "ptr must be non-decreasing");
    for (int64_t i = 0; i < rows; i++)
        for (int64_t k = ptr->data[i]; k < ptr->data[i + 1]; k++) {
            if (idx->data[k] < 0 || idx->data[k] >= INT32_MAX)
                return luaL_error(L, "idx[%I] = %I out of range", (lua_Integer)k + 1, (lua_Integer)idx->data[k]);
            if (k > ptr->data[i] && idx->data[k] <= idx->data[k - 1])
                return luaL_error(L, "row %I: feature ids must increase", (lua_Integer)i + 1);
        }
    cr_csr m = {rows, 0, idx->n, ptr->data, idx->data, val->data, label->data};
    cr_err e;
    if (cr_libsvm_write(path, &m, &e) != 0) return cr_lfail(L, e.msg);
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- edges ---- */

static void free_edges(void *g) { cr_edges_free(g); }

static int build_edges(lua_State *L) {
    const cr_edges *g = lua_touserdata(L, 1);
    lua_createtable(L, 0, 4);
    set_int(L, "n", g->n);
    set_int(L, "m", g->m);
    push_ints(L, g->src, g->m);
    lua_setfield(L, -2, "src");
    push_ints(L, g->dst, g->m);
    lua_setfield(L, -2, "dst");
    return 1;
}

/* edges(path) -> {n (nodes = max id + 1), m, src = Ints, dst = Ints} | nil, msg */
static int l_edges(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_edges g;
    cr_err e;
    if (cr_edges_load(path, &g, &e) != 0) return cr_lfail(L, e.msg);
    return build_then_free(L, build_edges, &g, free_edges, 0);
}

static int l_write_edges(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    cr_ints *a = field_ints(L, 2, "src"), *b = field_ints(L, 2, "dst");
    if (a->n != b->n) return luaL_error(L, "src and dst must have the same length");
    for (int64_t i = 0; i < a->n; i++)
        if (a->data[i] < 0 || a->data[i] > INT32_MAX || b->data[i] < 0 || b->data[i] > INT32_MAX)
            return luaL_error(L, "edge %I has an id outside [0, 2147483647]", (lua_Integer)i + 1);
    cr_edges g = {0, a->n, a->data, b->data};
    cr_err e;
    if (cr_edges_write(path, &g, &e) != 0) return cr_lfail(L, e.msg);
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- triples ---- */

static int ends_with(const char *s, const char *suf) {
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && !strcmp(s + n - k, suf);
}

/* Option t[key]: a Dict (used as is), a path of an ID<TAB>NAME file (loaded),
 * or nil (a new empty Dict). Pushes the Dict; returns it, or NULL with e set. */
static ldict *opt_dict(lua_State *L, int t, const char *key, int *given, cr_err *e) {
    int ty = lua_isnoneornil(L, t) ? LUA_TNIL : lua_getfield(L, t, key);
    if (!lua_isnoneornil(L, t) && ty == LUA_TNIL) lua_pop(L, 1);
    *given = ty != LUA_TNIL;
    if (ty == LUA_TNIL) return dict_new(L);
    if (ty == LUA_TSTRING) {
        const char *p = lua_tostring(L, -1);
        ldict *u = dict_new(L);
        lua_remove(L, -2);
        return cr_dict_load(&u->d, p, e) == 0 ? u : NULL;
    }
    ldict *u = luaL_testudata(L, -1, DICT_MT);
    if (!u) luaL_error(L, "option '%s' must be a crescent.Dict or a path", key);
    return u;
}

static void free_triples(void *t) { cr_triples_free(t); }

/* [obj, ents, rels] -> result table holding both dictionaries */
static int build_triples(lua_State *L) {
    const cr_triple_cols *t = lua_touserdata(L, 1);
    lua_createtable(L, 0, 8);
    set_int(L, "n", t->n);
    set_int(L, "n_ent", t->n_ent);
    set_int(L, "n_rel", t->n_rel);
    push_ints(L, t->s, t->n);
    lua_setfield(L, -2, "s");
    push_ints(L, t->r, t->n);
    lua_setfield(L, -2, "r");
    push_ints(L, t->o, t->n);
    lua_setfield(L, -2, "o");
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, "entities");
    lua_pushvalue(L, 3);
    lua_setfield(L, -2, "relations");
    return 1;
}

/* triples(path [, {entities = Dict|path, relations = Dict|path, grow}])
 * -> {n, n_ent, n_rel, s, r, o = Ints, entities = Dict, relations = Dict}
 * | nil, msg. "*.del" files hold integer ids (bounded by the dictionaries'
 * sizes when given); other files hold names. With dictionaries given, a
 * name they do not know is an error unless grow = true. */
static int l_triples(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    data_opts o;
    uint64_t given = read_opts(L, 2, triples_rows, &o);
    cr_err e;
    int ge, gr;
    ldict *ents = opt_dict(L, 2, "entities", &ge, &e);
    if (!ents) return cr_lfail(L, e.msg);
    ldict *rels = opt_dict(L, 2, "relations", &gr, &e);
    if (!rels) return cr_lfail(L, e.msg);
    int grow = given >> 2 & 1 ? o.grow : !(ge || gr); /* row 2: grow */
    cr_triple_cols t;
    int rc = ends_with(path, ".del") || ends_with(path, ".del.gz")
                 ? cr_triples_load_del(path, ents->d.n, rels->d.n, &t, &e)
                 : cr_triples_load(path, &ents->d, &rels->d, grow, &t, &e);
    if (rc != 0) return cr_lfail(L, e.msg);
    return build_then_free(L, build_triples, &t, free_triples, 2); /* with ents, rels */
}

/* write_triples(path, {s, r, o [, entities, relations]} [, {names = bool}])
 * names defaults to true when both dictionaries are present. */
static int l_write_triples(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    cr_ints *s = field_ints(L, 2, "s"), *r = field_ints(L, 2, "r"), *o = field_ints(L, 2, "o");
    if (r->n != s->n || o->n != s->n) return luaL_error(L, "s, r and o must have the same length");
    lua_getfield(L, 2, "entities");
    lua_getfield(L, 2, "relations");
    ldict *de = luaL_testudata(L, -2, DICT_MT), *dr = luaL_testudata(L, -1, DICT_MT);
    data_opts wo;
    int names = read_opts(L, 3, write_triples_rows, &wo) & 1 ? wo.names : de && dr;
    if (names && !(de && dr)) return luaL_error(L, "names = true needs entities and relations dictionaries");
    for (int64_t i = 0; names && i < s->n; i++)
        if (s->data[i] < 0 || s->data[i] >= de->d.n || o->data[i] < 0 || o->data[i] >= de->d.n ||
            r->data[i] < 0 || r->data[i] >= dr->d.n)
            return luaL_error(L, "triple %I has an id outside the dictionaries", (lua_Integer)i + 1);
    for (int64_t i = 0; i < s->n; i++)
        if (s->data[i] < 0 || r->data[i] < 0 || o->data[i] < 0)
            return luaL_error(L, "triple %I has a negative id", (lua_Integer)i + 1);
    cr_triple_cols t = {s->n, s->data, r->data, o->data, 0, 0};
    cr_err e;
    if (cr_triples_write(path, &t, names ? &de->d : NULL, names ? &dr->d : NULL, &e) != 0) return cr_lfail(L, e.msg);
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- text ---- */

static void free_corpus(void *c) { cr_corpus_free(c); }

/* [obj, vocab, table_size, power, sample] -> result table */
static int build_text(lua_State *L) {
    const cr_corpus *c = lua_touserdata(L, 1);
    const ldict *voc = lua_touserdata(L, 2);
    int64_t tsize = lua_tointeger(L, 3), words = voc->d.n;
    double power = lua_tonumber(L, 4), sample = lua_tonumber(L, 5);
    lua_createtable(L, 0, 12);
    lua_pushvalue(L, 2);
    lua_setfield(L, -2, "vocab");
    set_int(L, "words", words);
    set_int(L, "total", c->ntok);
    set_int(L, "raw", c->raw);
    set_int(L, "nsent", c->nsent);
    push_ints(L, c->tok, c->ntok);
    lua_setfield(L, -2, "tokens");
    push_ints(L, c->sent, c->nsent + 1);
    lua_setfield(L, -2, "sentences");
    push_ints(L, c->count, words);
    lua_setfield(L, -2, "counts");
    cr_ints *table = cr_lints_new(L, tsize);
    cr_vocab_unigram_table(c->count, words, power, table->data, tsize);
    lua_setfield(L, -2, "table");
    cr_mat *keep = cr_lmat_new(L, words, 1);
    cr_vocab_keep_prob(c->count, words, c->ntok, sample, keep->data);
    lua_setfield(L, -2, "keep");
    return 1;
}

/* text(path [, {min_count = 1, sample = 0, power = 0.75, table_size = 1e6,
 *               max_sentence = 0, vocab = Dict}])
 * -> {tokens = Ints, sentences = Ints (nsent+1 offsets into tokens), nsent,
 *     vocab = Dict (id 0 = most frequent), counts = Ints, words, total (kept
 *     tokens), raw (tokens read), table = Ints (negative sampling, count^power),
 *     keep = Matrix words x 1 (subsampling keep probability for t = sample)}
 * | nil, msg. With vocab = another corpus's Dict (held-out text), words are
 * mapped through it and unknown ones dropped; counts are this file's. */
static int l_text(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    data_opts to;
    read_opts(L, 2, text_rows, &to);
    cr_text_opts o = {to.min_count, to.max_sentence, 0};
    int64_t tsize = to.table_size;
    double sample = to.sample, power = to.power;
    ldict *voc;
    if (!lua_isnoneornil(L, 2) && lua_getfield(L, 2, "vocab") != LUA_TNIL) {
        voc = luaL_testudata(L, -1, DICT_MT);
        if (!voc) return luaL_error(L, "option 'vocab' must be a crescent.Dict");
        o.fixed_vocab = 1;
    } else {
        voc = dict_new(L);
    }
    cr_corpus c;
    cr_err e;
    if (cr_text_load(path, &o, &c, &voc->d, &e) != 0) return cr_lfail(L, e.msg);
    lua_pushinteger(L, tsize);
    lua_pushnumber(L, power);
    lua_pushnumber(L, sample);
    return build_then_free(L, build_text, &c, free_corpus, 4); /* vocab, tsize, power, sample */
}

/* write_text(path, {tokens, sentences, vocab}) -> true | nil, msg */
static int l_write_text(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    cr_ints *tok = field_ints(L, 2, "tokens"), *sent = field_ints(L, 2, "sentences");
    lua_getfield(L, 2, "vocab");
    ldict *v = luaL_testudata(L, -1, DICT_MT);
    if (!v) return luaL_error(L, "field 'vocab' must be a crescent.Dict");
    if (sent->n < 1 || sent->data[0] != 0 || sent->data[sent->n - 1] != tok->n)
        return luaL_error(L, "sentences must be offsets from 0 to #tokens");
    for (int64_t k = 0; k + 1 < sent->n; k++)
        if (sent->data[k + 1] < sent->data[k]) return luaL_error(L, "sentences must be non-decreasing");
    for (int64_t i = 0; i < tok->n; i++)
        if (tok->data[i] < 0 || tok->data[i] >= v->d.n) return luaL_error(L, "token %I not in the vocabulary", (lua_Integer)i + 1);
    cr_corpus c = {tok->n, tok->data, sent->n - 1, sent->data, tok->n, NULL};
    cr_err e;
    if (cr_text_write(path, &c, &v->d, &e) != 0) return cr_lfail(L, e.msg);
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg mmr_methods[] = {
    {"next", mmr_next}, {"header", mmr_header}, {"close", mmr_close}, {NULL, NULL},
};

static const luaL_Reg dict_methods[] = {
    {"id", d_id}, {"name", d_name}, {"names", d_names}, {"write", d_write}, {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"matrix_market", l_matrix_market},
    {"mm_open", l_mm_open},
    {"write_matrix_market", l_write_matrix_market},
    {"libsvm", l_libsvm},
    {"write_libsvm", l_write_libsvm},
    {"edges", l_edges},
    {"write_edges", l_write_edges},
    {"triples", l_triples},
    {"write_triples", l_write_triples},
    {"text", l_text},
    {"write_text", l_write_text},
    {"dict", l_dict},
    {NULL, NULL},
};

int cr_lopen_data(lua_State *L) {
    static const luaL_Reg dict_meta[] = {{"__len", d_len}, {NULL, NULL}};
    cr_lmetatable(L, DICT_MT, dict_methods, d_gc, dict_meta);
    cr_lmetatable(L, MMREADER_MT, mmr_methods, mmr_close, NULL);
    luaL_newlib(L, funcs);
    return 1;
}
