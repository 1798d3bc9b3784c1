#ifndef CR_L_WORKER_SERIAL_H
#define CR_L_WORKER_SERIAL_H
/* Plain Lua data (nil, booleans, numbers, strings, tables of those; no
 * cycles, no functions/userdata) <-> a Lua literal string. Used to ship job
 * options, call arguments and results between the scheduler and workers. */

#include <lua.h>
#include <stddef.h>

/* [-0, +0] Serialize the value at idx into a new malloc'd string (*out,
 * *len; caller frees). Returns 0, or -1 with a message in err (err_n bytes)
 * naming the offending path, e.g. "args.data: cannot send a function". */
int cr_lser_dump(lua_State *L, int idx, char **out, size_t *len, char *err, size_t err_n);

/* [-0, +0] As cr_lser_dump, refusing a value of more than max_values values
 * in all (each key and each value, at any depth, counts one): -1 with err
 * "too large: more than MAX values (...)". A worker's result
 * is dumped with CR_LSER_RESULT_MAX: the scheduler merges every result in
 * its one Lua state, at a few microseconds and about 250 bytes an entry. */
#define CR_LSER_RESULT_MAX 2000000
int cr_lser_dump_max(lua_State *L, int idx, size_t max_values, char **out, size_t *len, char *err, size_t err_n);

/* [-0, +1] Push the value encoded in s (n bytes), evaluated with no access
 * to any global. Returns 0, or -1 with an error message pushed instead. */
int cr_lser_load(lua_State *L, const char *s, size_t n);

#endif
