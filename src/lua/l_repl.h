#ifndef CR_L_REPL_H
#define CR_L_REPL_H
/* The interactive Lua prompt of the scheduler (`crescent repl`,
 * `crescent run JOB.lua --repl`).
 *
 * On a terminal: readline line editing, history in ~/.crescent_history
 * (bounded to CR_REPL_HISTORY entries), prompt "> ", and ">> " while a chunk
 * is incomplete. When stdin is not a terminal, lines are read plainly and no
 * prompt or banner is printed, so commands can be piped in.
 *
 * Each input is compiled first as "return <line>" (so expressions print their
 * values, as in lua.c 5.4), else as a statement; a chunk whose syntax error
 * ends in "<eof>" is incomplete and continues on the next line. Results are
 * printed with the state's global `print`; an error in typed code prints the
 * message and a traceback to stderr and the prompt stays alive. Ctrl-C while
 * a chunk runs interrupts it at the next Lua instruction ("interrupted!");
 * at the prompt it clears the line.
 *
 * The Lua half (result printer, completion, the `job` global) is
 * lua/crescent/repl.lua, required once per session from the state's
 * package.path (cr_lhost_new puts HOME/lua on it). Before each line the
 * global `job` follows require("crescent.job").current() when that exists
 * (see sync_job in repl.lua). */

#define CR_REPL_HISTORY 1000

/* Declared, not included: callers outside src/lua (the CLI) see no lua.h. */
struct lua_State;

/* Run the prompt on L until quit(), exit() or end of input. Installs the
 * globals `quit` and `exit` for the duration (previous values are restored).
 * `quit(n)` returns n (an integer), otherwise the result is 0. The stack of L
 * is left as it was. L stays the caller's. */
int cr_repl_run(struct lua_State *L);

/* `crescent repl` without a job script: a new scheduler state (cr_lhost_new
 * with HOME, the directory holding lua/), `cr = require "crescent"`, the
 * prompt, then the state is closed (closing any job opened at the prompt).
 * Returns the exit status: quit(n)'s n, 0, or 1 if crescent did not load. */
int cr_repl_main(const char *home);

#endif
