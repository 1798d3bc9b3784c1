/* The one option reader: argv and help from a table of cr_opt rows. */
#include "base/cr_opt.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_alloc.h"

void *cr_opt_field(const cr_opt *o, void *out) {
    return (char *)out + o->off;
}

/* Names compare with '-' and '_' alike, so --init-blocks finds init_blocks. */
static int same_name(const char *a, const char *b, size_t blen) {
    size_t i = 0;
    for (; i < blen && a[i]; i++) {
        char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
        if (x != y) return 0;
    }
    return i == blen && a[i] == '\0';
}

static const cr_opt *find_n(const cr_opt *opts, const char *name, size_t n) {
    for (const cr_opt *o = opts; o && o->name; o++)
        if (same_name(o->name, name, n)) return o;
    return NULL;
}

const cr_opt *cr_opt_find(const cr_opt *opts, const char *name) {
    return find_n(opts, name, strlen(name));
}

int cr_opt_ok(const cr_opt *o, double x) {
    if (isnan(x)) return 0;
    if (o->type == CR_OPT_INT && (x != floor(x) || fabs(x) > 9007199254740992.0)) return 0;
    if ((o->flags & CR_OPT_RANGE) && !((o->flags & CR_OPT_ABOVE ? x > o->lo : x >= o->lo) && x <= o->hi)) return 0;
    return 1;
}

const char *cr_opt_want(const cr_opt *o, char *buf, size_t cap) {
    if (o->want) {
        snprintf(buf, cap, "%s", o->want);
        return buf;
    }
    const char *kind = o->type == CR_OPT_INT ? "an integer" : "a number";
    switch (o->type) {
    case CR_OPT_STRING:
    case CR_OPT_CUSTOM: snprintf(buf, cap, "a string"); break;
    case CR_OPT_FLAG: snprintf(buf, cap, "a boolean"); break;
    case CR_OPT_ENUM: {
        size_t n = (size_t)snprintf(buf, cap, "one of");
        for (const char *const *c = o->choices; *c && n < cap; c++)
            n += (size_t)snprintf(buf + n, cap - n, "%s %s", c == o->choices ? "" : ",", *c);
        break;
    }
    default:
        if (!(o->flags & CR_OPT_RANGE)) snprintf(buf, cap, "%s", kind);
        else if (o->hi >= 9e15) snprintf(buf, cap, "%s %s %.15g", kind, o->flags & CR_OPT_ABOVE ? ">" : ">=", o->lo);
        else snprintf(buf, cap, "%s in %s%.15g, %.15g]", kind, o->flags & CR_OPT_ABOVE ? "(" : "[", o->lo, o->hi);
    }
    return buf;
}

/* "--init-blocks" or "-k": how a row is written on the command line. */
static void display(const cr_opt *o, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "%s", o->name[1] ? "--" : "-");
    for (const char *p = o->name; *p && n + 1 < cap; p++) buf[n++] = *p == '_' ? '-' : *p;
    buf[n] = '\0';
}

/* Every bad value gets one message shape: "--x: 'v' is not WANT". */
static int bad_value(const cr_opt *o, const char *text, const char *as, cr_err *e) {
    char want[256];
    return cr_errf(e, "%s: '%s' is not %s", as, text, cr_opt_want(o, want, sizeof want));
}

static int set_number(const cr_opt *o, const char *text, const char *as, void *out, cr_err *e) {
    char *end;
    errno = 0;
    if (o->type == CR_OPT_INT) {
        long long x = strtoll(text, &end, 10);
        if (end == text || *end || errno || !cr_opt_ok(o, (double)x)) return bad_value(o, text, as, e);
        *(int64_t *)cr_opt_field(o, out) = x;
        return 0;
    }
    double x = strtod(text, &end);
    if (end == text || *end || errno || !isfinite(x) || !cr_opt_ok(o, x)) return bad_value(o, text, as, e);
    if (o->type == CR_OPT_FLOAT) *(float *)cr_opt_field(o, out) = (float)x;
    else *(double *)cr_opt_field(o, out) = x;
    return 0;
}

int cr_opt_set(const cr_opt *o, const char *text, const char *as, void *out, cr_err *e) {
    char name[128];
    if (!as) display(o, name, sizeof name), as = name;
    switch (o->type) {
    case CR_OPT_INT:
    case CR_OPT_DOUBLE:
    case CR_OPT_FLOAT: return set_number(o, text, as, out, e);
    case CR_OPT_STRING:
    case CR_OPT_CUSTOM:
        *(const char **)cr_opt_field(o, out) = text;
        return 0;
    case CR_OPT_FLAG:
        if (!strcmp(text, "1") || !strcmp(text, "true")) *(int *)cr_opt_field(o, out) = 1;
        else if (!strcmp(text, "0") || !strcmp(text, "false")) *(int *)cr_opt_field(o, out) = 0;
        else return cr_errf(e, "%s takes no value", as);
        return 0;
    case CR_OPT_ENUM:
        for (int i = 0; o->choices[i]; i++)
            if (!strcmp(text, o->choices[i])) {
                *(int *)cr_opt_field(o, out) = i;
                return 0;
            }
        return bad_value(o, text, as, e);
    }
    return cr_errf(e, "%s: bad option type", as);
}

int cr_opt_defaults(const cr_opt *opts, void *out, cr_err *e) {
    for (const cr_opt *o = opts; o && o->name; o++) {
        if (o - opts >= CR_OPT_MAX) return cr_errf(e, "more than %d options in one table", CR_OPT_MAX);
        if (o->dflt && cr_opt_set(o, o->dflt, NULL, out, e) != 0) return -1;
    }
    return 0;
}

void cr_opt_res_free(cr_opt_res *r) {
    free(r->pos);
    r->pos = NULL;
    r->npos = 0;
}

static int is_help(const char *a) {
    return !strcmp(a, "-h") || !strcmp(a, "--help");
}

/* The row argument a names ("--name", "--name=v", "-k"), or NULL; *val is
 * set to the text after '=' when there is one. */
static const cr_opt *lookup(const cr_opt *opts, const char *a, const char **val) {
    *val = NULL;
    if (a[0] != '-' || !a[1]) return NULL;
    const char *name = a[1] == '-' ? a + 2 : a + 1;
    if (a[1] != '-' && name[1]) return NULL; /* "-xy": not a one-letter name */
    const char *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    const cr_opt *o = find_n(opts, name, n);
    if (o && a[1] != '-' && o->name[1]) return NULL; /* "-n" does not abbreviate "--nodes" */
    if (o && eq) *val = eq + 1;
    return o;
}

/* One option at argv[*i]: its value from "=v" or the next argument. */
static int take(const cr_opt_cmd *c, const cr_opt *o, int argc, char **argv, int *i, void *out, cr_err *e) {
    const char *a = argv[*i], *val;
    lookup(c->opts, a, &val);
    char as[128];
    snprintf(as, sizeof as, "%.*s", (int)(val ? (size_t)(val - 1 - a) : strlen(a)), a);
    if (o->type == CR_OPT_FLAG) return cr_opt_set(o, val ? val : "1", as, out, e);
    if (!val) {
        if (*i + 1 >= argc) return cr_errf(e, "%s needs a value", as);
        val = argv[++*i];
    }
    return cr_opt_set(o, val, as, out, e);
}

static int check_after(const cr_opt_cmd *c, const cr_opt_res *r, cr_err *e) {
    int i = 0;
    for (const cr_opt *o = c->opts; o && o->name; o++, i++)
        if ((o->flags & CR_OPT_REQUIRED) && !(r->seen >> i & 1)) {
            char name[128];
            display(o, name, sizeof name);
            return cr_errf(e, "%s is required", name);
        }
    if (r->npos < c->min_pos) return cr_errf(e, "missing argument (%s)", c->args ? c->args : "see --help");
    if (c->max_pos >= 0 && r->npos > c->max_pos)
        return cr_errf(e, "unexpected argument '%s'", r->pos[c->max_pos]);
    return 0;
}

int cr_opt_parse(const cr_opt_cmd *c, int argc, char **argv, void *out, cr_opt_res *r, cr_err *e) {
    r->pos = cr_xcalloc((size_t)(argc > 0 ? argc : 1), sizeof *r->pos);
    r->npos = 0;
    r->seen = 0;
    if (cr_opt_defaults(c->opts, out, e) != 0) return -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int stopped = (c->flags & CR_OPT_POS_STOPS) && r->npos > 0;
        if (!strcmp(a, "--")) {
            while (++i < argc) r->pos[r->npos++] = argv[i];
            break;
        }
        if (is_help(a) && !stopped) return 1;
        const cr_opt *o = lookup(c->opts, a, &val);
        if (o) {
            if (take(c, o, argc, argv, &i, out, e) != 0) return -1;
            r->seen |= (uint64_t)1 << (o - c->opts);
        } else if (a[0] == '-' && a[1] && !stopped) {
            return cr_errf(e, "unknown option '%s'", a);
        } else {
            r->pos[r->npos++] = argv[i];
        }
    }
    return check_after(c, r, e);
}

/* ------------------------------------------------------------------ help */

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(sbuf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)(k > 0 ? k : 0) + 64;
        b->s = cr_xrealloc(b->s, b->cap);
    }
}

static const char *meta_of(const cr_opt *o) {
    if (o->meta) return o->meta;
    switch (o->type) {
    case CR_OPT_INT: return "N";
    case CR_OPT_DOUBLE:
    case CR_OPT_FLOAT: return "X";
    case CR_OPT_ENUM: return "WORD";
    case CR_OPT_FLAG: return "";
    default: return "VALUE";
    }
}

/* One help line: "  --name META   help (default D; range)". */
static void help_line(sbuf *b, const cr_opt *o) {
    char name[160], want[256];
    display(o, name, sizeof name);
    const char *m = meta_of(o);
    if (m[0]) snprintf(name + strlen(name), sizeof name - strlen(name), " %s", m);
    add(b, "  %-24s %s", name, o->help ? o->help : "");
    int paren = 0;
    if (o->type == CR_OPT_ENUM || (o->flags & CR_OPT_RANGE) || o->want)
        add(b, "%s%s", paren++ ? "; " : " (", cr_opt_want(o, want, sizeof want));
    if (o->dflt && o->type != CR_OPT_FLAG) add(b, "%sdefault %s", paren++ ? "; " : " (", o->dflt);
    if (o->flags & CR_OPT_REQUIRED) add(b, "%srequired", paren++ ? "; " : " (");
    add(b, "%s\n", paren ? ")" : "");
}

char *cr_opt_help(const cr_opt_cmd *c) {
    sbuf b = {cr_xmalloc(256), 0, 256};
    b.s[0] = '\0';
    add(&b, "usage: %s%s%s\n", c->name, c->args ? " " : "", c->args ? c->args : "");
    if (c->about) add(&b, "%s", c->about);
    add(&b, "options:\n");
    for (const cr_opt *o = c->opts; o && o->name; o++)
        if (!(o->flags & CR_OPT_HIDDEN)) help_line(&b, o);
    add(&b, "  %-24s %s\n", "-h, --help", "print this help and exit");
    return b.s;
}
