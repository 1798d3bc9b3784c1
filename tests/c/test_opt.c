/* cr_opt: argv parsing against a spec table, messages, defaults, help. */
#include <math.h>
#include <stddef.h>

#include "base/cr_opt.h"
#include "cr_test.h"

typedef struct o {
    int64_t nodes, k, seed;
    double lr;
    const char *out;
    int json, mode;
} o;

static const char *const modes[] = {"examples", "neighbours", NULL};

static const cr_opt spec[] = {
    {"nodes", CR_OPT_INT, offsetof(o, nodes), CR_OPT_RANGE, 1, 1024, NULL, NULL, "nodes to start", NULL, NULL},
    {"k", CR_OPT_INT, offsetof(o, k), CR_OPT_REQUIRED | CR_OPT_RANGE, 1, 1 << 20, NULL, "K", "parts", NULL, NULL},
    {"init_seed", CR_OPT_INT, offsetof(o, seed), 0, 0, 0, "7", "S", "first seed", NULL, NULL},
    {"lr", CR_OPT_DOUBLE, offsetof(o, lr), CR_OPT_RANGE, 0, 1, "0.5", NULL, "learning rate", NULL, NULL},
    {"out", CR_OPT_STRING, offsetof(o, out), 0, 0, 0, NULL, "FILE", "output", NULL, NULL},
    {"json", CR_OPT_FLAG, offsetof(o, json), 0, 0, 0, NULL, NULL, "JSON lines", NULL, NULL},
    {"select", CR_OPT_ENUM, offsetof(o, mode), 0, 0, 0, "examples", NULL, "what to pick", modes, NULL},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};

static const cr_opt_cmd cmd = {"crescent t", "FILE [options]", "  a test command\n", spec, 1, 1, 0};

/* Parse a NULL-ended argument list; returns cr_opt_parse's status. */
static int parse(o *v, cr_err *e, const char **args) {
    char *argv[32];
    int argc = 0;
    argv[argc++] = "t";
    while (*args) argv[argc++] = (char *)*args++;
    *v = (o){.nodes = -1};
    cr_opt_res r;
    int rc = cr_opt_parse(&cmd, argc, argv, v, &r, e);
    if (rc == 0 && strcmp(r.pos[0], "f.txt") != 0) rc = 99; /* the one positional */
    cr_opt_res_free(&r);
    return rc;
}

#define ARGS(...) ((const char *[]){__VA_ARGS__, NULL})

static void test_values_and_forms(void) {
    o v;
    cr_err e;
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "4", "--nodes=3", "--lr", "0.25", "--json", "--out", "x")) == 0);
    CR_CHECK(v.k == 4 && v.nodes == 3 && v.json == 1);
    CR_CHECK_NEAR(v.lr, 0.25, 0);
    CR_CHECK_STR(v.out, "x");
    CR_CHECK(v.seed == 7 && v.mode == 0); /* defaults */
    CR_CHECK(parse(&v, &e, ARGS("--init-seed", "9", "--k=2", "f.txt", "--select", "neighbours")) == 0);
    CR_CHECK(v.seed == 9 && v.k == 2 && v.mode == 1 && v.nodes == -1); /* no default: left as is */
}

static void test_messages(void) {
    o v;
    cr_err e;
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "2", "--nodes", "x")) == -1);
    CR_CHECK_STR(e.msg, "--nodes: 'x' is not an integer in [1, 1024]");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "2", "--nodes", "0")) == -1);
    CR_CHECK_STR(e.msg, "--nodes: '0' is not an integer in [1, 1024]");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "2", "--nodes", "2.5")) == -1);
    CR_CHECK_STR(e.msg, "--nodes: '2.5' is not an integer in [1, 1024]");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "2", "--lr", "1e400")) == -1);
    CR_CHECK_STR(e.msg, "--lr: '1e400' is not a number in [0, 1]");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "2", "--lr", "nan")) == -1);
    CR_CHECK_STR(e.msg, "--lr: 'nan' is not a number in [0, 1]");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "2", "--frob")) == -1);
    CR_CHECK_STR(e.msg, "unknown option '--frob'");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k")) == -1);
    CR_CHECK_STR(e.msg, "-k needs a value");
    CR_CHECK(parse(&v, &e, ARGS("f.txt")) == -1);
    CR_CHECK_STR(e.msg, "-k is required");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "g.txt", "-k", "1")) == -1);
    CR_CHECK_STR(e.msg, "unexpected argument 'g.txt'");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "1", "--json=maybe")) == -1);
    CR_CHECK_STR(e.msg, "--json takes no value");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "1", "--select", "all")) == -1);
    CR_CHECK_STR(e.msg, "--select: 'all' is not one of examples, neighbours");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-k", "99999999999999999999")) == -1);
    CR_CHECK_STR(e.msg, "-k: '99999999999999999999' is not an integer in [1, 1048576]");
    CR_CHECK(parse(&v, &e, ARGS("f.txt", "-n", "1")) == -1); /* no abbreviations */
    CR_CHECK_STR(e.msg, "unknown option '-n'");
}

static void test_help_and_dashdash(void) {
    o v;
    cr_err e;
    CR_CHECK(parse(&v, &e, ARGS("--help", "--frob")) == 1); /* help wins, nothing else checked */
    char *h = cr_opt_help(&cmd);
    CR_CHECK(strstr(h, "usage: crescent t FILE [options]\n  a test command\n") == h);
    CR_CHECK(strstr(h, "--nodes N") && strstr(h, "(an integer in [1, 1024])"));
    CR_CHECK(strstr(h, "--init-seed S") && strstr(h, "(default 7)"));
    CR_CHECK(strstr(h, "(one of examples, neighbours; default examples)"));
    CR_CHECK(strstr(h, "-k K") && strstr(h, "required"));
    free(h);
    char *argv[] = {"t", "-k", "1", "--", "f.txt", "--nodes"};
    cr_opt_res r;
    CR_CHECK(cr_opt_parse(&cmd, 6, argv, &v, &r, &e) == -1); /* two positionals after -- */
    CR_CHECK(r.npos == 2 && !strcmp(r.pos[1], "--nodes"));
    cr_opt_res_free(&r);
}

static void test_pos_stops(void) {
    cr_opt_cmd c = cmd;
    c.flags = CR_OPT_POS_STOPS;
    c.max_pos = -1;
    char *argv[] = {"t", "-k", "1", "job.lua", "--frob", "-h", "--nodes", "2"};
    o v = {0};
    cr_opt_res r;
    cr_err e;
    CR_CHECK(cr_opt_parse(&c, 8, argv, &v, &r, &e) == 0);
    CR_CHECK(r.npos == 3 && !strcmp(r.pos[1], "--frob") && !strcmp(r.pos[2], "-h"));
    CR_CHECK(v.nodes == 2 && (r.seen & 1) && (r.seen & 2) && !(r.seen & 4));
    cr_opt_res_free(&r);
}

static void test_ok_and_want(void) {
    char buf[128];
    CR_CHECK(cr_opt_ok(&spec[0], 5) && !cr_opt_ok(&spec[0], 5.5) && !cr_opt_ok(&spec[0], 0));
    CR_CHECK(!cr_opt_ok(&spec[3], NAN));
    CR_CHECK_STR(cr_opt_want(&spec[3], buf, sizeof buf), "a number in [0, 1]");
    CR_CHECK_STR(cr_opt_want(&spec[5], buf, sizeof buf), "a boolean");
    cr_opt r = {"r", CR_OPT_INT, 0, CR_OPT_RANGE, 1, 1e18, NULL, NULL, NULL, NULL, NULL};
    CR_CHECK_STR(cr_opt_want(&r, buf, sizeof buf), "an integer >= 1");
    CR_CHECK(cr_opt_find(spec, "init-seed") == &spec[2] && cr_opt_find(spec, "init") == NULL);
}

/* A float field: the value is range-checked as read, then stored rounded;
 * an excluded lower bound (CR_OPT_ABOVE) refuses the bound itself. */
typedef struct fo {
    double pad;
    float rate;
} fo;

static void test_float_above(void) {
    fo v = {0, 0};
    const cr_opt p = {"rate", CR_OPT_FLOAT, offsetof(fo, rate), CR_OPT_RANGE | CR_OPT_ABOVE, 0, INFINITY,
                      "0.1", NULL, NULL, NULL, NULL};
    cr_opt rows[2] = {p, {NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL}};
    cr_err e;
    char buf[128];
    CR_CHECK(cr_opt_defaults(rows, &v, &e) == 0 && v.rate == 0.1f && v.pad == 0);
    CR_CHECK(!cr_opt_ok(&p, 0) && cr_opt_ok(&p, 1e-30) && !cr_opt_ok(&p, -1));
    CR_CHECK_STR(cr_opt_want(&p, buf, sizeof buf), "a number > 0");
    CR_CHECK(cr_opt_set(&p, "0", "--rate", &v, &e) < 0);
    CR_CHECK_STR(e.msg, "--rate: '0' is not a number > 0");
    CR_CHECK(cr_opt_set(&p, "2.5", "--rate", &v, &e) == 0 && v.rate == 2.5f);
    cr_opt unit = p;
    unit.hi = 1;
    CR_CHECK_STR(cr_opt_want(&unit, buf, sizeof buf), "a number in (0, 1]");
}

int main(void) {
    CR_RUN(test_float_above);
    CR_RUN(test_values_and_forms);
    CR_RUN(test_messages);
    CR_RUN(test_help_and_dashdash);
    CR_RUN(test_pos_stops);
    CR_RUN(test_ok_and_want);
    return cr_test_done();
}
