#ifndef CR_OPT_H
#define CR_OPT_H
/* One option reader for the CLI and the Lua bindings.
 *
 * A command (or a binding) declares its options once, as a table of cr_opt
 * rows ending with a row whose name is NULL. Each row names a field of the
 * caller's options struct (by offset) and says its type, range, default and
 * help text. From that one table:
 *   - cr_opt_parse reads argv ("--name VALUE", "--name=VALUE", "-k VALUE"
 *     for one-letter names, "--flag"), with strtol/strtod-style checks;
 *   - cr_opt_help writes the command's --help text;
 *   - src/lua/l_opt.c reads a Lua options table (same names, same checks).
 * Names are written with '_' (the Lua key); on the command line '-' is
 * accepted for '_' and shown in the help ("init_blocks" is --init-blocks).
 *
 * Field types by row type: CR_OPT_INT int64_t, CR_OPT_DOUBLE double,
 * CR_OPT_FLOAT float (range checked on the value read, then rounded),
 * CR_OPT_STRING const char * (points into argv, or into the Lua string, or
 * at the default literal), CR_OPT_FLAG int (0/1), CR_OPT_ENUM int (index
 * into `choices`), CR_OPT_CUSTOM const char * on the command line, not
 * touched by the Lua reader.
 *
 * Messages (in cr_err, without a command prefix; the caller adds one):
 *   unknown option '--x'     --x needs a value     --x is required
 *   --x takes no value (a flag given "=v" other than 1/0/true/false)
 *   --x: 'v' is not WANT     (not a number, out of range, not a choice;
 *                              WANT from cr_opt_want: "an integer in [1, 1024]") */

#include <stddef.h>
#include <stdint.h>

#include "base/cr_err.h"

/* CR_OPT_CUSTOM: a value the caller reads itself (in Lua, a Dict or a
 * path); the reader only knows the name (so it is not "unknown"). On the
 * command line it is stored like a string. */
typedef enum cr_opt_type {
    CR_OPT_INT, CR_OPT_DOUBLE, CR_OPT_STRING, CR_OPT_FLAG, CR_OPT_ENUM, CR_OPT_CUSTOM, CR_OPT_FLOAT
} cr_opt_type;

/* Row flags. */
#define CR_OPT_REQUIRED 1u /* missing = error */
#define CR_OPT_RANGE 2u    /* lo..hi checked (INT, DOUBLE; inclusive) */
#define CR_OPT_HIDDEN 4u   /* accepted, left out of the help */
#define CR_OPT_ABOVE 8u    /* with CR_OPT_RANGE: lo itself is out (x > lo) */

typedef struct cr_opt {
    const char *name;            /* "nodes"; NULL ends the table */
    cr_opt_type type;
    size_t off;                  /* offsetof(the options struct, field) */
    unsigned flags;              /* CR_OPT_* above */
    double lo, hi;               /* with CR_OPT_RANGE */
    const char *dflt;            /* default as text (parsed like a value), or NULL: field left as is */
    const char *meta;            /* value placeholder in the help ("N", "FILE"), NULL = from the type */
    const char *help;            /* one line for --help */
    const char *const *choices;  /* CR_OPT_ENUM: NULL-ended list */
    const char *want;            /* what a good value is, for messages ("an integer >= 1"); NULL = from type and range */
} cr_opt;

/* A command line: what cr_opt_parse accepts and cr_opt_help describes. */
#define CR_OPT_POS_STOPS 1u /* after the first positional, unknown "-x" and "-h" are positionals too */

typedef struct cr_opt_cmd {
    const char *name;    /* "crescent data zipf-mf" */
    const char *args;    /* synopsis after the name: "JOB.lua [options] [-- ARGS...]" */
    const char *about;   /* lines after the usage line (ending in '\n'), or NULL */
    const cr_opt *opts;  /* the table; may be NULL (no options) */
    int min_pos, max_pos; /* number of positionals allowed; max_pos < 0 = any */
    unsigned flags;      /* CR_OPT_POS_STOPS */
} cr_opt_cmd;

/* What cr_opt_parse found besides the option values. pos (cr_x-allocated,
 * free with cr_opt_res_free) points into argv; "--" ends the options and is
 * not kept. seen has bit i set when row i was given. */
typedef struct cr_opt_res {
    char **pos;
    int npos;
    uint64_t seen;
} cr_opt_res;

#define CR_OPT_MAX 64 /* rows per table (bits of `seen`) */

/* Set every field that has a default to it. 0, or -1 if a default does not
 * parse or the table has more than CR_OPT_MAX rows (bugs in the table; e
 * says which). cr_opt_parse and the Lua reader call it first, so every
 * `seen` bit fits. */
int cr_opt_defaults(const cr_opt *opts, void *out, cr_err *e);

/* Parse argv[1..argc) (argv[0] is the command) into out, after applying
 * defaults. Returns 0 ok, 1 when -h/--help was given (nothing else checked),
 * -1 on a usage error (message in e). r is filled in every case and must be
 * freed with cr_opt_res_free. */
int cr_opt_parse(const cr_opt_cmd *c, int argc, char **argv, void *out, cr_opt_res *r, cr_err *e);
void cr_opt_res_free(cr_opt_res *r);

/* Set row o's field in out from text (the command-line form). `as` is the
 * name as the user typed it, for messages (NULL: "--name"). 0 or -1. */
int cr_opt_set(const cr_opt *o, const char *text, const char *as, void *out, cr_err *e);

/* The row named `name` ('-' and '_' alike), or NULL. */
const cr_opt *cr_opt_find(const cr_opt *opts, const char *name);

/* Is x an acceptable value for row o (range, and integral for CR_OPT_INT)? */
int cr_opt_ok(const cr_opt *o, double x);

/* What a good value of row o is, for messages: o->want, or built from the
 * type and range ("an integer in [1, 1024]", "a number >= 0", "a boolean",
 * "one of a, b"). Written into buf; returns buf. */
const char *cr_opt_want(const cr_opt *o, char *buf, size_t cap);

/* The --help text of c: usage line, about, one line per visible option
 * (with its default and range). Returns a cr_x-allocated string. */
char *cr_opt_help(const cr_opt_cmd *c);

/* Address of row o's field in out. */
void *cr_opt_field(const cr_opt *o, void *out);

#endif
