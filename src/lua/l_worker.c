/* Worker threads: sandboxed Lua states running model scripts.
 *
 * The model script returns a table M; M.init(ctx, opts) runs once after the
 * script is loaded, then the scheduler calls M.epoch / M.evaluate / any
 * M.<name>(ctx, args). Results are plain tables sent back serialized. */
#include "lua/l_worker.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lua/l_modules.h"
#include "lua/l_util.h"
#include "lua/l_worker_serial.h"
#include "ps/cr_wclient.h"

#define WTABLE_MT "crescent.WorkerTable"
#define WORKER_KEY "crescent.worker"

typedef struct lworker {
    cr_node *n;
    int lw, gw;
    cr_wclient *wc;
    lua_State *L;
    uint64_t pol_gen;
    int pol_ref;     /* registry ref of the policy table, or LUA_NOREF */
    int next_async;  /* ids for pull_async/push_async */
} lworker;

typedef struct {
    cr_shard *s;
} wtable;

static lworker *get_worker(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, WORKER_KEY);
    lworker *w = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return w;
}

/* ---------- worker-side tables ---------- */

static cr_shard *check_wtable(lua_State *L) { return ((wtable *)luaL_checkudata(L, 1, WTABLE_MT))->s; }

static void raise_err(lua_State *L, cr_err *e) { luaL_error(L, "%s", e->msg); }

/* Pending async requests live in registry table "crescent.pending":
 * [id] = {creq, matrix-or-true}. */
static int remember(lua_State *L, lworker *w, uint32_t creq, int result_idx) {
    result_idx = lua_absindex(L, result_idx);
    lua_getfield(L, LUA_REGISTRYINDEX, "crescent.pending");
    int id = ++w->next_async;
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, creq);
    lua_rawseti(L, -2, 1);
    lua_pushvalue(L, result_idx);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, id);
    lua_pop(L, 1);
    lua_pushinteger(L, id);
    return 1;
}

static int start_pull(lua_State *L, uint32_t *req) {
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    cr_ints *k = cr_lints_from_arg(L, 2);
    cr_mat *m = cr_lmat_new(L, k->n, s->def.dim);
    cr_err e;
    if (cr_wclient_pull(w->wc, s, k->data, k->n, m->data, req, &e) < 0) raise_err(L, &e);
    return lua_gettop(L); /* the matrix */
}

/* T:pull(keys) -> Matrix (rows in key order) */
static int t_pull(lua_State *L) {
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    cr_ints *k = cr_lints_from_arg(L, 2);
    cr_mat *m = cr_lmat_new(L, k->n, s->def.dim);
    cr_err e;
    if (cr_wclient_pull_sync(w->wc, s, k->data, k->n, m->data, &e) < 0) raise_err(L, &e);
    return 1;
}

/* T:pull_async(keys) -> id */
static int t_pull_async(lua_State *L) {
    uint32_t req;
    int m = start_pull(L, &req);
    return remember(L, get_worker(L), req, m);
}

/* sync: push and wait, without copying the rows */
static void start_push(lua_State *L, uint32_t *req, int sync) {
    cr_shard *s = check_wtable(L);
    lworker *w = get_worker(L);
    cr_ints *k = cr_lints_from_arg(L, 2);
    cr_mat *m = cr_lmat_test(L, 3);
    if (!m) luaL_argerror(L, 3, "crescent.Matrix of rows expected");
    if (m->rows != k->n || m->cols != s->def.dim)
        luaL_error(L, "push: %d keys need a %d x %d matrix of rows for table '%s', got %d x %d", (int)k->n,
                   (int)k->n, (int)s->def.dim, s->def.name, (int)m->rows, (int)m->cols);
    cr_err e;
    *req = 0;
    if ((sync ? cr_wclient_push_sync(w->wc, s, k->data, k->n, m->data, &e)
              : cr_wclient_push(w->wc, s, k->data, k->n, m->data, req, &e)) < 0)
        raise_err(L, &e);
}

/* T:push(keys, rows) */
static int t_push(lua_State *L) {
    uint32_t req;
    start_push(L, &req, 1);
    return 0;
}

/* T:push_async(keys, rows) -> id */
static int t_push_async(lua_State *L) {
    uint32_t req;
    start_push(L, &req, 0);
    lua_pushboolean(L, 1);
    return remember(L, get_worker(L), req, -1);
}

/* T:wait(id) -> Matrix (pull) or true (push) */
static int t_wait(lua_State *L) {
    check_wtable(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    lworker *w = get_worker(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "crescent.pending");
    if (lua_rawgeti(L, -1, id) != LUA_TTABLE)
        return luaL_error(L, "wait: unknown or already completed request id %d", (int)id);
    lua_rawgeti(L, -1, 1);
    uint32_t creq = (uint32_t)lua_tointeger(L, -1);
    lua_rawgeti(L, -2, 2);
    lua_pushnil(L);
    lua_rawseti(L, -5, id);
    cr_err e;
    if (cr_wclient_wait(w->wc, creq, &e) < 0) raise_err(L, &e);
    return 1;
}

/* T:owner(k) -> node */
static int t_owner(lua_State *L) {
    cr_shard *s = check_wtable(L);
    lua_Integer k = luaL_checkinteger(L, 2);
    if (k < 0 || k >= s->def.keys)
        return luaL_error(L, "owner: key %d out of range [0, %d) of table '%s'", (int)k, (int)s->def.keys, s->def.name);
    lua_pushinteger(L, cr_shard_owner(s, k));
    return 1;
}

/* T:local_range() -> lo, hi (this node's keys [lo, hi)) */
static int t_local_range(lua_State *L) {
    cr_shard *s = check_wtable(L);
    lua_pushinteger(L, s->lo);
    lua_pushinteger(L, s->hi);
    return 2;
}

static int t_index(lua_State *L) {
    cr_shard *s = check_wtable(L);
    const char *k = luaL_checkstring(L, 2);
    if (!strcmp(k, "keys")) lua_pushinteger(L, s->def.keys);
    else if (!strcmp(k, "dim")) lua_pushinteger(L, s->def.dim);
    else if (!strcmp(k, "name")) lua_pushstring(L, s->def.name);
    else {
        lua_getmetatable(L, 1);
        lua_getfield(L, -1, "methods");
        lua_getfield(L, -1, k);
        if (lua_isnil(L, -1)) return luaL_error(L, "table '%s' has no field '%s'", s->def.name, k);
    }
    return 1;
}

static void refresh_tables(lua_State *L, lworker *w) {
    lua_getglobal(L, "ctx");
    lua_getfield(L, -1, "tables");
    int n = cr_node_table_count(w->n);
    for (int i = 0; i < n; i++) {
        cr_shard *s = cr_node_table_at(w->n, i, NULL);
        if (lua_getfield(L, -1, s->def.name) == LUA_TNIL) {
            lua_pop(L, 1);
            wtable *t = lua_newuserdatauv(L, sizeof *t, 0);
            t->s = s;
            luaL_setmetatable(L, WTABLE_MT);
            lua_setfield(L, -2, s->def.name);
        } else
            lua_pop(L, 1);
    }
    lua_pop(L, 2);
}

/* ---------- ctx ---------- */

static int policy_load(void *arg, const char *src, size_t n, const char *chunk, const char *opts, size_t optsn) {
    lworker *w = arg;
    lua_State *L = w->L;
    int top = lua_gettop(L);
    char name[300];
    snprintf(name, sizeof name, "@%s", chunk);
    if (luaL_loadbufferx(L, src, n, name, "t") != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK) goto fail;
    if (!lua_isfunction(L, -1)) {
        lua_pushfstring(L, "%s: policy must return a constructor function(opts)", chunk);
        goto fail;
    }
    if (cr_lser_load(L, opts, optsn) < 0 || lua_pcall(L, 1, 1, 0) != LUA_OK) goto fail;
    if (!lua_istable(L, -1)) {
        lua_pushfstring(L, "%s: policy constructor must return a table", chunk);
        goto fail;
    }
    luaL_unref(L, LUA_REGISTRYINDEX, w->pol_ref);
    w->pol_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, top);
    return 0;
fail:
    lua_setfield(L, LUA_REGISTRYINDEX, "crescent.policy_error");
    lua_settop(L, top);
    return -1;
}

static int decide(void *arg, int64_t my, int64_t mn, const int64_t *clocks, int nw, cr_err *e) {
    lworker *w = arg;
    lua_State *L = w->L;
    if (w->pol_ref == LUA_NOREF) return 1;
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, w->pol_ref);
    lua_getfield(L, -1, "may_proceed");
    if (!lua_isfunction(L, -1)) {
        lua_settop(L, top);
        return cr_errf(e, "policy has no may_proceed function");
    }
    lua_pushinteger(L, my);
    lua_pushinteger(L, mn);
    lua_createtable(L, nw, 0);
    for (int i = 0; i < nw; i++) {
        lua_pushinteger(L, clocks[i]);
        lua_rawseti(L, -2, i + 1);
    }
    int rc;
    if (lua_pcall(L, 3, 1, 0) != LUA_OK) rc = cr_errf(e, "policy: %s", lua_tostring(L, -1));
    else rc = lua_toboolean(L, -1) ? 1 : 0;
    lua_settop(L, top);
    return rc;
}

/* ctx:clock(): end of one unit of work; waits as the policy says. */
static int c_clock(lua_State *L) {
    lworker *w = get_worker(L);
    cr_err e;
    if (cr_wclient_drain(w->wc, &e) < 0) raise_err(L, &e);
    if (cr_node_policy_refresh(w->n, &w->pol_gen, policy_load, w) < 0) {
        lua_getfield(L, LUA_REGISTRYINDEX, "crescent.policy_error");
        return luaL_error(L, "cannot load consistency policy: %s", lua_tostring(L, -1));
    }
    if (cr_node_clock(w->n, w->lw, decide, w, &e) < 0) raise_err(L, &e);
    lua_pushinteger(L, cr_node_worker_clock(w->n, w->lw));
    return 1;
}

static int c_barrier(lua_State *L) {
    lworker *w = get_worker(L);
    cr_err e;
    if (cr_wclient_drain(w->wc, &e) < 0 || cr_node_barrier(w->n, w->lw, &e) < 0) raise_err(L, &e);
    return 0;
}

/* A cancelled command (another worker failed, or Ctrl-C at the REPL) ends
 * at the model's next progress, clock, barrier or sleep. */
static void check_cancel(lua_State *L, lworker *w) {
    if (cr_node_cancelled(w->n, w->lw)) luaL_error(L, "%s", CR_NODE_CANCELLED_MSG);
}

static int c_progress(lua_State *L) {
    lworker *w = get_worker(L);
    cr_node_progress(w->n, luaL_checkinteger(L, 2));
    check_cancel(L, w);
    return 0;
}

static int c_sleep(lua_State *L) {
    double s = luaL_checknumber(L, 2);
    lworker *w = get_worker(L);
    while (s > 0 && !cr_node_stopping(w->n) && !cr_node_cancelled(w->n, w->lw)) {
        double step = s < 0.05 ? s : 0.05;
        struct timespec ts = {(time_t)step, (long)((step - (time_t)step) * 1e9)};
        nanosleep(&ts, NULL);
        s -= step;
    }
    check_cancel(L, w);
    return 0;
}

static int c_log(lua_State *L) {
    lworker *w = get_worker(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "[worker %d] ", w->gw);
    luaL_addvalue(&b);
    for (int i = 2; i <= lua_gettop(L); i++) {
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
        if (i < lua_gettop(L)) luaL_addchar(&b, '\t');
    }
    luaL_pushresult(&b);
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 0;
}

static void make_ctx(lua_State *L, lworker *w) {
    static const luaL_Reg fns[] = {{"clock", c_clock}, {"barrier", c_barrier}, {"progress", c_progress},
                                   {"sleep", c_sleep}, {"log", c_log},         {NULL, NULL}};
    cr_node *n = w->n;
    luaL_newlib(L, fns);
    lua_pushinteger(L, cr_node_id(n));
    lua_setfield(L, -2, "node");
    lua_pushinteger(L, cr_node_count(n));
    lua_setfield(L, -2, "nodes");
    lua_pushinteger(L, w->gw);
    lua_setfield(L, -2, "worker");
    lua_pushinteger(L, (lua_Integer)cr_node_count(n) * cr_node_workers_per_node(n));
    lua_setfield(L, -2, "workers");
    lua_pushinteger(L, w->lw);
    lua_setfield(L, -2, "local_worker");
    lua_pushinteger(L, cr_node_workers_per_node(n));
    lua_setfield(L, -2, "workers_per_node");
    lua_pushinteger(L, (lua_Integer)cr_node_seed(n));
    lua_setfield(L, -2, "seed");
    lua_newtable(L);
    lua_setfield(L, -2, "tables");
    lua_setglobal(L, "ctx");
}

/* ---------- sandbox ---------- */

static const char *prelude =
    "local load, error, tostring, setmetatable = load, error, tostring, setmetatable\n"
    "_G.load = function(chunk, name, mode, env) return load(chunk, name, 't', env) end\n"
    "for _, k in ipairs{'execute', 'exit', 'remove', 'rename', 'tmpname', 'getenv', 'setlocale'} do os[k] = nil end\n"
    "io, debug, package, require, loadfile, dofile = nil, nil, nil, nil, nil, nil\n"
    "cr = { core = { util = core.util, kernels = core.kernels, data = core.data, eval = core.eval } }\n"
    "core = nil\n"
    "setmetatable(_G, { __index = function(_, k) error(\"undefined global '\" .. tostring(k) .. \"'\", 2) end })\n";

static void hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lworker *w = get_worker(L);
    if (w && cr_node_stopping(w->n)) luaL_error(L, "job stopped");
}

static lua_State *sandbox_new(lworker *w) {
    lua_State *L = luaL_newstate();
    if (!L) return NULL;
    luaL_openlibs(L);
    lua_pushlightuserdata(L, w);
    lua_setfield(L, LUA_REGISTRYINDEX, WORKER_KEY);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "crescent.pending");
    luaopen_crescent_core(L);
    lua_setglobal(L, "core");
    static const luaL_Reg methods[] = {{"pull", t_pull}, {"push", t_push}, {"pull_async", t_pull_async},
                                       {"push_async", t_push_async}, {"wait", t_wait}, {"owner", t_owner},
                                       {"local_range", t_local_range}, {NULL, NULL}};
    luaL_newmetatable(L, WTABLE_MT);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "methods");
    lua_pushcfunction(L, t_index);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    make_ctx(L, w);
    if (luaL_loadbuffer(L, prelude, strlen(prelude), "=sandbox") != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
        fprintf(stderr, "crescent: sandbox: %s\n", lua_tostring(L, -1));
        lua_close(L);
        return NULL;
    }
    lua_sethook(L, hook, LUA_MASKCOUNT, 10000);
    return L;
}

/* ---------- command execution ---------- */

static int traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (!msg) msg = luaL_tolstring(L, 1, NULL);
    lworker *w = get_worker(L);
    lua_pushfstring(L, "worker %d (node %d): %s", w->gw, cr_node_id(w->n), msg);
    luaL_traceback(L, L, lua_tostring(L, -1), 1);
    return 1;
}

static void reply_error(lworker *w, const char *msg) { cr_node_reply(w->n, w->lw, 0, msg, strlen(msg)); }

/* Errors that did not pass through traceback(): add the worker's name. */
static void reply_error_named(lworker *w, const char *msg) {
    char buf[CR_ERR_MAX * 2];
    snprintf(buf, sizeof buf, "worker %d (node %d): %s", w->gw, cr_node_id(w->n), msg);
    reply_error(w, buf);
}

static void reply_top(lworker *w, lua_State *L) {
    char *out, err[300];
    size_t len;
    if (cr_lser_dump(L, -1, &out, &len, err, sizeof err) < 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "result %s", err);
        reply_error_named(w, msg);
        return;
    }
    cr_node_reply(w->n, w->lw, 1, out, len);
    free(out);
}

static void run_model(lworker *w, const cr_cmd *c) {
    lua_State *L = w->L;
    lua_settop(L, 0);
    lua_pushcfunction(L, traceback);
    size_t cl = strnlen(c->p2, c->n2);
    char chunk[300];
    snprintf(chunk, sizeof chunk, "@%.*s", (int)cl, c->p2);
    if (luaL_loadbufferx(L, c->p1, c->n1, chunk, "t") != LUA_OK) {
        reply_error_named(w, lua_tostring(L, -1));
        return;
    }
    if (lua_pcall(L, 0, 1, 1) != LUA_OK) {
        reply_error(w, lua_tostring(L, -1));
        return;
    }
    if (!lua_istable(L, -1)) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s: model script must return a table of functions", chunk + 1);
        reply_error_named(w, msg);
        return;
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "crescent.model");
    if (lua_getfield(L, -1, "init") == LUA_TFUNCTION) {
        lua_getglobal(L, "ctx");
        const char *opts = cl < c->n2 ? c->p2 + cl + 1 : "nil";
        size_t on = cl < c->n2 ? c->n2 - cl - 1 : 3;
        if (cr_lser_load(L, opts, on) < 0 || lua_pcall(L, 2, 0, 1) != LUA_OK) {
            reply_error(w, lua_tostring(L, -1));
            return;
        }
    }
    lua_settop(L, 0);
    lua_pushboolean(L, 1);
    reply_top(w, L);
}

static void run_call(lworker *w, const cr_cmd *c) {
    lua_State *L = w->L;
    lua_settop(L, 0);
    lua_pushcfunction(L, traceback);
    if (lua_getfield(L, LUA_REGISTRYINDEX, "crescent.model") != LUA_TTABLE) {
        reply_error_named(w, "no model loaded (call job:model first)");
        return;
    }
    char fn[128];
    snprintf(fn, sizeof fn, "%.*s", (int)c->n1, c->p1);
    if (lua_getfield(L, -1, fn) != LUA_TFUNCTION) {
        char msg[200];
        snprintf(msg, sizeof msg, "the model has no function '%s'", fn);
        reply_error_named(w, msg);
        return;
    }
    lua_getglobal(L, "ctx");
    if (cr_lser_load(L, c->p2, c->n2) < 0 || lua_pcall(L, 2, 1, 1) != LUA_OK) {
        reply_error(w, lua_tostring(L, -1));
        return;
    }
    cr_err e;
    if (cr_wclient_drain(w->wc, &e) < 0) {
        reply_error_named(w, e.msg);
        return;
    }
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
    }
    reply_top(w, L);
}

static void worker_main(cr_node *n, int lw) {
    lworker w = {.n = n, .lw = lw, .gw = cr_node_id(n) * cr_node_workers_per_node(n) + lw,
                 .pol_ref = LUA_NOREF};
    cr_err e;
    char msg[CR_ERR_MAX + 64] = "";
    w.wc = cr_wclient_new(n, lw, &e);
    if (!w.wc) snprintf(msg, sizeof msg, "%s", e.msg);
    else if (!(w.L = sandbox_new(&w))) snprintf(msg, sizeof msg, "worker %d: cannot create Lua state", w.gw);
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        if (msg[0]) reply_error(&w, msg);
        else {
            refresh_tables(w.L, &w);
            if (c.type == CR_CMD_MODEL) run_model(&w, &c);
            else run_call(&w, &c);
        }
    }
    /* sockets first: nothing may still read a borrowed matrix when Lua frees it */
    cr_wclient_destroy(&w.wc);
    if (w.L) lua_close(w.L);
}

const cr_node_hooks cr_lworker_hooks = {worker_main};
