#ifndef CR_L_SANDBOX_H
#define CR_L_SANDBOX_H
/* Sandboxed Lua states for the scripts that are not the user's own job
 * script: model scripts (worker threads), consistency policies (on workers
 * and in the scheduler's pre-check), and later sampling and management
 * scripts. Built as an allow-list, as Redis does (script_lua.c): the state
 * starts empty, only trusted libraries are opened, and only the functions
 * listed in l_sandbox.c are copied into the globals:
 *
 *   base      assert error getmetatable ipairs next pairs print rawequal
 *             rawget rawlen rawset select tonumber tostring type _VERSION,
 *             plus
 *             setmetatable   without __gc (no finalizers in script code)
 *             load           text chunks only (mode is forced to "t"); the
 *                            default environment is the sandbox's globals
 *             pcall, xpcall  as usual, but they cannot catch an interrupt
 *                            (cancel, stop, deadline): it goes on upwards,
 *                            and xpcall's message handler is not called
 *                            for it (Lua would run it with hooks off)
 *             collectgarbage "count", "step", "collect", "isrunning" only
 *   string    all but string.dump; the string metatable is hidden (its
 *             __metatable is a read-only view whose __index is a read-only
 *             view of this table; string methods ("x"):rep read it too);
 *             find, match, gmatch and gsub refuse a call whose worst case
 *             exceeds CR_PATTERN_STEPS (l_sandbox_pattern.c)
 *   table math utf8   complete
 *   coroutine      complete; coroutine.close nested at most 8 deep (a
 *                  __close closing another coroutine: Lua 5.4.4 does not
 *                  count that against its C-call limit); resume, wrap and
 *                  close ask the interrupt test and raise it, and never
 *                  run the __close handlers of a coroutine it killed
 *   os        time, clock, date only
 *
 * Not there: io, os.execute/exit/getenv/remove/rename/..., require, package,
 * debug, dofile, loadfile, string.dump, bytecode. Reading an undeclared
 * global raises "undefined global 'x'"; the globals' metatable is protected.
 *
 * Each state has a memory cap enforced by its allocator: an allocation that
 * would take the state over the cap is refused (Lua then collects garbage
 * and retries once, then raises a memory error). cr_sandbox_message turns
 * that error into "SCRIPT:LINE: LABEL exceeded N MB (option memory_mb)".
 *
 * A count hook runs every CR_SANDBOX_HOOK_COUNT instructions (in coroutines
 * too) and asks the state's interrupt function whether to stop; once it says
 * so, the state raises at every hook (then every instruction) and pcall
 * cannot catch it, until cr_sandbox_reset; no script code runs with hooks
 * off while it unwinds (l_sandbox.c, "interrupts", says how). The hook cannot interrupt one C call: the library
 * functions that could take long in one call are bounded instead (pattern
 * matching by its worst case; string.rep, table.concat and the like by the
 * memory cap). */

#include <lua.h>
#include <stddef.h>

#define CR_SANDBOX_DEFAULT_MB 256
#define CR_SANDBOX_MAX_MB (1 << 20)
#define CR_SANDBOX_HOOK_COUNT 10000
/* Wall-clock limit of cr_sandbox_check_policy (the constructor runs once). */
#define CR_SANDBOX_CHECK_SECONDS 5

/* Most worst-case steps of one pattern match in a sandbox (about a second
 * or two), and the worst case of matching pattern p against a subject of n
 * bytes (can_anchor: a leading ^ anchors it, as in find, match and gsub;
 * not in gmatch). l_sandbox_pattern.c explains the bound. */
#define CR_PATTERN_STEPS 3e8
double cr_pattern_steps(size_t n, const char *p, size_t pl, int can_anchor);
/* [-0, +1] A new table with the raw fields of the table at idx (lua_next:
 * no metamethod runs), without its metatable. */
void cr_sandbox_push_rawcopy(lua_State *L, int idx);
/* [-0, +0] Replace find, match, gmatch and gsub in the string library table
 * at the top of the stack by versions that refuse a costlier call. */
void cr_sandbox_bound_patterns(lua_State *L);

/* Interrupt test run by the count hook: NULL to go on, or the message to
 * raise (a string that outlives the state, e.g. a literal). */
typedef const char *(*cr_sandbox_interrupt_fn)(void *arg);

/* A new sandboxed state with a cap of memory_mb MB (1..CR_SANDBOX_MAX_MB)
 * and `label` ("model script", "policy script": a literal, it names the
 * script in memory errors). NULL if memory_mb is out of range or the state
 * cannot be built. The caller owns it: cr_sandbox_close. */
lua_State *cr_sandbox_new(int memory_mb, const char *label);

/* Close a state made by cr_sandbox_new and free its accounting; NULLs *L
 * (NULL and *L == NULL are fine). */
void cr_sandbox_close(lua_State **L);

/* Set the cap. Returns 0, or -1 (cap unchanged) if memory_mb is out of range
 * or below what the state already holds. */
int cr_sandbox_set_limit(lua_State *L, int memory_mb);
int cr_sandbox_limit(lua_State *L);   /* the cap in MB */
size_t cr_sandbox_used(lua_State *L); /* bytes held now */

/* Count `bytes` that C code holds for the state (a userdata's malloc'd
 * buffers, which the allocator never sees) against the cap: returns 0, or
 * -1 with nothing counted if that would take the state over it. The owner
 * gives them back with cr_sandbox_uncharge when it frees them. */
int cr_sandbox_charge(lua_State *L, size_t bytes);
void cr_sandbox_uncharge(lua_State *L, size_t bytes);

/* Count `bytes` of C buffers a binding is about to allocate for the state
 * (a kernel's, reader's or handle's, sized by what the script asked for)
 * against its cap, before allocating them: returns what was counted, to
 * give back with cr_sandbox_uncharge when they are freed. In a state that is
 * not a sandbox (the job's own script) nothing is counted and 0 returned.
 * Over the cap (after a full garbage collection) it raises, as the binding
 * `fn`: "SCRIPT:LINE: FN: LABEL exceeded N MB (option memory_mb): C buffers
 * of X MB, Y MB free"; so the process never tries a size the cap refuses.
 * bytes is a double: callers compute it without overflow. */
size_t cr_lsandbox_reserve(lua_State *L, double bytes, const char *fn);

/* The label used in memory errors; returns the previous one. */
const char *cr_sandbox_set_label(lua_State *L, const char *label);

/* Install the interrupt test (NULL to remove). */
void cr_sandbox_set_interrupt(lua_State *L, cr_sandbox_interrupt_fn fn, void *arg);

/* Forget a raised interrupt and a refused allocation: call before each new
 * command so that the next one starts clean. */
void cr_sandbox_reset(lua_State *L);

/* [-0, +1] A fresh globals table with the allow-listed functions only and
 * copies of its own of the library tables (what a script changes in them
 * the state's globals do not see), strict like them. Used as the
 * environment of a policy loaded into a model's state. */
void cr_sandbox_push_env(lua_State *L);

/* [-0, +1] Load src as a text chunk named chunkname (a "@path" or "=name"
 * as lua_load wants), with the table at env_idx as its _ENV (0: the state's
 * globals). Pushes the function, or the error message; returns the status. */
int cr_sandbox_load(lua_State *L, const char *src, size_t n, const char *chunkname, int env_idx);

/* [-0, +0] The message of the error value at the top, left by a call that
 * failed with `status`, written into buf (n bytes; CR_SANDBOX_MSG_MAX is
 * enough): a refused allocation becomes "SCRIPT:LINE: LABEL exceeded N MB
 * (option memory_mb)", a string stays as it is, another value is named by
 * its type. Allocates nothing in L, so it is safe when L is out of memory
 * and from a message handler (status LUA_ERRRUN). Returns buf. */
#define CR_SANDBOX_MSG_MAX 4096
const char *cr_sandbox_message(lua_State *L, int status, char *buf, size_t n);

/* Check a consistency policy the way workers will load it, in a new
 * sandboxed state capped at memory_mb MB and CR_SANDBOX_CHECK_SECONDS
 * seconds: load src (text) as chunkname, run it, call the constructor it
 * returns with a deep copy of the plain-data value at opts_idx of L, and
 * require a table with a function may_proceed. Returns 0, or -1 with the
 * message ("bad policy file: ...", naming the script and line) pushed on L. */
int cr_sandbox_check_policy(lua_State *L, const char *src, size_t n, const char *chunkname, int opts_idx,
                            int memory_mb);

/* [-0, +0] Add run_scheme(src, chunkname, opts [, memory_mb]) -> config |
 * nil, message to the table at the top (l_sandbox_scheme.c): run a
 * sampling scheme script and its constructor the same way, and copy back
 * the plain-data configuration it returns. */
void cr_lsandbox_add_scheme(lua_State *L);

/* [-0, +1] core.sandbox: check_policy(src, chunkname, opts [, memory_mb])
 * -> true | nil, message; run_scheme (above). */
int cr_lopen_sandbox(lua_State *L);

#endif
