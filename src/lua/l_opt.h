#ifndef CR_L_OPT_H
#define CR_L_OPT_H
/* Lua options tables read against cr_opt rows (src/base/cr_opt.h), so a
 * binding declares its options once, as the CLI does.
 *
 * Keys are the rows' names. A Lua value must be of the row's type: an
 * integer (a float with an integral value counts) for CR_OPT_INT, a number
 * for CR_OPT_DOUBLE and CR_OPT_FLOAT, a string for CR_OPT_STRING and CR_OPT_ENUM (one of the
 * choices), a boolean (or a number: non-zero is true) for CR_OPT_FLAG;
 * CR_OPT_CUSTOM values are left to the binding. Ranges are checked.
 * Messages (raised with luaL_error; the Lua wrappers re-raise at the
 * user's line):
 *   [FN: ]unknown NOUN 'key'                 (NOUN: "option" by default)
 *   [FN: ][NOUN ]'key' must be WANT (got V)  (WANT from cr_opt_want)
 *   [FN: ][NOUN ]'key' is required */

#include <lua.h>
#include <stdint.h>

#include "base/cr_opt.h"

typedef struct cr_lopt_set {
    const char *fn;     /* prefix of the messages ("mf_load"), or NULL */
    const char *noun;   /* "partition option" in place of "option", or NULL */
    const cr_opt *opts; /* the rows */
} cr_lopt_set;

/* [-0, +0] Read the options table at idx into out: the rows' defaults
 * first, then every key of the table (nil or none: defaults only; any
 * other non-table raises). Returns the rows given, as cr_opt_res.seen.
 * CR_OPT_STRING fields point into the table's strings: valid while the
 * table is alive. Raises on an unknown key or a bad value. */
uint64_t cr_lopt_read(lua_State *L, int idx, const cr_lopt_set *s, void *out);

#endif
