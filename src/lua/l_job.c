/* crescent.core.ps.start and the Job userdata: a thin binding over the job
 * client (src/ps/cr_job.h). lua/crescent builds the user's Job on top.
 *
 * ps.start{nodes=, workers=, seed=, listen=, spawn=, exe=, exit_on_death=,
 *          timeout=, join_timeout=} -> J ("crescent.Job"); raises on failure
 * J:table(id, def)              create a table on every node (def: see j_table)
 * J:model(src, chunk, optsstr)  load the model script on every worker
 * J:call(fn, argsstr, onprog)   -> {results by worker+1}; onprog(n) on progress
 * J:policy(src, chunk, optsstr) switch the consistency policy (next clock boundary)
 * J:set_lr(id, lr); J:stats() -> {node tables}
 * J:set_clocks({clock per worker}, {barriers per worker}) (job:load)
 * J:get_rows(id, node, lo, count, dim, sdim [, dtype]) -> values Matrix, state Matrix
 *   (dtype "i32": the values come as an int32 Matrix)
 * J:set_rows(id, node, lo, values, state|nil [, dtype]) (dtype: the table's; a
 *   values Matrix of the other value type is refused)
 * J:manage(id, mode, replicated keys|nil, relocating keys|nil)   technique per key
 *   (docs/management.md): mode 0 classic, 1 relocate; relocating keys with mode 0 only
 * J:count(id, on)       count accesses per key to table id on every node (fresh), or stop
 * J:counts(id) -> {bytes of node 0, ...}: each node's sketch since count(id, true)
 * J:close() (also __gc/__close); J:endpoint(); J:nodes(); J:workers();
 * J:closed(); J:failed()
 *
 * A failed request raises its whole message as is (a worker's names worker,
 * script and line). While a request waits, a Ctrl-C at the REPL (which sets
 * a hook on this state) interrupts it: the wait calls into Lua every 100 ms,
 * and the command is cancelled on every node. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_file.h"
#include "lua/l_optim.h"
#include "lua/l_ps_impl.h"
#include "lua/l_util.h"
#include "lua/l_worker.h"
#include "lua/l_worker_serial.h"
#include "ps/cr_job.h"
#include "ps/cr_place.h"

#define JOB_MT "crescent.Job"

typedef struct {
    cr_job *j;
} ljob;

static cr_job *check_job(lua_State *L) {
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    if (!j->j) luaL_error(L, "the job is closed");
    return j->j;
}

/* Raise the whole message of the job's last failure (as is: no position). */
static int raise_job(lua_State *L, cr_job *j) {
    lua_pushstring(L, cr_job_error(j)[0] ? cr_job_error(j) : "job request failed");
    return lua_error(L);
}

static lua_Integer opt_int(lua_State *L, int t, const char *k, lua_Integer dflt) {
    lua_getfield(L, t, k);
    lua_Integer v = dflt;
    if (!lua_isnil(L, -1)) {
        int ok;
        v = lua_tointegerx(L, -1, &ok);
        if (!ok) luaL_error(L, "option '%s' must be an integer", k);
    }
    lua_pop(L, 1);
    return v;
}

/* The scheduler's death handler for `crescent run` (exit_on_death): the
 * other nodes are already stopped; name the dead node and end the process,
 * even while the job script or the REPL is not waiting on the job. */
static void die_on_death(const char *msg, void *arg) {
    (void)arg;
    fprintf(stderr, "crescent: %s\n", msg);
    fflush(NULL);
    cr_file_remove_pending(); /* a checkpoint being saved leaves no PATH.tmp */
    _exit(1);
}

static void tell_waiting(const char *endpoint, int nodes, void *arg) {
    (void)arg;
    fprintf(stderr, "crescent: scheduler waiting for %d node(s) on %s\n", nodes, endpoint);
}

/* ps.start{...} -> J */
int cr_ljob_start(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer nodes = opt_int(L, 1, "nodes", 1), workers = opt_int(L, 1, "workers", 1);
    cr_job_opts o = {0};
    o.nodes = nodes < 0 || nodes > 1 << 30 ? -1 : (int)nodes;
    o.workers = workers < 0 || workers > 1 << 30 ? -1 : (int)workers;
    o.seed = (uint64_t)opt_int(L, 1, "seed", 1);
    o.spawn = (int)opt_int(L, 1, "spawn", 1);
    o.local_nodes = (int)opt_int(L, 1, "local_nodes", 0);
    o.min_nodes = (int)opt_int(L, 1, "min_nodes", 0);
    o.exit_on_death = (int)opt_int(L, 1, "exit_on_death", 0);
    if (o.exit_on_death) o.on_death = die_on_death;
    o.on_wait = tell_waiting;
    o.timeout = (double)opt_int(L, 1, "timeout", 3);
    o.join_timeout = (double)opt_int(L, 1, "join_timeout", 30);
    o.hooks = &cr_lworker_hooks;
    cr_err e;
    if (cr_job_check_size(o.nodes, o.workers, &e) < 0) return luaL_error(L, "%s", e.msg);
    lua_getfield(L, 1, "listen");
    o.listen = lua_tostring(L, -1);
    lua_getfield(L, 1, "exe");
    o.exe = lua_tostring(L, -1);
    if (cr_job_curve_from_env(&o.curve, &e) < 0) return luaL_error(L, "%s", e.msg);
    ljob *j = lua_newuserdatauv(L, sizeof *j, 0);
    j->j = NULL;
    luaL_setmetatable(L, JOB_MT);
    j->j = cr_job_start(&o, &e);
    if (!j->j) return luaL_error(L, "%s", e.msg);
    return 1;
}

/* ---------- callbacks of a waiting request ---------- */

typedef struct lwait {
    lua_State *L;
    int results; /* stack index of the results table, 0: none */
    int prog;    /* stack index of the progress function, 0: none */
} lwait;

static int noop(lua_State *L) {
    (void)L;
    return 0;
}

/* Run the function on top of the stack (with nargs arguments below it)
 * protected; on error its message goes to e and -1 is returned. */
static int pcall_into(lua_State *L, int nargs, cr_err *e) {
    if (lua_pcall(L, nargs, 0, 0) == LUA_OK) return 0;
    const char *m = lua_tostring(L, -1);
    cr_errf(e, "%s", m ? m : "interrupted");
    lua_pop(L, 1);
    return -1;
}

/* A call into Lua gives a pending REPL hook (Ctrl-C) its chance to fire. */
static int on_tick(void *arg, cr_err *e) {
    lwait *w = arg;
    lua_pushcfunction(w->L, noop);
    return pcall_into(w->L, 0, e);
}

static int on_progress(void *arg, int64_t items, cr_err *e) {
    lwait *w = arg;
    if (!w->prog || !lua_isfunction(w->L, w->prog)) return on_tick(arg, e);
    lua_pushvalue(w->L, w->prog);
    lua_pushinteger(w->L, items);
    return pcall_into(w->L, 1, e);
}

/* A REPLY: deserialized into the results table, by worker+1 (or appended
 * for a node's answer). */
static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    lwait *w = arg;
    if (!w->results) return 0;
    if (cr_lser_load(w->L, n ? data : "nil", n ? n : 3) < 0) {
        cr_errf(e, "bad reply from worker %d: %s", worker, lua_tostring(w->L, -1));
        lua_pop(w->L, 1);
        return -1;
    }
    lua_Integer at = worker >= 0 ? worker + 1 : (lua_Integer)luaL_len(w->L, w->results) + 1;
    lua_rawseti(w->L, w->results, at);
    return 0;
}

/* Shown while the other workers still have time to stop (defect: a worker's
 * error hidden behind a worker that never reaches a clock). */
static void on_first_error(void *arg, const char *msg) {
    (void)arg;
    fprintf(stderr, "crescent: %s\n(waiting for the other workers to stop)\n", msg);
    fflush(stderr);
}

static cr_job_cb callbacks(lwait *w) {
    return (cr_job_cb){.result = on_result, .progress = on_progress, .tick = on_tick,
                       .first_error = on_first_error, .arg = w};
}

/* ---------- requests ---------- */

static double num_field(lua_State *L, int t, const char *k, double dflt) {
    lua_getfield(L, t, k);
    double v = luaL_optnumber(L, -1, dflt);
    lua_pop(L, 1);
    return v;
}

/* [-0, +0] Optional dtype name ("f32" default, "i32") at idx -> CR_LDT_*. */
static int opt_dtype(lua_State *L, int idx) {
    static const char *const names[] = {"f32", "i32", NULL};
    return luaL_checkoption(L, idx, "f32", names) == 1 ? CR_LDT_I32 : CR_LDT_F32;
}

/* J:table(id, {name=, keys=, dim=, init=kind, a=, b=, seed=, compress=,
 *              optimizer={name=, the rule's parameters} (lua/l_optim.h; what cr.optim.NAME{} makes),
 *              dtype="f32"|"i32", placement=Placement (core.table.placement; absent: range),
 *              filter_key_cache=0|1, filter_zeros=0|1, filter_sigmod=x, filter_key_cache_bytes=n,
 *              filter_half=0|1}) */
static int j_table(lua_State *L) {
    cr_job *j = check_job(L);
    int id = (int)luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    cr_table_def d;
    memset(&d, 0, sizeof d);
    lua_getfield(L, 3, "name");
    snprintf(d.name, sizeof d.name, "%s", luaL_checkstring(L, -1));
    lua_pop(L, 1);
    d.keys = (int64_t)opt_int(L, 3, "keys", 0);
    d.dim = (int32_t)opt_int(L, 3, "dim", 0);
    d.init = (int32_t)opt_int(L, 3, "init", 0);
    d.init_a = num_field(L, 3, "a", 0);
    d.init_b = num_field(L, 3, "b", 0);
    d.seed = (uint64_t)opt_int(L, 3, "seed", 1);
    d.compress = (int32_t)opt_int(L, 3, "compress", 0);
    d.filters.key_cache = (int32_t)opt_int(L, 3, "filter_key_cache", 0);
    d.filters.zeros = (int32_t)opt_int(L, 3, "filter_zeros", 0);
    d.filters.sigmod = num_field(L, 3, "filter_sigmod", 0);
    d.filters.key_cache_bytes = (int64_t)opt_int(L, 3, "filter_key_cache_bytes", 0);
    d.filters.half = (int32_t)opt_int(L, 3, "filter_half", 0);
    lua_getfield(L, 3, "dtype");
    d.dtype = opt_dtype(L, -1) == CR_LDT_I32 ? CR_DTYPE_I32 : CR_DTYPE_F32;
    lua_pop(L, 1);
    lua_getfield(L, 3, "optimizer");
    cr_loptim_read(L, -1, d.name, &d.optim);
    lua_pop(L, 1);
    cr_err e;
    const cr_place *pl = NULL;
    if (lua_getfield(L, 3, "placement") != LUA_TNIL) pl = cr_lplace_check(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, 3, "sparse");
    d.sparse = lua_toboolean(L, -1);
    lua_getfield(L, 3, "sparse_placement");
    int sparse_range = lua_isstring(L, -1) && !strcmp(lua_tostring(L, -1), "range");
    lua_pop(L, 2);
    if (pl && (pl->keys != d.keys || pl->nodes != cr_job_nodes(j)))
        return luaL_error(L, "table '%s': its placement is for %d keys on %d nodes", d.name, (int)pl->keys, pl->nodes);
    d.placement = d.sparse ? (sparse_range ? CR_PLACE_RANGE : CR_PLACE_HASH) : pl ? pl->kind : CR_PLACE_RANGE;
    if (d.sparse) d.keys = 0;
    if (cr_table_def_check(&d, &e) < 0) return luaL_error(L, "%s", e.msg);
    uint32_t *owner = NULL;
    if (d.placement == CR_PLACE_FILE) {
        owner = cr_xmalloc((size_t)d.keys * sizeof *owner);
        for (int64_t k = 0; k < d.keys; k++) owner[k] = (uint32_t)cr_place_owner(pl, k);
    }
    int rc = cr_job_table_placed(j, id, &d, owner, &e);
    free(owner);
    if (rc < 0) return raise_job(L, j);
    return 0;
}

static int j_model(lua_State *L) {
    cr_job *j = check_job(L);
    size_t sn, cn, on;
    const char *src = luaL_checklstring(L, 2, &sn), *chunk = luaL_checklstring(L, 3, &cn),
               *opts = luaL_optlstring(L, 4, "nil", &on);
    lua_settop(L, 4);
    lwait w = {.L = L};
    cr_job_cb cb = callbacks(&w);
    cr_err e;
    if (cr_job_model(j, src, sn, chunk, cn, opts, on, &cb, &e) < 0) return raise_job(L, j);
    return 0;
}

static int j_policy(lua_State *L) {
    cr_job *j = check_job(L);
    size_t sn, cn, on;
    const char *src = luaL_checklstring(L, 2, &sn), *chunk = luaL_checklstring(L, 3, &cn),
               *opts = luaL_optlstring(L, 4, "nil", &on);
    cr_err e;
    if (cr_job_policy(j, src, sn, chunk, cn, opts, on, &e) < 0) return raise_job(L, j);
    return 0;
}

/* J:call(fn, argsstr, onprog) -> {results by worker+1} */
static int j_call(lua_State *L) {
    cr_job *j = check_job(L);
    size_t fn, an;
    const char *f = luaL_checklstring(L, 2, &fn), *a = luaL_optlstring(L, 3, "nil", &an);
    lua_settop(L, 4);
    lua_newtable(L); /* 5: results */
    lwait w = {.L = L, .results = 5, .prog = lua_isfunction(L, 4) ? 4 : 0};
    cr_job_cb cb = callbacks(&w);
    cr_err e;
    if (cr_job_call(j, f, fn, a, an, &cb, &e) < 0) return raise_job(L, j);
    lua_settop(L, 5);
    return 1;
}

static int j_set_lr(lua_State *L) {
    cr_job *j = check_job(L);
    cr_err e;
    if (cr_job_set_lr(j, (int)luaL_checkinteger(L, 2), luaL_checknumber(L, 3), &e) < 0) return raise_job(L, j);
    return 0;
}

/* Fill v[0..W) from the integer list at idx (W entries). */
static void int_list(lua_State *L, int idx, int64_t *v, int W) {
    luaL_checktype(L, idx, LUA_TTABLE);
    if (luaL_len(L, idx) != W) luaL_error(L, "bad argument #%d to 'set_clocks' (%d integers expected)", idx - 1, W);
    for (int i = 0; i < W; i++) {
        int ok;
        lua_rawgeti(L, idx, i + 1);
        v[i] = (int64_t)lua_tointegerx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok || v[i] < 0)
            luaL_error(L, "bad argument #%d to 'set_clocks' (entry %d: non-negative integer expected)", idx - 1, i + 1);
    }
}

/* J:set_clocks({clock per worker}, {barrier count per worker}): between
 * commands only (job:load); sets the clocks everywhere, also backwards. */
static int j_set_clocks(lua_State *L) {
    cr_job *j = check_job(L);
    int W = cr_job_nodes(j) * cr_job_workers(j);
    int64_t *v = lua_newuserdatauv(L, 2 * (size_t)W * sizeof *v + 1, 0); /* freed by the GC, even on error */
    int_list(L, 2, v, W);
    int_list(L, 3, v + W, W);
    cr_err e;
    if (cr_job_set_clocks(j, v, v + W, &e) < 0) return raise_job(L, j);
    return 0;
}

static int j_stats(lua_State *L) {
    cr_job *j = check_job(L);
    lua_settop(L, 1);
    lua_newtable(L); /* 2: one table per node */
    lwait w = {.L = L, .results = 2};
    cr_job_cb cb = callbacks(&w);
    cr_err e;
    if (cr_job_stats(j, &cb, &e) < 0) return raise_job(L, j);
    lua_settop(L, 2);
    return 1;
}

/* J:manage(id, mode, replicated Ints|nil, relocating Ints|nil): mode 0
 * classic, 1 relocate; relocating keys (mode 0 only): those relocate, the
 * other keys not replicated are classic */
static int j_manage(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2), mode = (int)luaL_checkinteger(L, 3);
    lua_settop(L, 5);
    cr_ints *k = lua_isnil(L, 4) ? NULL : cr_lints_from_arg(L, 4);
    cr_ints *r = lua_isnil(L, 5) ? NULL : cr_lints_from_arg(L, 5);
    if (r && mode != 0) return luaL_error(L, "manage: relocating keys are given with mode 0 (classic for the rest), not %d", mode);
    cr_err e;
    if (cr_job_manage_keys(j, table, mode, k ? k->data : NULL, k ? k->n : 0, r ? r->data : NULL, r ? r->n : 0, &e) < 0)
        return raise_job(L, j);
    return 0;
}

/* J:count(id, on): count accesses per key to table id (fresh sketches), or stop */
static int j_count(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TBOOLEAN);
    cr_err e;
    if (cr_job_count(j, table, lua_toboolean(L, 3), &e) < 0) return raise_job(L, j);
    return 0;
}

static int put_counts(void *arg, int node, const void *bytes, size_t n, cr_err *e) {
    (void)e;
    lua_State *L = arg;
    lua_pushlstring(L, bytes, n);
    lua_rawseti(L, -2, node + 1);
    return 0;
}

/* J:counts(id) -> {sketch bytes of node 0, node 1, ...} (core.sketch.read) */
static int j_counts(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2);
    lua_settop(L, 2);
    lua_createtable(L, cr_job_nodes(j), 0);
    cr_err e;
    if (cr_job_counts(j, table, put_counts, L, &e) < 0) return raise_job(L, j);
    lua_settop(L, 3);
    return 1;
}

/* J:get_rows(id, node, lo, count, dim, sdim) -> values, state */
static int j_get_rows(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2), node = (int)luaL_checkinteger(L, 3);
    lua_Integer lo = luaL_checkinteger(L, 4), count = luaL_checkinteger(L, 5);
    int dtype = opt_dtype(L, 8);
    lua_settop(L, 7);
    cr_mat *v = cr_lmat_new_typed(L, count, luaL_checkinteger(L, 6), dtype);
    cr_mat *st = cr_lmat_new(L, count, luaL_checkinteger(L, 7));
    cr_err e;
    if (cr_job_get_rows(j, table, node, lo, count, (int32_t)v->cols, (int32_t)st->cols, v->data, st->data, &e) < 0)
        return raise_job(L, j);
    return 2;
}

/* J:set_rows(id, node, lo, values, state|nil) */
static int j_set_rows(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2), node = (int)luaL_checkinteger(L, 3);
    lua_Integer lo = luaL_checkinteger(L, 4);
    cr_mat *v = cr_lmat_check(L, 5), *st = cr_lmat_test(L, 6);
    int dtype = opt_dtype(L, 7);
    if (cr_lmat_dtype(L, 5) != dtype)
        return luaL_error(L, "set_rows: the table holds %s values, got an %s matrix", dtype ? "i32" : "f32",
                          dtype ? "f32" : "i32");
    if (st && st->rows != v->rows && st->rows * st->cols != 0)
        return luaL_error(L, "bad argument #5 to 'set_rows' (%lld state rows for %lld value rows)",
                          (long long)st->rows, (long long)v->rows);
    int has_state = st && st->rows * st->cols != 0;
    cr_err e;
    if (cr_job_set_rows(j, table, node, lo, v->rows, (int32_t)v->cols, has_state ? (int32_t)st->cols : 0, v->data,
                        has_state ? st->data : NULL, &e) < 0)
        return raise_job(L, j);
    return 0;
}

/* J:get_keys(id, node, keys, dim, sdim [, dtype]) -> values, state (a sparse table) */
static int j_get_keys(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2), node = (int)luaL_checkinteger(L, 3);
    cr_ints *k = cr_lints_check(L, 4);
    int dtype = opt_dtype(L, 7);
    lua_settop(L, 6);
    cr_mat *v = cr_lmat_new_typed(L, k->n, luaL_checkinteger(L, 5), dtype);
    cr_mat *st = cr_lmat_new(L, k->n, luaL_checkinteger(L, 6));
    cr_err e;
    if (cr_job_get_keys(j, table, node, k->data, k->n, (int32_t)v->cols, (int32_t)st->cols, v->data, st->data, &e) < 0)
        return raise_job(L, j);
    return 2;
}

/* J:set_keys(id, node, keys, values, state|nil [, dtype]) (a sparse table) */
static int j_set_keys(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2), node = (int)luaL_checkinteger(L, 3);
    cr_ints *k = cr_lints_check(L, 4);
    cr_mat *v = cr_lmat_check(L, 5), *st = cr_lmat_test(L, 6);
    int dtype = opt_dtype(L, 7);
    if (cr_lmat_dtype(L, 5) != dtype)
        return luaL_error(L, "set_keys: the table holds %s values, got an %s matrix", dtype ? "i32" : "f32",
                          dtype ? "f32" : "i32");
    if (v->rows != k->n || (st && st->rows != v->rows && st->rows * st->cols != 0))
        return luaL_error(L, "set_keys: %d keys, %d value rows", (int)k->n, (int)v->rows);
    int has_state = st && st->rows * st->cols != 0;
    cr_err e;
    if (cr_job_set_keys(j, table, node, k->data, k->n, (int32_t)v->cols, has_state ? (int32_t)st->cols : 0, v->data,
                        has_state ? st->data : NULL, &e) < 0)
        return raise_job(L, j);
    return 0;
}

/* J:dump(id, node, cursor, max, dim, sdim [, dtype]) -> keys, values, state, next cursor (-1: done):
 * a part of the rows a sparse table stores on node */
static int j_dump(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2), node = (int)luaL_checkinteger(L, 3);
    lua_Integer cur = luaL_checkinteger(L, 4), max = luaL_checkinteger(L, 5);
    int32_t dim = (int32_t)luaL_checkinteger(L, 6), sdim = (int32_t)luaL_checkinteger(L, 7);
    int dtype = opt_dtype(L, 8);
    luaL_argcheck(L, cur >= 0 && max > 0 && max <= (1 << 24), 4, "bad cursor or count");
    int64_t *keys = cr_xmalloc((size_t)max * sizeof *keys);
    float *v = cr_xmalloc((size_t)max * (size_t)dim * sizeof *v + 1), *st = cr_xmalloc((size_t)max * (size_t)sdim * sizeof *st + 1);
    uint64_t c = (uint64_t)cur;
    int64_t got = 0;
    cr_err e;
    int rc = cr_job_dump(j, table, node, &c, max, dim, sdim, keys, v, st, &got, &e);
    if (rc == 0) {
        cr_ints *k = cr_lints_new(L, got);
        memcpy(k->data, keys, (size_t)got * sizeof *keys);
        cr_mat *mv = cr_lmat_new_typed(L, got, dim, dtype), *ms = cr_lmat_new(L, got, sdim);
        memcpy(mv->data, v, (size_t)got * (size_t)dim * sizeof *v);
        memcpy(ms->data, st, (size_t)got * (size_t)sdim * sizeof *st);
        lua_pushinteger(L, c == CR_SHARD_DUMP_END ? -1 : (lua_Integer)c);
    }
    free(keys);
    free(v);
    free(st);
    return rc < 0 ? raise_job(L, j) : 4;
}

/* [-0, +0] Raise msg as is (no position: lua/crescent/job.lua adds the
 * script's line). */
static int raise_plain(lua_State *L, const char *fmt, ...) {
    char buf[CR_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lua_pushstring(L, buf);
    return lua_error(L);
}

/* Weight i (0-based) of the weights at idx: a Matrix, an Ints or a table. */
static double weight_at(lua_State *L, int idx, const cr_mat *m, const cr_ints *k, int64_t i) {
    if (m) return m->data[i];
    if (k) return (double)k->data[i];
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    int ok;
    double v = lua_tonumberx(L, -1, &ok);
    if (!ok) raise_plain(L, "weights[%lld] is not a number (got %s)", (long long)i + 1, luaL_typename(L, -1));
    lua_pop(L, 1);
    return v;
}

/* [-0, +1] The weights at idx (a Matrix of any shape, an Ints, or a table
 * of numbers) as keys doubles in a new userdata, checked: as many as keys,
 * finite, >= 0, positive sum. Returns the array. */
static double *weights_arg(lua_State *L, int idx, int64_t keys) {
    cr_mat *m = cr_lmat_test(L, idx);
    cr_ints *k = m ? NULL : cr_lints_test(L, idx);
    if (!m && !k && !lua_istable(L, idx))
        raise_plain(L, "weights must be a Matrix, an Ints or a table of numbers (got %s)", luaL_typename(L, idx));
    int64_t n = m ? m->rows * m->cols : k ? k->n : (int64_t)luaL_len(L, idx);
    if (n != keys) raise_plain(L, "weights has %lld entries for the %lld keys of the table", (long long)n, (long long)keys);
    if (keys > CR_PROTO_MAX_WEIGHTS)
        raise_plain(L, "the table has %lld keys: weighted distributions are limited to %lld keys", (long long)keys,
                    (long long)CR_PROTO_MAX_WEIGHTS);
    double *w = lua_newuserdatauv(L, (size_t)keys * sizeof *w, 0), sum = 0;
    for (int64_t i = 0; i < keys; i++) {
        double v = weight_at(L, idx, m, k, i);
        if (v != v) raise_plain(L, "weights[%lld] is not a number (NaN)", (long long)i + 1);
        if (isinf(v)) raise_plain(L, "weights[%lld] is infinite", (long long)i + 1);
        if (v < 0) raise_plain(L, "weights[%lld] is negative (%g)", (long long)i + 1, v);
        w[i] = v;
        sum += v;
    }
    if (!(sum > 0)) raise_plain(L, "all weights are zero");
    if (isinf(sum)) raise_plain(L, "the sum of the weights is not finite");
    return w;
}

/* J:distribution(table_id, name, keys, weights|nil): errors raised without
 * a position (the Lua layer adds the script's). */
static int j_distribution(lua_State *L) {
    cr_job *j = check_job(L);
    int table = (int)luaL_checkinteger(L, 2);
    const char *name = luaL_checkstring(L, 3);
    int64_t keys = (int64_t)luaL_checkinteger(L, 4);
    double *w = lua_isnoneornil(L, 5) ? NULL : weights_arg(L, 5, keys);
    cr_err e;
    if (cr_job_distribution(j, table, name, w, keys, &e) < 0) return raise_job(L, j);
    return 0;
}

/* J:sampling(label, {{name=, level=, pool=, reuse=, postpone=}, ...}):
 * entry 1 is the default (name ""). Checked by the Lua layer. */
static int j_sampling(lua_State *L) {
    cr_job *j = check_job(L);
    const char *label = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 3);
    if (n < 1 || n > CR_PROTO_MAX_SCHEME) return raise_plain(L, "sampling: %d entries (1 to %d)", (int)n, CR_PROTO_MAX_SCHEME);
    cr_sampling_entry *v = lua_newuserdatauv(L, (size_t)n * sizeof *v, 0);
    memset(v, 0, (size_t)n * sizeof *v);
    for (lua_Integer i = 0; i < n; i++) {
        lua_rawgeti(L, 3, i + 1);
        luaL_checktype(L, -1, LUA_TTABLE);
        lua_getfield(L, -1, "name");
        snprintf(v[i].name, sizeof v[i].name, "%s", luaL_optstring(L, -1, ""));
        lua_pop(L, 1);
        v[i].level = opt_int(L, lua_gettop(L), "level", 1);
        v[i].pool = opt_int(L, lua_gettop(L), "pool", CR_SAMPLING_POOL_DEFAULT);
        v[i].reuse = opt_int(L, lua_gettop(L), "reuse", CR_SAMPLING_REUSE_DEFAULT);
        v[i].postpone = opt_int(L, lua_gettop(L), "postpone", 0);
        lua_pop(L, 1);
    }
    cr_err e;
    if (cr_job_sampling(j, label, v, (int)n, &e) < 0) return raise_job(L, j);
    return 0;
}

/* J:close([rejoin]): rejoin = true asks the nodes a launcher started to
 * join the job's next run (crescent run --restarts). */
static int j_close(lua_State *L) {
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    if (lua_toboolean(L, 2)) cr_job_close_rejoin(&j->j);
    else cr_job_close(&j->j);
    return 0;
}

static int j_endpoint(lua_State *L) {
    lua_pushstring(L, cr_job_endpoint(check_job(L)));
    return 1;
}

static int j_nodes(lua_State *L) {
    lua_pushinteger(L, cr_job_nodes(check_job(L)));
    return 1;
}

static int j_workers(lua_State *L) {
    lua_pushinteger(L, cr_job_workers(check_job(L)));
    return 1;
}

/* J:failed() -> true once the job cannot go on (a node died, or it was ended) */
static int j_failed(lua_State *L) {
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    lua_pushboolean(L, j->j && cr_job_failed(j->j));
    return 1;
}

static int j_closed(lua_State *L) {
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    lua_pushboolean(L, j->j == NULL);
    return 1;
}

void cr_ljob_register(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"table", j_table},       {"model", j_model},           {"call", j_call},     {"policy", j_policy},
        {"set_lr", j_set_lr},     {"set_clocks", j_set_clocks}, {"stats", j_stats},   {"get_rows", j_get_rows},
        {"set_rows", j_set_rows}, {"get_keys", j_get_keys}, {"set_keys", j_set_keys}, {"dump", j_dump}, {"manage", j_manage}, {"count", j_count}, {"counts", j_counts}, {"close", j_close},           {"endpoint", j_endpoint}, {"nodes", j_nodes},
        {"workers", j_workers},   {"closed", j_closed},         {"failed", j_failed}, {"distribution", j_distribution},
        {"sampling", j_sampling}, {NULL, NULL}};
    cr_lmetatable(L, JOB_MT, methods, j_close, NULL);
}
