/* Sampling through the parameter server without Lua: a scheduler and two
 * node threads on loopback, C workers using cr_wsample (src/ps/cr_wsample.h).
 * Table T has row k = {k, k}. Checks, at every level: rows match keys in
 * blocking and asynchronous pulls, levels 1-3 see remote keys and level 4
 * only local ones, fetches are all released once handles are pulled or
 * closed (and pools stay bounded), a handle kept across a scheme change is
 * served as prepared, the counters add up and reach job:stats' node table;
 * weights sent in several DIST parts are assembled right; the node refuses
 * bad DIST messages; cr_wclient_test and cr_wclient_forget. */
#include <pthread.h>
#include <stdlib.h>

#include "cr_test.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_proto.h"
#include "ps/cr_wclient.h"
#include "ps/cr_wsample.h"

#define K 60
#define DIM 2


/* Per worker, across commands: its sampling state and a kept handle. */
typedef struct wstate {
    cr_wsample *ws;
    cr_shandle kept;
    int has_kept;
} wstate;

/* Pull handle h to the end in portions of 7, alternating blocking and
 * asynchronous pulls; count remote keys; check every row. */
static const char *drain(wstate *st, cr_shard *s, cr_shandle h, int64_t *remote) {
    cr_err e;
    int64_t keys[7], left;
    float rows[7 * DIM];
    for (int turn = 0; (left = cr_wsample_left(st->ws, h)) > 0; turn++) {
        int64_t m = left < 7 ? left : 7;
        uint32_t pend = 0;
        if (cr_wsample_pull(st->ws, s, h, m, keys, rows, turn % 2 ? &pend : NULL, &e) < 0) return "pull";
        if (pend && cr_wsample_finish(st->ws, pend, &e) < 0) return "finish";
        for (int64_t i = 0; i < m; i++) {
            if (rows[i * DIM] != (float)keys[i] || rows[i * DIM + 1] != (float)keys[i]) return "row does not match key";
            if (keys[i] < s->lo || keys[i] >= s->hi) (*remote)++;
        }
    }
    return "ok";
}

/* args "L": the level the job set, to check what it does. */
static const char *draw(cr_node *n, wstate *st, int level) {
    cr_shard *s = cr_node_table_at(n, 0, NULL);
    cr_err e;
    cr_shandle h, h2;
    int64_t remote = 0;
    for (int r = 0; r < 3; r++) {
        if (cr_wsample_prepare(st->ws, s, "pi", 50, &h, &e) < 0) return "prepare";
        const char *err = drain(st, s, h, &remote);
        if (strcmp(err, "ok")) return err;
    }
    if (level == 4 && remote) return "level 4 drew a remote key";
    if (level < 4 && !remote) return "no remote key at levels 1-3 on 2 nodes";
    /* a handle closed half-way, one pulled asynchronously and never waited for */
    if (cr_wsample_prepare(st->ws, s, "pi", 40, &h, &e) < 0 || cr_wsample_prepare(st->ws, s, "pi", 30, &h2, &e) < 0)
        return "prepare 2";
    int64_t keys[10];
    float rows[10 * DIM];
    uint32_t pend;
    if (cr_wsample_pull(st->ws, s, h, 10, keys, rows, &pend, &e) < 0) return "pull async";
    if (pend && cr_wsample_finish(st->ws, pend, &e) < 0) return "finish";
    cr_wsample_close(st->ws, h);
    cr_wsample_close(st->ws, h2);
    if (cr_wsample_left(st->ws, h) != -1) return "closed handle still open";
    if (cr_wsample_pull(st->ws, s, h, 1, keys, rows, NULL, &e) == 0 || !strstr(e.msg, "closed")) return "closed pull";
    /* fetches left: none at levels 1 and 4, the two live pools at 2 and 3
     * (plus the kept handle's, while there is one) */
    int64_t f = cr_wsample_fetches(st->ws);
    if (!st->has_kept && ((level == 1 || level == 4) ? f != 0 : f > 2)) return "fetches not released";
    return "ok";
}

static const char *keep(cr_node *n, wstate *st) {
    cr_err e;
    st->has_kept = cr_wsample_prepare(st->ws, cr_node_table_at(n, 0, NULL), "pi", 80, &st->kept, &e) == 0;
    return st->has_kept ? "ok" : "keep";
}

static const char *finish_kept(cr_node *n, wstate *st) {
    int64_t remote = 0;
    const char *err = drain(st, cr_node_table_at(n, 0, NULL), st->kept, &remote);
    if (strcmp(err, "ok")) return err;
    st->has_kept = 0;
    return remote > 0 ? "ok" : "kept handle lost its remote keys after the switch";
}

/* cr_wclient_test until done, then a forgotten pull whose buffer is freed
 * at once, then a normal pull: the late reply must be dropped. */
static const char *client(cr_node *n, cr_wclient *w) {
    cr_shard *s = cr_node_table_at(n, 0, NULL);
    int64_t k = cr_node_id(n) == 0 ? K - 1 : 0, keys[3] = {k, k, k};
    float out[3 * DIM];
    uint32_t q;
    cr_err e;
    if (cr_wclient_pull_copy(w, s, keys, 3, out, &q, &e) < 0 || q == 0) return "remote pull";
    int rc, spins = 0;
    while ((rc = cr_wclient_test(w, q, &e)) == 0) spins++;
    if (rc < 0 || out[0] != (float)k || cr_wclient_test(w, q, &e) != 1) return "test";
    float *gone = malloc(3 * DIM * sizeof *gone);
    if (cr_wclient_pull_copy(w, s, keys, 3, gone, &q, &e) < 0) return "pull to forget";
    cr_wclient_forget(w, q);
    free(gone);
    if (cr_wclient_pull_borrow(w, s, keys, 3, out, &e) < 0 || out[DIM] != (float)k) return "pull after forget";
    return cr_wclient_test(w, 0, &e) == 1 ? "ok" : "test of request 0";
}

/* Distribution "big" over table B (3 parts of weights): only keys 3 and
 * BIG - 2 have weight, so only they may be drawn, and both are. */
#define BIG (2 * CR_DIST_PART + 5)
static const char *big(cr_node *n, wstate *st) {
    cr_shard *s = cr_node_table_at(n, 2, NULL);
    cr_err e;
    cr_shandle h;
    int64_t keys[100];
    float rows[100];
    if (cr_wsample_prepare(st->ws, s, "big", 100, &h, &e) < 0 ||
        cr_wsample_pull(st->ws, s, h, 100, keys, rows, NULL, &e) < 0)
        return "big: prepare or pull";
    int seen[2] = {0, 0};
    for (int i = 0; i < 100; i++) {
        if (keys[i] != 3 && keys[i] != BIG - 2) return "big: a key of weight 0 was drawn";
        seen[keys[i] == 3]++;
    }
    return seen[0] && seen[1] ? "ok" : "big: a key of positive weight never drawn";
}

static const char *run(cr_node *n, cr_wclient *w, wstate *st, int lw, const cr_cmd *c) {
    if (!w || !st->ws) return "no client";
    if (c->n1 == 4 && !memcmp(c->p1, "fill", 4)) return test_fill_rows(n, w, lw, DIM);
    if (c->n1 == 4 && !memcmp(c->p1, "draw", 4)) return draw(n, st, c->n2 ? c->p2[0] - '0' : 1);
    if (c->n1 == 4 && !memcmp(c->p1, "keep", 4)) return keep(n, st);
    if (c->n1 == 6 && !memcmp(c->p1, "finish", 6)) return finish_kept(n, st);
    if (c->n1 == 6 && !memcmp(c->p1, "client", 6)) return client(n, w);
    if (c->n1 == 3 && !memcmp(c->p1, "big", 3)) return big(n, st);
    if (c->n1 == 5 && !memcmp(c->p1, "wrong", 5)) { /* a table the distribution is not over */
        cr_shandle h;
        cr_err e;
        cr_shard *s1 = cr_node_table_at(n, 1, NULL);
        if (cr_wsample_prepare(st->ws, s1, "pi", 3, &h, &e) == 0) return "prepared over the wrong table";
        if (!strstr(e.msg, "is over table 'T', not table 'U'")) return "wrong-table message";
        if (cr_wsample_prepare(st->ws, s1, "nope", 3, &h, &e) == 0 || !strstr(e.msg, "declared: pi")) return "undeclared";
        return "ok";
    }
    return "unknown command";
}

static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    wstate st = {.ws = w ? cr_wsample_new(n, lw, w) : NULL};
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *r = run(n, w, &st, lw, &c);
        cr_node_reply(n, lw, !strcmp(r, "ok"), r, strlen(r));
    }
    cr_wsample_destroy(&st.ws); /* with an unfinished async pull or kept handle: freed here */
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

typedef struct tally {
    int ok;
    char stats[2][2048];
    int nstats;
} tally;

static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)e;
    tally *t = arg;
    if (worker < 0 && t->nstats < 2) snprintf(t->stats[t->nstats++], sizeof t->stats[0], "%.*s", (int)n, data);
    else if (n == 2 && !memcmp(data, "ok", 2)) t->ok++;
    else printf("  worker %d: %.*s\n", worker, (int)n, data);
    return 0;
}

static int call(cr_job *j, const char *fn, const char *arg, tally *t) {
    cr_job_cb cb = {.result = on_result, .arg = t};
    cr_err e;
    t->ok = 0;
    if (cr_job_call(j, fn, strlen(fn), arg, strlen(arg), &cb, &e) < 0) printf("  %s: %s\n", fn, cr_job_error(j));
    return t->ok;
}

static int set_level(cr_job *j, int level) {
    cr_sampling_entry x = {.name = "", .level = level, .pool = 9, .reuse = 3, .postpone = level == 3};
    cr_err e;
    return cr_job_sampling(j, "test", &x, 1, &e);
}

static cr_job *start_job(test_nodes *t) {
    cr_job_opts o = {.nodes = 2, .workers = 2, .seed = 5, .spawn = 0, .on_listen = test_nodes_start, .on_listen_arg = t,
                     .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    if (!j) return NULL;
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "T");
    d.keys = K;
    d.dim = DIM;
    d.optim.kind = CR_OPTIM_ADD;
    if (cr_job_table(j, 0, &d, &e) < 0) return j;
    snprintf(d.name, sizeof d.name, "U");
    cr_job_table(j, 1, &d, &e);
    snprintf(d.name, sizeof d.name, "B");
    d.keys = BIG;
    d.dim = 1;
    cr_job_table(j, 2, &d, &e);
    return j;
}

static void test_levels(void) {
    test_nodes t = {.hooks = &hooks, .count = 2};
    cr_job *j = start_job(&t);
    CR_CHECK(j != NULL);
    cr_err e;
    double w[K];
    for (int k = 0; k < K; k++) w[k] = 1 + k % 4;
    CR_CHECK(cr_job_distribution(j, 0, "pi", w, K, &e) == 0);
    /* refused by the nodes: weights for another key count, a name taken, no such table */
    CR_CHECK(cr_job_distribution(j, 0, "short", w, K - 1, &e) < 0 && strstr(e.msg, "59 weights for the 60 keys"));
    CR_CHECK(cr_job_distribution(j, 0, "pi", NULL, 0, &e) < 0 && strstr(e.msg, "'pi' exists"));
    CR_CHECK(cr_job_distribution(j, 9, "x", NULL, 0, &e) < 0 && strstr(e.msg, "no table 9"));
    /* weights in 3 parts (DIST messages), assembled on each node */
    double *bw = calloc(BIG, sizeof *bw);
    bw[3] = 1;
    bw[BIG - 2] = 2;
    int rc = cr_job_distribution(j, 2, "big", bw, BIG, &e);
    bw[BIG - 2] = -1; /* refused by the caller's check in real use; the nodes refuse it too */
    int bad = cr_job_distribution(j, 2, "big2", bw, BIG, &e);
    free(bw);
    CR_CHECK(rc == 0);
    CR_CHECK(bad < 0 && strstr(e.msg, "negative"));
    tally tl = {0};
    CR_CHECK(call(j, "big", "", &tl) == 4);
    CR_CHECK(call(j, "fill", "", &tl) == 4);
    CR_CHECK(call(j, "client", "", &tl) == 4);
    CR_CHECK(call(j, "wrong", "", &tl) == 4);
    CR_CHECK(call(j, "draw", "1", &tl) == 4); /* the default scheme is level 1 */
    for (int level = 1; level <= 4; level++) {
        CR_CHECK(set_level(j, level) == 0);
        char arg[2] = {(char)('0' + level), 0};
        CR_CHECK(call(j, "draw", arg, &tl) == 4);
    }
    /* a handle prepared at level 1, pulled after a switch to level 4 */
    CR_CHECK(set_level(j, 1) == 0);
    CR_CHECK(call(j, "keep", "", &tl) == 4);
    CR_CHECK(set_level(j, 4) == 0);
    CR_CHECK(call(j, "draw", "4", &tl) == 4);
    CR_CHECK(call(j, "finish", "", &tl) == 4);
    CR_CHECK(call(j, "keep", "", &tl) == 4); /* left open: freed at the end */
    cr_job_cb cb = {.result = on_result, .arg = &tl};
    CR_CHECK(cr_job_stats(j, &cb, &e) == 0 && tl.nstats == 2);
    for (int i = 0; i < 2; i++) {
        unsigned long long v[6];
        const char *p = NULL; /* the node's totals: the last sampling={...} */
        for (const char *q = tl.stats[i]; (q = strstr(q, "sampling={")); q++) p = q;
        CR_CHECK(p != NULL);
        CR_CHECK(sscanf(p, "sampling={drawn=%llu,served_local=%llu,served_pooled=%llu,remote=%llu,reused=%llu,"
                           "postponed=%llu}", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6);
        printf("  node %d: drawn %llu local %llu pooled %llu remote %llu reused %llu postponed %llu\n", i, v[0], v[1],
               v[2], v[3], v[4], v[5]);
        /* per node: 2 workers x (big 100 + draw x 6 calls: 150 + 10 + 80 kept) = served */
        CR_CHECK(v[1] + v[2] == 2 * (100 + 6 * 160 + 80));
        CR_CHECK(v[0] > 0 && v[3] > 0 && v[4] > 0);
    }
    cr_job_close(&j);
    test_nodes_join(&t);
}

int main(void) {
    CR_RUN(test_levels);
    return cr_test_done();
}
