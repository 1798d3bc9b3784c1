/* crescent.core.ps: the scheduler side of a job (C half; lua/crescent/ps.lua
 * builds the user API on top).
 *
 * ps.start{nodes=, workers=, seed=, listen=, spawn=, exit_on_death=, timeout=}
 *   -> J ("crescent.Job"); raises on failure (nothing left running).
 * J:table(id, def)              create a table on every node (def: see l_table_def)
 * J:model(src, chunk, optsstr)  load the model script on every worker
 * J:call(fn, argsstr, onprog)   -> {results by worker+1}; onprog(n) on progress
 * J:policy(src, chunk, optsstr) switch the consistency policy (next clock boundary)
 * J:set_lr(id, lr); J:stats() -> {node tables}
 * J:set_clocks({clock per worker}, {barriers per worker}) (job:load)
 * J:get_rows(id, node, lo, count, dim, sdim) -> values Matrix, state Matrix
 * J:set_rows(id, node, lo, values, state|nil)
 * J:close() (also __gc/__close); J:endpoint(); J:nodes(); J:workers()
 * ps.serialize(v) -> string; ps.deserialize(s) -> v
 * ps.state_dim(optimizer, dim) -> floats of optimizer state per row
 * ps.overrides() -> the command line's overrides table (or nil) */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_progress.h"
#include "lua/l_modules.h"
#include "lua/l_util.h"
#include "lua/l_worker.h"
#include "lua/l_worker_serial.h"
#include "optim/cr_optim.h"
#include "ps/cr_ckpt.h"
#include "ps/cr_sched.h"
#include "ps/cr_table.h"

#define JOB_MT "crescent.Job"

typedef struct {
    cr_sched *s;
    int owed; /* answers of an interrupted command still to come */
} ljob;

static int is_answer(int type) {
    return type == CR_M_REPLY || type == CR_M_ERROR || type == CR_M_ACK || type == CR_M_ROWS;
}

/* Ask every node to end the running command: each worker stops at its next
 * clock, barrier, progress or sleep and answers with an error. Best effort:
 * a node that cannot be reached is reported by cr_sched_recv anyway. */
static void cancel_all(cr_sched *s) {
    cr_ctl h = {.type = CR_M_CANCEL};
    cr_err e;
    (void)cr_sched_send(s, -1, &h, NULL, 0, NULL, 0, &e);
}

/* A command whose wait was cut short (Ctrl-C at the REPL raises from the
 * progress callback) leaves answers on the way: cancel the command, so that
 * the workers stop instead of finishing it (an epoch may take hours), and
 * take its answers before the next command, so that they are not counted
 * as its own. */
static void settle(lua_State *L, ljob *j) {
    if (j->owed > 0) cancel_all(j->s);
    while (j->owed > 0) {
        cr_parts p;
        cr_err e;
        int rc = cr_sched_recv(j->s, &p, -1, &e);
        if (rc < 0) {
            j->owed = 0;
            luaL_error(L, "%s", e.msg);
        }
        if (rc == 0) continue;
        cr_ctl h;
        const void *p1, *p2;
        size_t n1, n2;
        if (cr_ctl_parse(&p, 0, &h, &p1, &n1, &p2, &n2) == 0 && is_answer(h.type)) j->owed--;
        cr_parts_close(&p);
    }
}

static cr_sched *check_job(lua_State *L) {
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    if (!j->s) luaL_error(L, "the job is closed");
    settle(L, j);
    return j->s;
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
    _exit(1);
}

static void tell_waiting(const char *endpoint, int nodes, void *arg) {
    (void)arg;
    fprintf(stderr, "crescent: scheduler waiting for %d node(s) on %s\n", nodes, endpoint);
}

static int l_start(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    cr_sched_opts o = {0};
    o.nodes = (int)opt_int(L, 1, "nodes", 1);
    o.workers = (int)opt_int(L, 1, "workers", 1);
    o.seed = (uint64_t)opt_int(L, 1, "seed", 1);
    o.spawn = (int)opt_int(L, 1, "spawn", 1);
    o.exit_on_death = (int)opt_int(L, 1, "exit_on_death", 0);
    if (o.exit_on_death) o.on_death = die_on_death;
    o.on_wait = tell_waiting;
    o.timeout = (double)opt_int(L, 1, "timeout", 3);
    o.join_timeout = (double)opt_int(L, 1, "join_timeout", 30);
    o.hooks = &cr_lworker_hooks;
    if (o.nodes < 1 || o.nodes > 1024) return luaL_error(L, "nodes must be in [1, 1024], got %d", o.nodes);
    if (o.workers < 0 || o.workers > 256) return luaL_error(L, "workers must be in [0, 256], got %d", o.workers);
    lua_getfield(L, 1, "listen");
    o.listen = lua_tostring(L, -1);
    lua_getfield(L, 1, "exe");
    o.exe = lua_tostring(L, -1);
    cr_err e;
    if (cr_curve_from_env(&o.curve, &e) < 0) return luaL_error(L, "%s", e.msg);
    ljob *j = lua_newuserdatauv(L, sizeof *j, 0);
    j->s = NULL;
    j->owed = 0;
    luaL_setmetatable(L, JOB_MT);
    j->s = cr_sched_start(&o, &e);
    if (!j->s) return luaL_error(L, "%s", e.msg);
    return 1;
}

/* Wait for `want` answers; REPLY payloads are deserialized into the table at
 * `results` (by worker+1, or appended when worker < 0). PROGRESS calls the
 * function at `prog` (if any). A node's death raises at once; other errors
 * (a worker's) cancel the command on every node and raise with the first
 * message once every answer is in, so that none is left to confuse the next
 * command. The
 * other workers are not blocked meanwhile: a worker that has answered no
 * longer counts for clocks and barriers. */
static void collect(lua_State *L, cr_sched *s, int want, int results, int prog) {
    char msg[CR_ERR_MAX * 4];
    int got = 0, failed = 0;
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    j->owed = want;
    while (got < want) {
        cr_parts p;
        cr_err e;
        int rc = cr_sched_recv(s, &p, -1, &e);
        if (rc < 0) luaL_error(L, "%s", e.msg);
        if (rc == 0) continue;
        cr_ctl h;
        const void *p1, *p2;
        size_t n1, n2;
        cr_ctl_parse(&p, 0, &h, &p1, &n1, &p2, &n2);
        if (h.type == CR_M_PROGRESS) {
            cr_parts_close(&p);
            if (prog && lua_isfunction(L, prog)) {
                lua_pushvalue(L, prog);
                lua_pushinteger(L, h.a);
                lua_call(L, 1, 0);
            }
            continue;
        }
        got++;
        if (is_answer(h.type)) j->owed--;
        if (h.type == CR_M_ERROR) {
            if (!failed) {
                snprintf(msg, sizeof msg, "%.*s", (int)n1, p1 ? (const char *)p1 : "");
                /* the other workers stop at their next clock/progress instead of
                 * finishing the command; their "cancelled" answers are not shown */
                if (got < want) cancel_all(s);
            }
            cr_parts_close(&p);
            failed = 1;
            continue;
        }
        if (failed) {
            cr_parts_close(&p);
        } else if (h.type == CR_M_REPLY && results) {
            int ok = cr_lser_load(L, p1 ? p1 : "nil", p1 ? n1 : 3) == 0;
            cr_parts_close(&p);
            if (!ok) luaL_error(L, "bad reply from worker %d: %s", (int)h.worker, lua_tostring(L, -1));
            if (h.worker >= 0) lua_rawseti(L, results, h.worker + 1);
            else lua_rawseti(L, results, (lua_Integer)luaL_len(L, results) + 1);
        } else if (h.type == CR_M_ROWS && results) {
            /* values/state copied into the matrices at results+0 / results+1 */
            cr_mat *v = cr_lmat_check(L, results), *st = cr_lmat_check(L, results + 1);
            size_t vb = (size_t)(v->rows * v->cols) * sizeof(float), sb = (size_t)(st->rows * st->cols) * sizeof(float);
            int ok = n1 == vb && n2 == sb;
            if (ok) {
                memcpy(v->data, p1, vb);
                if (sb) memcpy(st->data, p2, sb);
            }
            cr_parts_close(&p);
            if (!ok) luaL_error(L, "rows reply of the wrong size");
        } else
            cr_parts_close(&p);
    }
    if (failed) {
        lua_pushstring(L, msg);
        lua_error(L); /* raw message: it already names worker, script and line */
    }
}

static void send_or_raise(lua_State *L, cr_sched *s, int node, const cr_ctl *h, const void *p1, size_t n1,
                          const void *p2, size_t n2) {
    cr_err e;
    if (cr_sched_send(s, node, h, p1, n1, p2, n2, &e) < 0) luaL_error(L, "%s", e.msg);
}

static double num_field(lua_State *L, int t, const char *k, double dflt) {
    lua_getfield(L, t, k);
    double v = luaL_optnumber(L, -1, dflt);
    lua_pop(L, 1);
    return v;
}

/* J:table(id, {name=, keys=, dim=, init=kind, a=, b=, optimizer=, lr=, eps=, init_acc=, seed=, compress=}) */
static int j_table(lua_State *L) {
    cr_sched *s = check_job(L);
    int id = (int)luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    cr_table_def d;
    memset(&d, 0, sizeof d);
    lua_getfield(L, 3, "name");
    const char *name = luaL_checkstring(L, -1);
    snprintf(d.name, sizeof d.name, "%s", name);
    lua_pop(L, 1);
    d.keys = (int64_t)opt_int(L, 3, "keys", 0);
    d.dim = (int32_t)opt_int(L, 3, "dim", 0);
    d.init = (int32_t)opt_int(L, 3, "init", 0);
    d.init_a = num_field(L, 3, "a", 0);
    d.init_b = num_field(L, 3, "b", 0);
    d.seed = (uint64_t)opt_int(L, 3, "seed", 1);
    d.compress = (int32_t)opt_int(L, 3, "compress", 0);
    lua_getfield(L, 3, "optimizer");
    cr_err e;
    if (cr_optim_parse(&d.optim, luaL_optstring(L, -1, "sgd"), &e) < 0) return luaL_error(L, "%s", e.msg);
    lua_pop(L, 1);
    d.optim.lr = (float)num_field(L, 3, "lr", 0.01);
    d.optim.eps = (float)num_field(L, 3, "eps", 1e-8);
    d.optim.init = (float)num_field(L, 3, "init_acc", 0);
    if (cr_table_def_check(&d, &e) < 0) return luaL_error(L, "%s", e.msg);
    cr_ctl h = {.type = CR_M_TABLE, .table = id};
    send_or_raise(L, s, -1, &h, &d, sizeof d, NULL, 0);
    collect(L, s, cr_sched_nodes(s), 0, 0);
    return 0;
}

static void send_with_chunk(lua_State *L, cr_sched *s, int type) {
    size_t sn, cn, on;
    const char *src = luaL_checklstring(L, 2, &sn), *chunk = luaL_checklstring(L, 3, &cn),
               *opts = luaL_optlstring(L, 4, "nil", &on);
    char *p2 = malloc(cn + on + 1);
    memcpy(p2, chunk, cn);
    p2[cn] = '\0';
    memcpy(p2 + cn + 1, opts, on);
    cr_ctl h = {.type = type};
    cr_err e;
    int rc = cr_sched_send(s, -1, &h, src, sn, p2, cn + 1 + on, &e);
    free(p2);
    if (rc < 0) luaL_error(L, "%s", e.msg);
}

static int j_model(lua_State *L) {
    cr_sched *s = check_job(L);
    send_with_chunk(L, s, CR_M_MODEL);
    collect(L, s, cr_sched_nodes(s) * cr_sched_workers(s), 0, 0);
    return 0;
}

static int j_policy(lua_State *L) {
    send_with_chunk(L, check_job(L), CR_M_POLICY);
    return 0;
}

static int j_call(lua_State *L) {
    cr_sched *s = check_job(L);
    size_t fn, an;
    const char *f = luaL_checklstring(L, 2, &fn), *a = luaL_optlstring(L, 3, "nil", &an);
    lua_settop(L, 4);
    cr_ctl h = {.type = CR_M_CALL};
    send_or_raise(L, s, -1, &h, f, fn, a, an);
    lua_newtable(L);
    collect(L, s, cr_sched_nodes(s) * cr_sched_workers(s), 5, 4);
    return 1;
}

static int j_set_lr(lua_State *L) {
    cr_sched *s = check_job(L);
    cr_ctl h = {.type = CR_M_SETLR, .table = (int32_t)luaL_checkinteger(L, 2), .f = luaL_checknumber(L, 3)};
    send_or_raise(L, s, -1, &h, NULL, 0, NULL, 0);
    collect(L, s, cr_sched_nodes(s), 0, 0);
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
    cr_sched *s = check_job(L);
    int W = cr_sched_nodes(s) * cr_sched_workers(s);
    int64_t *v = lua_newuserdatauv(L, 2 * (size_t)W * sizeof *v + 1, 0); /* freed by the GC, even on error */
    int_list(L, 2, v, W);
    int_list(L, 3, v + W, W);
    cr_ctl h = {.type = CR_M_SETCLOCKS};
    send_or_raise(L, s, -1, &h, v, (size_t)W * 8, v + W, (size_t)W * 8);
    collect(L, s, cr_sched_nodes(s), 0, 0);
    return 0;
}

static int j_stats(lua_State *L) {
    cr_sched *s = check_job(L);
    cr_ctl h = {.type = CR_M_STATS};
    send_or_raise(L, s, -1, &h, NULL, 0, NULL, 0);
    lua_newtable(L);
    collect(L, s, cr_sched_nodes(s), lua_gettop(L), 0);
    return 1;
}

/* J:get_rows(id, node, lo, count, dim, sdim) -> values, state */
static int j_get_rows(lua_State *L) {
    cr_sched *s = check_job(L);
    cr_ctl h = {.type = CR_M_GETROWS, .table = (int32_t)luaL_checkinteger(L, 2), .a = luaL_checkinteger(L, 4),
                .b = luaL_checkinteger(L, 5)};
    int node = (int)luaL_checkinteger(L, 3);
    lua_settop(L, 7);
    cr_lmat_new(L, h.b, luaL_checkinteger(L, 6));
    cr_lmat_new(L, h.b, luaL_checkinteger(L, 7));
    send_or_raise(L, s, node, &h, NULL, 0, NULL, 0);
    collect(L, s, 1, 8, 0);
    return 2;
}

/* J:set_rows(id, node, lo, values, state|nil) */
static int j_set_rows(lua_State *L) {
    cr_sched *s = check_job(L);
    cr_mat *v = cr_lmat_check(L, 5), *st = cr_lmat_test(L, 6);
    cr_ctl h = {.type = CR_M_SETROWS, .table = (int32_t)luaL_checkinteger(L, 2), .a = luaL_checkinteger(L, 4),
                .b = v->rows};
    int node = (int)luaL_checkinteger(L, 3);
    size_t sb = st ? (size_t)(st->rows * st->cols) * sizeof(float) : 0;
    send_or_raise(L, s, node, &h, v->data, (size_t)(v->rows * v->cols) * sizeof(float), st ? (void *)st->data : "",
                  sb);
    collect(L, s, 1, 0, 0);
    return 0;
}

static int j_close(lua_State *L) {
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    cr_sched_close(&j->s);
    return 0;
}

static int j_endpoint(lua_State *L) {
    lua_pushstring(L, cr_sched_endpoint(check_job(L)));
    return 1;
}

static int j_nodes(lua_State *L) {
    lua_pushinteger(L, cr_sched_nodes(check_job(L)));
    return 1;
}

static int j_workers(lua_State *L) {
    lua_pushinteger(L, cr_sched_workers(check_job(L)));
    return 1;
}

/* J:failed() -> true once a node has died */
static int j_failed(lua_State *L) {
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    lua_pushboolean(L, j->s && cr_sched_failed(j->s));
    return 1;
}

static int j_closed(lua_State *L) {
    ljob *j = luaL_checkudata(L, 1, JOB_MT);
    lua_pushboolean(L, j->s == NULL);
    return 1;
}

static int l_serialize(lua_State *L) {
    char *out, err[300];
    size_t len;
    if (cr_lser_dump(L, 1, &out, &len, err, sizeof err) < 0) return luaL_error(L, "%s", err);
    lua_pushlstring(L, out, len);
    free(out);
    return 1;
}

static int l_deserialize(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    if (cr_lser_load(L, s, n) < 0) return luaL_error(L, "cannot deserialize: %s", lua_tostring(L, -1));
    return 1;
}

static int l_state_dim(lua_State *L) {
    cr_optim o = {0};
    cr_err e;
    if (cr_optim_parse(&o, luaL_checkstring(L, 1), &e) < 0) return luaL_error(L, "%s", e.msg);
    lua_pushinteger(L, cr_optim_state_dim(&o, (int32_t)luaL_checkinteger(L, 2)));
    return 1;
}

/* ps.progress(label, total) -> P with P:add(n), P:done() (bar on stderr) */
#define PROGRESS_MT "crescent.Progress"

static cr_progress **check_progress(lua_State *L) { return luaL_checkudata(L, 1, PROGRESS_MT); }

static int l_progress(lua_State *L) {
    const char *label = luaL_checkstring(L, 1);
    lua_Integer total = luaL_optinteger(L, 2, 0);
    cr_progress **p = lua_newuserdatauv(L, sizeof *p, 0);
    *p = NULL;
    luaL_setmetatable(L, PROGRESS_MT);
    *p = cr_progress_new(label, total > 0 ? (uint64_t)total : 0, stderr);
    return 1;
}

static int p_add(lua_State *L) {
    cr_progress **p = check_progress(L);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (*p && n > 0) cr_progress_add(*p, (uint64_t)n);
    return 0;
}

static int p_done(lua_State *L) {
    cr_progress_done(check_progress(L));
    return 0;
}

/* ---------- checkpoint files (src/ps/cr_ckpt.h) ----------
 * ps.ckpt_writer(path) -> Wr | nil, msg
 *   Wr:meta(k, v); Wr:table(name, keys, dim, optimizer, sdim);
 *   Wr:rows(values, state|nil); Wr:commit(); Wr:abort()  (raise on failure)
 * ps.ckpt_reader(path) -> Rd | nil, msg   (the whole file is verified here)
 *   Rd:next_table() -> {name=, keys=, dim=, optimizer=, state_dim=} | nil;
 *   Rd:rows(count, dim, sdim) -> values, state; Rd:meta(k) -> string|nil;
 *   Rd:version() -> format version of the file; Rd:close() */
#define CKW_MT "crescent.CkptWriter"
#define CKR_MT "crescent.CkptReader"

static cr_ckpt_writer **check_ckw(lua_State *L) {
    cr_ckpt_writer **w = luaL_checkudata(L, 1, CKW_MT);
    if (!*w) luaL_error(L, "checkpoint writer is closed");
    return w;
}

static cr_ckpt_reader **check_ckr(lua_State *L) {
    cr_ckpt_reader **r = luaL_checkudata(L, 1, CKR_MT);
    if (!*r) luaL_error(L, "checkpoint reader is closed");
    return r;
}

static int l_ckpt_writer(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_ckpt_writer **w = lua_newuserdatauv(L, sizeof *w, 0);
    *w = NULL;
    luaL_setmetatable(L, CKW_MT);
    cr_err e;
    if (!(*w = cr_ckpt_writer_open(path, &e))) {
        luaL_pushfail(L);
        lua_pushstring(L, e.msg);
        return 2;
    }
    return 1;
}

static int ckw_fail(lua_State *L, cr_ckpt_writer **w, cr_err *e) {
    cr_ckpt_writer_abort(w);
    return luaL_error(L, "%s", e->msg);
}

static int ckw_meta(lua_State *L) {
    cr_ckpt_writer **w = check_ckw(L);
    cr_err e;
    if (cr_ckpt_put_meta(*w, luaL_checkstring(L, 2), luaL_checkstring(L, 3), &e) < 0) return ckw_fail(L, w, &e);
    return 0;
}

static int ckw_table(lua_State *L) {
    cr_ckpt_writer **w = check_ckw(L);
    cr_err e;
    if (cr_ckpt_put_table(*w, luaL_checkstring(L, 2), luaL_checkinteger(L, 3), (int32_t)luaL_checkinteger(L, 4),
                          luaL_optstring(L, 5, ""), (int32_t)luaL_optinteger(L, 6, 0), &e) < 0)
        return ckw_fail(L, w, &e);
    return 0;
}

static int ckw_rows(lua_State *L) {
    cr_ckpt_writer **w = check_ckw(L);
    cr_mat *v = cr_lmat_check(L, 2), *st = cr_lmat_test(L, 3);
    cr_err e;
    if (cr_ckpt_put_rows(*w, v->rows, v->data, st && st->cols ? st->data : NULL, &e) < 0) return ckw_fail(L, w, &e);
    return 0;
}

static int ckw_commit(lua_State *L) {
    cr_ckpt_writer **w = check_ckw(L);
    cr_err e;
    if (cr_ckpt_writer_commit(w, &e) < 0) return luaL_error(L, "%s", e.msg);
    return 0;
}

static int ckw_gc(lua_State *L) {
    cr_ckpt_writer_abort(luaL_checkudata(L, 1, CKW_MT));
    return 0;
}

static int l_ckpt_reader(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    cr_ckpt_reader **r = lua_newuserdatauv(L, sizeof *r, 0);
    *r = NULL;
    luaL_setmetatable(L, CKR_MT);
    cr_err e;
    if (!(*r = cr_ckpt_reader_open(path, &e))) {
        luaL_pushfail(L);
        lua_pushstring(L, e.msg);
        return 2;
    }
    return 1;
}

static int ckr_next(lua_State *L) {
    cr_ckpt_reader **r = check_ckr(L);
    cr_ckpt_table_info info;
    cr_err e;
    int rc = cr_ckpt_next_table(*r, &info, &e);
    if (rc < 0) return luaL_error(L, "%s", e.msg);
    if (rc == 0) return 0;
    lua_createtable(L, 0, 5);
    lua_pushstring(L, info.name);
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, info.keys);
    lua_setfield(L, -2, "keys");
    lua_pushinteger(L, info.dim);
    lua_setfield(L, -2, "dim");
    lua_pushstring(L, info.optimizer);
    lua_setfield(L, -2, "optimizer");
    lua_pushinteger(L, info.state_dim);
    lua_setfield(L, -2, "state_dim");
    return 1;
}

static int ckr_rows(lua_State *L) {
    cr_ckpt_reader **r = check_ckr(L);
    lua_Integer n = luaL_checkinteger(L, 2);
    cr_mat *v = cr_lmat_new(L, n, luaL_checkinteger(L, 3));
    cr_mat *st = cr_lmat_new(L, n, luaL_checkinteger(L, 4));
    cr_err e;
    if (cr_ckpt_get_rows(*r, n, v->data, st->cols ? st->data : NULL, &e) < 0) return luaL_error(L, "%s", e.msg);
    return 2;
}

static int ckr_meta(lua_State *L) {
    const char *v = cr_ckpt_get_meta(*check_ckr(L), luaL_checkstring(L, 2));
    if (v) lua_pushstring(L, v);
    else lua_pushnil(L);
    return 1;
}

static int ckr_version(lua_State *L) {
    lua_pushinteger(L, cr_ckpt_version(*check_ckr(L)));
    return 1;
}

static int ckr_close(lua_State *L) {
    cr_ckpt_reader_close(luaL_checkudata(L, 1, CKR_MT));
    return 0;
}

static void ckpt_register(lua_State *L) {
    static const luaL_Reg wm[] = {{"meta", ckw_meta}, {"table", ckw_table}, {"rows", ckw_rows},
                                  {"commit", ckw_commit}, {"abort", ckw_gc}, {NULL, NULL}};
    static const luaL_Reg rm[] = {{"next_table", ckr_next}, {"rows", ckr_rows}, {"meta", ckr_meta},
                                  {"version", ckr_version}, {"close", ckr_close}, {NULL, NULL}};
    if (luaL_newmetatable(L, CKW_MT)) {
        luaL_newlib(L, wm);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, ckw_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, ckw_gc);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, CKR_MT)) {
        luaL_newlib(L, rm);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, ckr_close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, ckr_close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
}

static int l_overrides(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "crescent.overrides");
    return 1;
}

int cr_lopen_ps(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"table", j_table},       {"model", j_model},       {"call", j_call},       {"policy", j_policy},
        {"set_lr", j_set_lr},     {"set_clocks", j_set_clocks}, {"stats", j_stats},       {"get_rows", j_get_rows}, {"set_rows", j_set_rows},
        {"close", j_close},       {"endpoint", j_endpoint}, {"nodes", j_nodes},     {"workers", j_workers},
        {"closed", j_closed},     {"failed", j_failed},     {NULL, NULL}};
    if (luaL_newmetatable(L, JOB_MT)) {
        luaL_newlib(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, j_close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, j_close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    static const luaL_Reg fns[] = {{"start", l_start},           {"serialize", l_serialize},
                                   {"deserialize", l_deserialize}, {"state_dim", l_state_dim},
                                   {"overrides", l_overrides},     {"progress", l_progress},
                                   {"ckpt_writer", l_ckpt_writer}, {"ckpt_reader", l_ckpt_reader},
                                   {NULL, NULL}};
    ckpt_register(L);
    static const luaL_Reg pmethods[] = {{"add", p_add}, {"done", p_done}, {NULL, NULL}};
    if (luaL_newmetatable(L, PROGRESS_MT)) {
        luaL_newlib(L, pmethods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, p_done);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    luaL_newlib(L, fns);
    return 1;
}

/* ---------- crescent run ---------- */

#include <stdio.h>

#include "lua/l_host.h"
#include "lua/l_ps.h"
#include "lua/l_repl.h"


static void set_overrides(lua_State *L, const cr_run_overrides *ov) {
    lua_newtable(L);
    if (ov->nodes >= 0) lua_pushinteger(L, ov->nodes), lua_setfield(L, -2, "nodes");
    if (ov->workers >= 0) lua_pushinteger(L, ov->workers), lua_setfield(L, -2, "workers");
    if (ov->seed >= 0) lua_pushinteger(L, ov->seed), lua_setfield(L, -2, "seed");
    if (ov->policy) lua_pushstring(L, ov->policy), lua_setfield(L, -2, "policy");
    if (ov->metrics) lua_pushstring(L, ov->metrics), lua_setfield(L, -2, "metrics");
    lua_setfield(L, LUA_REGISTRYINDEX, "crescent.overrides");
}

int cr_lps_run(const char *home, const char *path, const cr_run_overrides *ov, int repl, int argc, char **argv) {
    lua_State *L = cr_lhost_new(home);
    if (!L) {
        fprintf(stderr, "crescent: out of memory\n");
        return 1;
    }
    set_overrides(L, ov);
    lua_createtable(L, argc, 1);
    lua_pushstring(L, path);
    lua_rawseti(L, -2, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setglobal(L, "arg");
    int status = cr_lhost_dofile(L, path, argc, argv) == 0 ? 0 : 1;
    if (status == 0 && repl) {
        int q = cr_repl_run(L);
        if (q) status = q;
    }
    if (luaL_dostring(L, "local ok, ps = pcall(require, 'crescent.ps') if ok then ps.close_all() end") != LUA_OK) {
        fprintf(stderr, "crescent: %s\n", lua_tostring(L, -1));
        status = 1;
    }
    lua_close(L);
    fflush(stdout);
    return status;
}
