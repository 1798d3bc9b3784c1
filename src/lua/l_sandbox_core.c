/* The crescent functions a model script may call, with path-checked
 * readers. See l_sandbox_core.h. */
#include "lua/l_sandbox_core.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lua/l_modules.h"
#include "lua/l_sandbox.h"

#define READS_KEY "crescent.sandbox.reads"

/* One allowed function; path_arg > 0 makes it a reader whose argument
 * path_arg is a path, and opts (NULL-ended) names fields of the argument
 * after it that may hold paths too. */
typedef struct allowed {
    const char *mod, *fn;
    int path_arg;
    const char *const *opts;
} allowed;

static const char *const triples_opts[] = {"entities", "relations", NULL};
static const char *const logreg_opts[] = {"placement", NULL};

static const allowed worker_fns[] = {
    {"util", "matrix", 0, NULL},          {"util", "ints", 0, NULL},
    {"util", "now", 0, NULL},             {"kernels", "mf_sgd", 0, NULL},
    {"kernels", "mf_eval", 0, NULL},      {"kernels", "mm_header", 1, NULL},
    {"kernels", "mf_load", 1, NULL},      {"data", "mm_open", 1, NULL},
    {"data", "libsvm", 1, NULL},          {"data", "edges", 1, NULL},
    {"data", "triples", 1, triples_opts}, {"data", "text", 1, NULL},
    {"data", "dict", 1, NULL},            {"eval", "link_prediction", 0, NULL},
    {"eval", "rmse", 0, NULL},            {"eval", "logloss", 0, NULL},
    {"eval", "accuracy", 0, NULL},        {"eval", "auc", 0, NULL},
    {"eval", "lda_loglik", 0, NULL},      {"eval", "lda_perplexity", 0, NULL},
    {"eval", "analogy", 3, NULL},         {"eval", "synonyms", 3, NULL},
    {"kernels", "kge_step", 0, NULL},     {"kernels", "kge_score_all", 0, NULL},
    {"kernels", "w2v_sgns", 0, NULL},     {"kernels", "w2v_cbow", 0, NULL},
    {"kernels", "w2v_subsample", 0, NULL}, {"kernels", "w2v_init", 0, NULL},
    {"kernels", "kge_batches", 0, NULL},  {"kernels", "w2v_reader", 1, NULL},
    {"kernels", "lda_load", 1, NULL},     {"kernels", "lda_word_loglik", 0, NULL},
    {"kernels", "logreg_load", 1, logreg_opts},
    {NULL, NULL, 0, NULL},
};

/* Raise unless path's real path was declared readable. The reader then
 * opens the path as given (its messages name what the user wrote); the
 * script has no way to swap a symlink in between, it cannot write. */
static void check_path(lua_State *L, const char *fn, const char *path) {
    char real[PATH_MAX];
    int ok = 0;
    if (realpath(path, real)) {
        lua_getfield(L, LUA_REGISTRYINDEX, READS_KEY);
        ok = lua_getfield(L, -1, real) == LUA_TBOOLEAN;
        lua_pop(L, 2);
    }
    if (!ok)
        luaL_error(L, "%s: reading '%s' is not allowed in a model script (only files named in the model's "
                      "options or in its option allow_read)", fn, path);
}

/* [-0, +0] Replace the table at idx by a copy of its raw fields, without
 * its metatable: the reader then reads the very paths checked (an __index
 * could answer an allowed path to the check, another to the reader). */
static void plain_opts(lua_State *L, int idx) {
    cr_sandbox_push_rawcopy(L, idx);
    lua_replace(L, idx);
}

/* A reader behind its path check. Upvalues: the reader, its `allowed`
 * entry, its name ("data.text"). */
static int guarded(lua_State *L) {
    const allowed *a = lua_touserdata(L, lua_upvalueindex(2));
    const char *name = lua_tostring(L, lua_upvalueindex(3));
    check_path(L, name, luaL_checkstring(L, a->path_arg));
    if (a->opts && lua_istable(L, a->path_arg + 1)) plain_opts(L, a->path_arg + 1);
    for (int i = 0; a->opts && a->opts[i] && lua_istable(L, a->path_arg + 1); i++) {
        if (lua_getfield(L, a->path_arg + 1, a->opts[i]) == LUA_TSTRING) check_path(L, name, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* [-0, +0] core[a->mod][a->fn] = the function from full (at -2), guarded
 * if it reads; core at -1. */
static void copy_fn(lua_State *L, const allowed *a) {
    if (lua_getfield(L, -1, a->mod) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, a->mod);
    }
    lua_getfield(L, -3, a->mod);
    lua_getfield(L, -1, a->fn);
    lua_remove(L, -2);
    if (a->path_arg) {
        lua_pushlightuserdata(L, (void *)a);
        lua_pushfstring(L, "%s.%s", a->mod, a->fn);
        lua_pushcclosure(L, guarded, 3);
    }
    lua_setfield(L, -2, a->fn);
    lua_pop(L, 1);
}

void cr_sandbox_push_worker_core(lua_State *L) {
    luaopen_crescent_core(L);
    lua_newtable(L);
    for (const allowed *a = worker_fns; a->mod; a++) copy_fn(L, a);
    lua_remove(L, -2);
    luaL_getmetatable(L, "crescent.Dict"); /* a Dict read here cannot be written */
    if (lua_getfield(L, -1, "__index") == LUA_TTABLE) {
        lua_pushnil(L);
        lua_setfield(L, -2, "write");
    }
    lua_pop(L, 2);
    lua_createtable(L, 0, 1);
    lua_insert(L, -2);
    lua_setfield(L, -2, "core");
    cr_sandbox_clear_reads(L);
}

void cr_sandbox_clear_reads(lua_State *L) {
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, READS_KEY);
}

int cr_sandbox_allow_read(lua_State *L, const char *path) {
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(path, real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    lua_getfield(L, LUA_REGISTRYINDEX, READS_KEY);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, real);
    lua_pop(L, 1);
    return 1;
}

static void allow_walk(lua_State *L, int idx, int depth) {
    if (lua_type(L, idx) == LUA_TSTRING) {
        cr_sandbox_allow_read(L, lua_tostring(L, idx));
        return;
    }
    if (!lua_istable(L, idx) || depth > 8) return;
    idx = lua_absindex(L, idx);
    for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) allow_walk(L, -1, depth + 1);
}

void cr_sandbox_allow_from(lua_State *L, int idx) { allow_walk(L, idx, 0); }

void cr_sandbox_protect_metatables(lua_State *L) {
    for (lua_pushnil(L); lua_next(L, LUA_REGISTRYINDEX); lua_pop(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_istable(L, -1)) continue;
        const char *k = lua_tostring(L, -2);
        if (strncmp(k, "crescent.", 9) != 0) continue;
        if (lua_getfield(L, -1, "__name") == LUA_TSTRING && !strcmp(lua_tostring(L, -1), k)) {
            lua_pushboolean(L, 0);
            lua_setfield(L, -3, "__metatable");
        }
        lua_pop(L, 1);
    }
}
