/* Replication of a whole large table with AdaGrad (src/ps/cr_replica.h), as
 * KGE's manage=replicate does with all its entities: 2 and 3 node threads,
 * 20,000 keys, every key replicated, both workers of every node pushing
 * gradients to all of them in batches while timed rounds run (rounds then
 * carry thousands of rows each, in messages of megabytes).
 *
 * Checks that no update is lost or applied twice at that size: each worker
 * pushes gradient 1 (squared: 1) to key k a number of times that depends on
 * k and on the worker, so after a final sync every node's AdaGrad sum h of
 * key k must equal init + the total count, exactly (integers in floats);
 * the replicas of all nodes are bitwise equal; and after the replicas are
 * dropped, every home row (value and state) equals them. */
#include <pthread.h>
#include <stdlib.h>

#include "cr_test.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_node_impl.h"
#include "ps/cr_replica.h"

#define MAXN 3
#define WPN 2
#define NK 20000 /* keys, all replicated */
#define DIM 8
#define BATCH 500
#define INIT 0.5f

static int nnodes;
static float snap[MAXN][NK * DIM], home_v[NK * DIM], home_h[NK * DIM];
static cr_replica_stats stats[MAXN];

/* Times global worker gw pushes gradient 1 to key k. */
static int reps(int gw, int64_t k) { return (int)((k * 7 + (int64_t)gw * 3) % 5); }

static const char *do_set(cr_node *n, int all, char *msg, size_t msgn) {
    int64_t *keys = malloc(NK * sizeof *keys);
    for (int64_t k = 0; k < NK; k++) keys[k] = k;
    cr_err e;
    int rc = cr_replicas_set(cr_node_replicas(n), 0, keys, all ? NK : 0, &e);
    free(keys);
    if (rc == 0) return NULL;
    snprintf(msg, msgn, "set: %s", e.msg);
    return msg;
}

/* Round r of worker gw pushes 1 to every key with reps(gw, k) > r, in
 * batches, sleeping a little so that timed rounds interleave. */
static const char *do_push(cr_node *n, int lw, char *msg, size_t msgn) {
    int gw = cr_node_id(n) * WPN + lw;
    int64_t *keys = malloc(NK * sizeof *keys);
    float *ones = malloc((size_t)BATCH * DIM * sizeof *ones);
    for (int i = 0; i < BATCH * DIM; i++) ones[i] = 1;
    cr_err e;
    const char *err = NULL;
    for (int r = 0; r < 5 && !err; r++) {
        int64_t m = 0;
        for (int64_t k = 0; k < NK; k++)
            if (reps(gw, k) > r) keys[m++] = k;
        for (int64_t i = 0; i < m && !err; i += BATCH) {
            int64_t b = m - i < BATCH ? m - i : BATCH;
            if (cr_replicas_push(cr_node_replicas(n), 0, keys + i, b, ones, &e) < 0) err = e.msg;
            usleep(2000);
        }
    }
    if (err) snprintf(msg, msgn, "push: %s", err);
    free(keys);
    free(ones);
    return err ? msg : NULL;
}

/* This node's replica values into snap[node]. */
static const char *do_snap(cr_node *n, char *msg, size_t msgn) {
    int64_t *keys = malloc(NK * sizeof *keys);
    for (int64_t k = 0; k < NK; k++) keys[k] = k;
    cr_err e;
    int rc = cr_replicas_pull(cr_node_replicas(n), 0, keys, NK, snap[cr_node_id(n)], &e);
    free(keys);
    if (rc == 0) return NULL;
    snprintf(msg, msgn, "snap: %s", e.msg);
    return msg;
}

static const char *run(cr_node *n, int lw, const cr_cmd *c, char *msg, size_t msgn) {
    if (!strcmp(c->p1, "push")) return do_push(n, lw, msg, msgn);
    if (lw != 0) return NULL;
    if (!strcmp(c->p1, "set")) return do_set(n, 1, msg, msgn);
    if (!strcmp(c->p1, "drop")) return do_set(n, 0, msg, msgn);
    if (!strcmp(c->p1, "snap")) return do_snap(n, msg, msgn);
    if (!strcmp(c->p1, "stats")) {
        cr_replicas_stats(cr_node_replicas(n), &stats[cr_node_id(n)]);
        return NULL;
    }
    return "unknown command";
}

static void worker_main(cr_node *n, int lw) {
    cr_cmd c;
    char msg[1024];
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *r = run(n, lw, &c, msg, sizeof msg);
        if (!r) r = "ok";
        cr_node_reply(n, lw, !strcmp(r, "ok"), r, strlen(r));
    }
}

static const cr_node_hooks hooks = {worker_main};
static test_nodes threads = {.hooks = &hooks};

static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)worker, (void)e;
    if (n == 2 && !memcmp(data, "ok", 2)) (*(int *)arg)++;
    else printf("  worker %d: %.*s\n", worker, (int)n, data);
    return 0;
}

static int call(cr_job *j, const char *fn) {
    int ok = 0;
    cr_job_cb cb = {.result = on_result, .arg = &ok};
    cr_err e;
    int rc = cr_job_call(j, fn, strlen(fn), "", 1, &cb, &e);
    if (rc < 0) printf("  %s: %s\n", fn, cr_job_error(j));
    return rc == 0 && ok == nnodes * WPN ? 0 : -1;
}

static void many(int nodes) {
    nnodes = threads.count = nodes;
    cr_job_opts o = {.nodes = nodes, .workers = WPN, .seed = 1, .spawn = 0, .on_listen = test_nodes_start,
                     .on_listen_arg = &threads, .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    CR_CHECK(j != NULL);
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "E");
    d.keys = NK;
    d.dim = DIM;
    d.optim = (cr_optim){.kind = CR_OPTIM_ADAGRAD, .lr = 0.01f, .eps = 1e-6f, .init = INIT};
    int ok = cr_job_table(j, 0, &d, &e) == 0 && call(j, "set") == 0 && call(j, "push") == 0 &&
             call(j, "set") == 0 /* the same keys again: a final sync */ && call(j, "snap") == 0 &&
             call(j, "stats") == 0;
    if (!ok) {
        cr_job_close(&j);
        test_nodes_join(&threads);
    }
    CR_CHECK(ok);
    printf("  %d nodes: node 0 did %lld syncs, %lld bytes sent, longest round %.1f ms\n", nodes,
           (long long)stats[0].syncs, (long long)stats[0].bytes_sent, stats[0].round_max_s * 1e3);
    for (int i = 1; i < nodes; i++) CR_CHECK(!memcmp(snap[0], snap[i], sizeof snap[0]));
    CR_CHECK(call(j, "drop") == 0); /* every value and h into the home rows */
    int64_t block = cr_table_block(NK, nodes);
    for (int i = 0; i < nodes; i++) {
        int64_t lo = i * block, hi = lo + block < NK ? lo + block : NK;
        CR_CHECK(cr_job_get_rows(j, 0, i, lo, hi - lo, DIM, DIM, home_v + lo * DIM, home_h + lo * DIM, &e) == 0);
    }
    int64_t bad = 0;
    for (int64_t k = 0; k < NK; k++) {
        int cnt = 0;
        for (int gw = 0; gw < nodes * WPN; gw++) cnt += reps(gw, k);
        for (int jj = 0; jj < DIM; jj++) {
            bad += home_h[k * DIM + jj] != INIT + (float)cnt; /* no gradient lost or counted twice */
            bad += home_v[k * DIM + jj] != snap[0][k * DIM + jj]; /* home rows: the agreed values */
        }
        if (bad && bad < 3) printf("  key %lld: h %g, expected %g\n", (long long)k, home_h[k * DIM], INIT + cnt);
    }
    CR_CHECK(bad == 0);
    CR_CHECK(stats[0].syncs > 5 && stats[0].dropped == 0);
    cr_job_close(&j);
    test_nodes_join(&threads);
}

static void test_many_2_nodes(void) { many(2); }
static void test_many_3_nodes(void) { many(3); }

int main(void) {
    CR_RUN(test_many_2_nodes);
    CR_RUN(test_many_3_nodes);
    return cr_test_done();
}
