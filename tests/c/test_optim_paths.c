/* Every update rule gives bitwise the same rows wherever it is applied: a
 * plain (classic) table, a relocated table and a replicated one, on two node
 * threads with one C worker each (the worker of node 1 does the pushes).
 *
 * For every row of cr_optim_rules, and again on an i32 table for a rule
 * with an int32 form, three tables with the same definition (4 keys: 0 and 1
 * at node 0, 2 and 3 at node 1) get the same pushes, each waited for:
 *   plain  keys 0, 1 updated at their home (cr_table.c), 2, 3 in place
 *          (cr_wclient.c);
 *   moved  relocation mode: the first pushes served by the homes
 *          (cr_serve_reloc.c), then every key localized to node 1 and the
 *          rest applied there (cr_wclient.c on the relocated rows);
 *   repl   every key replicated: applied to node 1's replica
 *          (cr_replica.c), read back before any sync round (a round
 *          rebuilds a replica from the nodes' summed changes, which rounds;
 *          the worker checks the round counter and the test retries when a
 *          round got in between).
 * A rule that overwrites (assign) cannot be replicated: plain and moved
 * only. The rows read back must equal, bit for bit, a reference computed by
 * cr_optim_apply on local arrays. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cr_test.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_replica.h"
#include "ps/cr_wclient.h"

#define NODES 2
#define KEYS 4
#define PUSHES 12
#define MAXDIM 11
#define MAXV (2 * CR_OPTIM_NKINDS)

typedef struct variant {
    cr_optim_kind kind;
    int i32;
} variant;

static variant vars[MAXV];
static int nvars;

static void list_variants(void) {
    nvars = 0;
    for (int k = 0; k < CR_OPTIM_NKINDS; k++) {
        vars[nvars++] = (variant){(cr_optim_kind)k, 0};
        if (cr_optim_rules[k].apply_i32) vars[nvars++] = (variant){(cr_optim_kind)k, 1};
    }
}

static int32_t dim_of(const variant *v) { return v->kind == CR_OPTIM_DBPG ? 2 : MAXDIM; }

static int replicable(const variant *v) { return !(cr_optim_rules[v->kind].flags & CR_OPTIM_OVERWRITES); }

/* The definition of variant v (every parameter at a value that makes the
 * rule work: all of them nonzero where they are used). */
static cr_table_def def_of(const variant *v, const char *what, int vi) {
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s_%s%s_%d", what, cr_optim_rules[v->kind].name, v->i32 ? "_i32" : "", vi);
    d.keys = KEYS;
    d.dim = dim_of(v);
    d.dtype = v->i32 ? CR_DTYPE_I32 : CR_DTYPE_F32;
    d.optim = (cr_optim){.kind = v->kind, .lr = 0.3f, .eps = 1e-6f, .init = 0.1f, .l1 = 0.05f, .l2 = 0.1f,
                         .beta = 1, .delta = 0.01f, .ada_c = 0.5f, .tau = 2};
    return d;
}

/* Push p (0-based) of the sequence: KEYS rows of dim values. dbpg's first
 * push registers the pusher (u < 0); its u is positive after that. An i32
 * table gets int32 bit patterns (some negative, some near the wrap). */
static void push_rows(const variant *v, int p, float *g) {
    int32_t dim = dim_of(v);
    uint64_t s = (uint64_t)p * 0x9E3779B97F4A7C15ULL + (uint64_t)v->kind * 7 + (uint64_t)v->i32;
    for (int i = 0; i < KEYS * dim; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
        if (v->i32) {
            int32_t x = (int32_t)(uint32_t)(s >> 32);
            memcpy(g + i, &x, sizeof x);
        } else {
            g[i] = (float)(2 * u - 1);
        }
    }
    if (v->kind == CR_OPTIM_DBPG && !v->i32)
        for (int k = 0; k < KEYS; k++) g[k * dim + 1] = p == 0 ? -1.0f : 0.5f + fabsf(g[k * dim + 1]);
}

/* The rows after every push, by cr_optim_apply on local rows (initial
 * values zero, as the tables start). */
static void reference(const variant *v, float *out) {
    cr_table_def d = def_of(v, "ref", 0);
    d.optim.i32 = v->i32;
    int32_t dim = d.dim, sd = cr_optim_state_dim(&d.optim, dim);
    float st[KEYS * 2 * MAXDIM + KEYS * 8], g[KEYS * MAXDIM];
    memset(out, 0, (size_t)(KEYS * dim) * sizeof *out);
    for (int k = 0; k < KEYS; k++) cr_optim_init_state(&d.optim, st + k * sd, dim);
    for (int p = 0; p < PUSHES; p++) {
        push_rows(v, p, g);
        for (int k = 0; k < KEYS; k++) cr_optim_apply(&d.optim, out + k * dim, st + k * sd, g + k * dim, dim);
    }
}

/* Pushes [from, to) of the sequence to table t, each waited for. */
static int push_range(cr_wclient *w, cr_shard *s, const variant *v, int from, int to, cr_err *e) {
    int64_t keys[KEYS] = {0, 1, 2, 3};
    float g[KEYS * MAXDIM];
    for (int p = from; p < to; p++) {
        uint32_t req;
        push_rows(v, p, g);
        if (cr_wclient_push_copy(w, s, keys, KEYS, g, &req, e) < 0 || cr_wclient_wait(w, req, e) < 0) return -1;
    }
    return 0;
}

/* One variant's three tables (ids base, base + 1, base + 2): pushes, then
 * the rows compared with the reference. Returns "ok", "raced" (a sync round
 * came between the replica's pushes and its read) or what differs. */
static const char *check_variant(cr_node *n, cr_wclient *w, int vi, int base, char *msg, size_t msgn) {
    const variant *v = &vars[vi];
    int32_t dim = dim_of(v);
    int64_t keys[KEYS] = {0, 1, 2, 3};
    float want[KEYS * MAXDIM], got[KEYS * MAXDIM];
    const char *what[3] = {"plain", "moved", "repl"};
    cr_err e;
    reference(v, want);
    int64_t round0 = cr_replicas_round(cr_node_replicas(n));
    for (int t = 0; t < (replicable(v) ? 3 : 2); t++) {
        cr_shard *s = cr_node_table_at(n, base + t, NULL);
        uint32_t loc;
        if (!s || push_range(w, s, v, 0, PUSHES / 2, &e) < 0) goto fail;
        if (t == 1 && (cr_wclient_localize(w, s, keys, KEYS, &loc, &e) < 0 || cr_wclient_wait(w, loc, &e) < 0))
            goto fail;
        if (push_range(w, s, v, PUSHES / 2, PUSHES, &e) < 0 || cr_wclient_pull_borrow(w, s, keys, KEYS, got, &e) < 0)
            goto fail;
        if (t == 2 && cr_replicas_round(cr_node_replicas(n)) != round0) return "raced";
        for (int i = 0; i < KEYS * dim; i++)
            if (memcmp(&got[i], &want[i], sizeof got[i]) != 0) {
                snprintf(msg, msgn, "%s %s%s: key %d value %d is %.9g, the rule gives %.9g", what[t],
                         cr_optim_rules[v->kind].name, v->i32 ? " (i32)" : "", i / dim, i % dim, got[i], want[i]);
                return msg;
            }
        continue;
    fail:
        snprintf(msg, msgn, "%s %s: %.400s", what[t], cr_optim_rules[v->kind].name, s ? e.msg : "no table");
        return msg;
    }
    return "ok";
}

/* Command "quiet": no timed sync round from now on (a round already due
 * may still run); "check V B": node 1's worker checks variant V on the
 * tables from id B. */
static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    cr_cmd c;
    char msg[512], arg[32];
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *r = "ok";
        int vi = 0, base = 0;
        snprintf(arg, sizeof arg, "%.*s", (int)(c.n2 < sizeof arg ? c.n2 : sizeof arg - 1), c.n2 ? c.p2 : "");
        if (c.n1 == 5 && !memcmp(c.p1, "quiet", 5)) cr_replicas_set_sync_ms(cr_node_replicas(n), 1 << 30);
        else if (cr_node_id(n) != 1) r = "ok";
        else if (!w || sscanf(arg, "%d %d", &vi, &base) != 2 || vi < 0 || vi >= nvars) r = "bad command";
        else r = check_variant(n, w, vi, base, msg, sizeof msg);
        cr_node_reply(n, lw, 1, r, strlen(r));
    }
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

typedef struct answer {
    char text[512];
} answer;

static int on_result(void *arg, int worker, const char *data, size_t len, cr_err *e) {
    (void)e;
    answer *a = arg;
    if (worker == 1) snprintf(a->text, sizeof a->text, "%.*s", (int)len, data);
    return 0;
}

/* Variant vi's three tables from id base; the relocated one in relocation
 * mode, every key of the third replicated (when the rule allows it). */
static int make_tables(cr_job *j, int vi, int base, int try) {
    cr_err e;
    int64_t keys[KEYS] = {0, 1, 2, 3};
    const char *what[3] = {"plain", "moved", "repl"};
    for (int t = 0; t < 3; t++) {
        char tag[32];
        snprintf(tag, sizeof tag, "%s%d", what[t], try);
        cr_table_def d = def_of(&vars[vi], tag, vi);
        if (cr_job_table(j, base + t, &d, &e) < 0) {
            printf("  table %s: %s\n", d.name, e.msg);
            return -1;
        }
    }
    if (cr_job_manage(j, base + 1, 1, NULL, 0, &e) < 0) return -1;
    if (replicable(&vars[vi]) && cr_job_manage(j, base + 2, 0, keys, KEYS, &e) < 0) {
        printf("  replicate: %s\n", e.msg);
        return -1;
    }
    return 0;
}

/* A try whose replica read was raced by a sync round runs again on fresh
 * tables (at most 3 tries). */
static void test_every_rule(void) {
    list_variants();
    test_nodes t = {.hooks = &hooks, .count = NODES};
    cr_job_opts o = {.nodes = NODES, .workers = 1, .seed = 1, .spawn = 0, .on_listen = test_nodes_start,
                     .on_listen_arg = &t, .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    CR_CHECK(j != NULL);
    if (!j) return;
    answer a = {{0}};
    cr_job_cb cb = {.result = on_result, .arg = &a};
    CR_CHECK(cr_job_call(j, "quiet", 5, "", 0, &cb, &e) == 0);
    int next = 0, raced = 0;
    for (int vi = 0; vi < nvars; vi++) {
        for (int try = 0; try < 3; try++, raced++) {
            CR_CHECK(make_tables(j, vi, next, try) == 0);
            char arg[32];
            snprintf(arg, sizeof arg, "%d %d", vi, next);
            next += 3;
            a.text[0] = '\0';
            CR_CHECK(cr_job_call(j, "check", 5, arg, strlen(arg), &cb, &e) == 0);
            if (strcmp(a.text, "raced")) break;
        }
        if (strcmp(a.text, "ok")) printf("  %s\n", a.text);
        CR_CHECK(!strcmp(a.text, "ok"));
    }
    printf("  %d variants (rules, and their i32 forms), %d tries raced by a sync round\n", nvars, raced);
    cr_job_close(&j);
    test_nodes_join(&t);
}

int main(void) {
    CR_RUN(test_every_rule);
    return cr_test_done();
}
