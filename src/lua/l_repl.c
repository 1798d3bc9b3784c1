/* The scheduler's interactive prompt. Modelled on lua.c 5.4 (loadline,
 * multiline, docall, l_print), with readline's callback interface so that
 * waiting for input is a poll() that a Ctrl-C interrupts cleanly. */
#include "lua/l_repl.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <readline/history.h>
#include <readline/readline.h>

#include "base/cr_alloc.h"
#include "base/cr_file.h"
#include "lua/l_host.h"

#define PROMPT "> "
#define PROMPT2 ">> "
#define CHUNKNAME "=stdin"

/* Full userdata (upvalue of quit/exit) so a saved `quit` never dangles. */
typedef struct quit_state {
    int quit, code;
} quit_state;

typedef struct repl {
    lua_State *L;
    int tty;
    int mod;           /* stack slot of the crescent.repl module (nil if it did not load) */
    quit_state *qs;
    char hist[1024];   /* history file, "" = none */
    /* plain (non-tty) input buffer */
    char *buf;
    size_t len, cap;
    int eof;
    /* readline callback result */
    char *line;
    int got_line;
    struct sigaction old_int; /* the caller's SIGINT action, restored at the end */
} repl;

/* Signal handlers and readline's line callback have no user-data slot: they
 * reach the one REPL running in this process through these. */
static repl *cur;
static lua_State *volatile sig_L;
static volatile sig_atomic_t sig_int;

/* ---------------------------------------------------------------- signals */

static void lstop(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted!");
}

/* Ctrl-C while a chunk runs: stop it at the next Lua instruction (as lua.c).
 * A second Ctrl-C gets the default action, for code stuck in C. */
static void on_sigint_run(int sig) {
    signal(sig, SIG_DFL);
    lua_sethook(sig_L, lstop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static void on_sigint_prompt(int sig) {
    (void)sig;
    sig_int = 1;
}

/* Install h for SIGINT without SA_RESTART, so poll() returns EINTR. */
static void set_sigint(void (*h)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* ------------------------------------------------------------------ input */

/* Wait until fd 0 is readable. Returns 1 readable, 0 interrupted by Ctrl-C. */
static int wait_input(void) {
    for (;;) {
        struct pollfd p = {0, POLLIN, 0};
        int n = poll(&p, 1, -1);
        if (n > 0) return 1;
        if (n < 0 && errno == EINTR && sig_int) {
            sig_int = 0;
            return 0;
        }
    }
}

/* Next line from a pipe or file, without its newline; malloc'd, NULL at end. */
static char *plain_line(repl *r) {
    for (;;) {
        char *nl = r->len ? memchr(r->buf, '\n', r->len) : NULL;
        if (nl || (r->eof && r->len)) {
            size_t n = nl ? (size_t)(nl - r->buf) : r->len;
            char *line = cr_xmalloc(n + 1);
            memcpy(line, r->buf, n);
            line[n] = '\0';
            size_t used = nl ? n + 1 : n;
            memmove(r->buf, r->buf + used, r->len - used);
            r->len -= used;
            return line;
        }
        if (r->eof) return NULL;
        if (!wait_input()) continue;
        if (r->cap - r->len < 4096) {
            r->cap = r->cap ? r->cap * 2 : 8192;
            r->buf = cr_xrealloc(r->buf, r->cap);
        }
        ssize_t got = read(0, r->buf + r->len, r->cap - r->len);
        if (got > 0) r->len += (size_t)got;
        else if (got == 0 || errno != EINTR) r->eof = 1;
    }
}

static void on_line(char *line) {
    cur->line = line;
    cur->got_line = 1;
    rl_callback_handler_remove(); /* no prompt until we ask for one */
}

/* Next line from the terminal; NULL at end (Ctrl-D); *cancel set on Ctrl-C. */
static char *tty_line(repl *r, const char *prompt, int *cancel) {
    r->line = NULL;
    r->got_line = 0;
    *cancel = 0;
    rl_callback_handler_install(prompt, on_line);
    while (!r->got_line) {
        if (wait_input()) {
            rl_callback_read_char();
            continue;
        }
        /* Ctrl-C: drop the line (and any incomplete chunk) */
        rl_free_line_state();
        rl_callback_sigcleanup();
        rl_callback_handler_remove();
        fputs("^C\n", stdout);
        fflush(stdout);
        *cancel = 1;
        return cr_xstrdup("");
    }
    if (!r->line) fputc('\n', stdout);
    return r->line;
}

static char *read_line(repl *r, int first, int *cancel) {
    *cancel = 0;
    if (!r->tty) return plain_line(r);
    return tty_line(r, first ? PROMPT : PROMPT2, cancel);
}

/* ------------------------------------------------------------- compiling */

/* lua.c's test: a syntax error that ends at "<eof>" means "keep typing".
 * Pops the message when the chunk is incomplete. */
static int incomplete(lua_State *L, int status) {
    if (status == LUA_ERRSYNTAX) {
        size_t lmsg;
        const char *msg = lua_tolstring(L, -1, &lmsg);
        if (lmsg >= 5 && strcmp(msg + lmsg - 5, "<eof>") == 0) {
            lua_pop(L, 1);
            return 1;
        }
    }
    return 0;
}

static void save_history(repl *r, const char *chunk) {
    if (r->tty && chunk[0]) add_history(chunk);
}

/* Read and compile one chunk: pushes the function (LUA_OK) or an error
 * message (other status). Returns -1 at end of input (nothing pushed) and
 * -2 when the user cancelled with Ctrl-C (nothing pushed). */
static int load_chunk(repl *r) {
    lua_State *L = r->L;
    int cancel;
    char *chunk = read_line(r, 1, &cancel);
    if (!chunk) return -1;
    if (cancel) {
        free(chunk);
        return -2;
    }
    size_t n = strlen(chunk);
    if (n && chunk[n - 1] == '\r') chunk[--n] = '\0';
    const char *ret = lua_pushfstring(L, "return %s;", chunk);
    int status = luaL_loadbuffer(L, ret, strlen(ret), CHUNKNAME);
    lua_remove(L, -2);
    if (status == LUA_OK) {
        save_history(r, chunk);
        free(chunk);
        return LUA_OK;
    }
    lua_pop(L, 1);
    for (;;) {
        status = luaL_loadbuffer(L, chunk, n, CHUNKNAME);
        if (!incomplete(L, status)) break;
        char *more = read_line(r, 0, &cancel);
        if (cancel || !more) {
            if (!more) { /* end of input inside a chunk: report why */
                luaL_loadbuffer(L, chunk, n, CHUNKNAME);
                save_history(r, chunk);
            }
            free(more);
            free(chunk);
            return more ? -2 : LUA_ERRSYNTAX;
        }
        size_t m = strlen(more);
        if (m && more[m - 1] == '\r') more[--m] = '\0';
        chunk = cr_xrealloc(chunk, n + m + 2);
        chunk[n] = '\n';
        memcpy(chunk + n + 1, more, m + 1);
        n += m + 1;
        free(more);
    }
    save_history(r, chunk);
    free(chunk);
    return status;
}

/* ------------------------------------------------------------- running */

/* Message handler: the message plus a traceback (as lua.c). */
static int msghandler(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

static int docall(repl *r, int narg, int nres) {
    lua_State *L = r->L;
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    sig_L = L;
    set_sigint(on_sigint_run);
    if (sig_int) { /* Ctrl-C between reading the line and here: honour it */
        sig_int = 0;
        lua_sethook(L, lstop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
    }
    int status = lua_pcall(L, narg, nres, base);
    lua_sethook(L, NULL, 0, 0); /* a Ctrl-C that came after the last instruction */
    if (r->tty) set_sigint(on_sigint_prompt);
    else sigaction(SIGINT, &r->old_int, NULL);
    lua_remove(L, base);
    return status;
}

static void report(lua_State *L, int status) {
    if (status != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fflush(stdout);
        fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
        fflush(stderr);
        lua_pop(L, 1);
    }
}

/* ------------------------------------------------------------- helpers */

/* [-0, +1] Function `name` of crescent.repl (lua/crescent/repl.lua), or nil. */
static void helper(repl *r, const char *name) {
    if (lua_istable(r->L, r->mod)) lua_getfield(r->L, r->mod, name);
    else lua_pushnil(r->L);
}

/* [-0, +1] require("crescent.repl"), loaded once per session; nil (and a
 * note on stderr) if it cannot be: the prompt then prints with `print`. */
static void load_helpers(lua_State *L) {
    lua_getglobal(L, "require");
    lua_pushliteral(L, "crescent.repl");
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
        fprintf(stderr, "crescent repl: %s (plain printing, no completion)\n",
                lua_isstring(L, -1) ? lua_tostring(L, -1) : "crescent.repl is not a module table");
        lua_pop(L, 1);
        lua_pushnil(L);
    }
}

/* Offer the current job as the global `job` before a line runs
 * (crescent.repl's sync_job); an error there never stops the prompt. */
static void sync_job(repl *r) {
    helper(r, "sync_job");
    if (lua_isnil(r->L, -1) || lua_pcall(r->L, 0, 0, 0) != LUA_OK) lua_pop(r->L, 1);
}

/* Print the n values on top of the stack (and pop them). */
static void print_results(repl *r, int n) {
    lua_State *L = r->L;
    if (n <= 0) return;
    luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
    helper(r, "show");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_getglobal(L, "print");
    }
    lua_insert(L, -n - 1);
    if (lua_pcall(L, n, 0, 0) != LUA_OK) {
        fprintf(stderr, "error printing results (%s)\n", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    fflush(stdout);
}

/* ------------------------------------------------------------ completion */

/* Tab completion of names: crescent.repl's complete(text) (globals,
 * fields after "a.b.", methods after "a.b:"); errors end it quietly. */
static char **matches;
static int nmatches, next_match;

static void free_matches(void) {
    for (int i = next_match; i < nmatches; i++) free(matches[i]);
    free(matches);
    matches = NULL;
    nmatches = next_match = 0;
}

/* Fill `matches` with the completions of text (none on any error). */
static void find_matches(lua_State *L, const char *text) {
    free_matches();
    int top = lua_gettop(L);
    helper(cur, "complete");
    if (!lua_isnil(L, -1)) {
        lua_pushstring(L, text);
        if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1)) {
            int n = (int)luaL_len(L, -1);
            matches = cr_xcalloc((size_t)n + 1, sizeof *matches);
            for (int i = 1; i <= n; i++) {
                lua_rawgeti(L, -1, i);
                const char *m = lua_tostring(L, -1);
                if (m) matches[nmatches++] = cr_xstrdup(m);
                lua_pop(L, 1);
            }
        }
    }
    lua_settop(L, top);
}

static char *generator(const char *text, int state) {
    if (state == 0) find_matches(cur->L, text);
    if (next_match < nmatches) return matches[next_match++]; /* readline frees it */
    free_matches();
    return NULL;
}

static char **complete(const char *text, int start, int end) {
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1;        /* never fall back to file names */
    rl_completion_append_character = '\0'; /* readline resets it to ' ' before each call */
    return rl_completion_matches(text, generator);
}

/* ------------------------------------------------------- quit and history */

static int l_quit(lua_State *L) {
    quit_state *qs = lua_touserdata(L, lua_upvalueindex(1));
    qs->quit = 1;
    qs->code = (int)luaL_optinteger(L, 1, 0);
    return 0;
}

static void history_path(repl *r) {
    const char *env = getenv("CRESCENT_HISTORY"), *home = getenv("HOME");
    r->hist[0] = '\0';
    if (env) snprintf(r->hist, sizeof r->hist, "%s", env);
    else if (home && home[0]) snprintf(r->hist, sizeof r->hist, "%s/.crescent_history", home);
}

/* readline writes the history through a symlink (resolved, even relative to
 * the working directory) and leaves the target with mode 0600: a history
 * path that is not a regular file (or missing) is refused, with one line
 * saying so, and no history is read or written for the session. Checked at
 * open and again before writing, in case a link appeared meanwhile. */
static int history_usable(repl *r) {
    cr_err e;
    if (!r->hist[0]) return 0;
    if (cr_file_check_replace(r->hist, &e) == 0) return 1;
    fprintf(stderr, "crescent: history file %s; history is not kept\n", e.msg);
    r->hist[0] = '\0';
    return 0;
}

static void history_open(repl *r) {
    history_path(r);
    using_history();
    stifle_history(CR_REPL_HISTORY);
    if (history_usable(r)) read_history(r->hist);
}

static void history_close(repl *r) {
    if (history_usable(r) && write_history(r->hist) == 0) history_truncate_file(r->hist, CR_REPL_HISTORY);
    clear_history();
}

/* Set globals quit and exit to the closure on top; the old values are kept
 * at stack slots old, old+1. */
static void install_quit(lua_State *L) {
    lua_getglobal(L, "quit");
    lua_getglobal(L, "exit");
    lua_pushvalue(L, -3);
    lua_setglobal(L, "quit");
    lua_pushvalue(L, -3);
    lua_setglobal(L, "exit");
}

int cr_repl_run(lua_State *L) {
    int top = lua_gettop(L);
    repl r;
    memset(&r, 0, sizeof r);
    r.L = L;
    r.tty = isatty(0);
    r.qs = lua_newuserdatauv(L, sizeof *r.qs, 0);
    memset(r.qs, 0, sizeof *r.qs);
    lua_pushcclosure(L, l_quit, 1);
    install_quit(L); /* stack: quit, old quit, old exit */
    load_helpers(L); /* stack: ..., crescent.repl */
    r.mod = lua_gettop(L);
    repl *saved = cur;
    cur = &r;
    sigaction(SIGINT, NULL, &r.old_int);
    if (r.tty) {
        rl_catch_signals = 0;
        rl_readline_name = "crescent";
        rl_attempted_completion_function = complete;
        rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,+-*/%^~#[]";
        history_open(&r);
        set_sigint(on_sigint_prompt);
        printf("crescent (%s): expressions print their value; quit() or Ctrl-D leaves\n", LUA_RELEASE);
    }
    while (!r.qs->quit) {
        int status = load_chunk(&r);
        if (status == -1) break;
        if (status == -2) continue;
        int base = lua_gettop(L);
        if (status == LUA_OK) {
            sync_job(&r);
            status = docall(&r, 0, LUA_MULTRET);
        }
        if (status == LUA_OK) print_results(&r, lua_gettop(L) - base + 1);
        else report(L, status);
        lua_settop(L, top + 4);
    }
    int code = r.qs->quit ? r.qs->code : 0;
    if (r.tty) history_close(&r);
    sigaction(SIGINT, &r.old_int, NULL);
    cur = saved;
    free(r.buf);
    lua_pop(L, 1); /* crescent.repl */
    lua_setglobal(L, "exit"); /* restore the old values */
    lua_setglobal(L, "quit");
    lua_settop(L, top);
    fflush(stdout);
    return code;
}

int cr_repl_main(const char *home) {
    lua_State *L = cr_lhost_new(home);
    if (!L) {
        fprintf(stderr, "crescent repl: out of memory\n");
        return 1;
    }
    lua_getglobal(L, "require");
    lua_pushliteral(L, "crescent");
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        fprintf(stderr, "crescent repl: %s\n", lua_tostring(L, -1));
        lua_close(L);
        return 1;
    }
    lua_setglobal(L, "cr");
    int rc = cr_repl_run(L);
    lua_close(L); /* closes any job opened at the prompt (its __gc) */
    return rc;
}
