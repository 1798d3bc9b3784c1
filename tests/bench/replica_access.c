/* Access to hot keys from node 0 of two (node runtimes on loopback tcp, one
 * worker per node): batches of 100 keys out of 1,000 hot keys (dim 64),
 * each a pull then a push (sgd), three ways, samples alternating:
 *   local       keys held by node 0, read and updated in its shard (the
 *               shared-memory ideal, what 1 node x 2 workers gets)
 *   replicated  keys held by node 1, replicated (cr_replica.h), read and
 *               updated in node 0's replica while the sync thread runs
 *   classic     the same keys of node 1 in a table that is not replicated:
 *               a remote round trip per pull and per push
 * Prints medians in ns per key, the ratios replicated/local and
 * classic/replicated, and the sync traffic per second during the run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_time.h"
#include "ps/cr_job.h"
#include "ps/cr_replica.h"
#include "ps/cr_wclient.h"

#include "node_util.h"
#include "stat_util.h"

#define HOT 1000
#define DIM 64
#define BATCH 100
#define RUNS 301


static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    return z ^ (z >> 27);
}

static double sample(int how, cr_node *n, cr_wclient *w, int64_t *keys, float *rows, float *g, uint64_t *seed) {
    int64_t lo = how == 0 ? 0 : HOT; /* node 0 holds [0, HOT), node 1 [HOT, 2 HOT) */
    for (int i = 0; i < BATCH; i++) keys[i] = lo + (int64_t)(next_rand(seed) % HOT);
    cr_err e;
    double t0 = cr_now();
    if (how == 0) {
        cr_shard *s = cr_node_table_at(n, 0, NULL);
        cr_shard_pull(s, keys, BATCH, rows);
        cr_shard_push(s, keys, BATCH, g);
    } else if (how == 1) {
        cr_replicas *r = cr_node_replicas(n);
        if (cr_replicas_pull(r, 0, keys, BATCH, rows, &e) < 0 || cr_replicas_push(r, 0, keys, BATCH, g, &e) < 0)
            printf("replica: %s\n", e.msg);
    } else {
        cr_shard *s = cr_node_table_at(n, 1, NULL);
        if (cr_wclient_pull_borrow(w, s, keys, BATCH, rows, &e) < 0 || cr_wclient_push_borrow(w, s, keys, BATCH, g, &e) < 0)
            printf("classic: %s\n", e.msg);
    }
    return (cr_now() - t0) / BATCH * 1e9;
}

static void bench(cr_node *n, cr_wclient *w) {
    int64_t keys[BATCH];
    float *rows = malloc(sizeof(float) * BATCH * DIM), *g = malloc(sizeof(float) * BATCH * DIM);
    for (int i = 0; i < BATCH * DIM; i++) g[i] = 1e-3f;
    double *t[3];
    for (int k = 0; k < 3; k++) t[k] = malloc(sizeof(double) * RUNS);
    uint64_t seed = 1;
    cr_replica_stats a, b;
    cr_replicas_stats(cr_node_replicas(n), &a);
    double t0 = cr_now();
    for (int i = 0; i < RUNS; i++)
        for (int k = 0; k < 3; k++) t[k][i] = sample(k, n, w, keys, rows, g, &seed);
    double el = cr_now() - t0;
    cr_replicas_stats(cr_node_replicas(n), &b);
    double l = st_median(t[0], RUNS), r = st_median(t[1], RUNS), c = st_median(t[2], RUNS);
    printf("ns per key (pull + push, median of %d batches of %d): local %.0f, replicated %.0f, classic %.0f\n", RUNS,
           BATCH, l, r, c);
    printf("sync: %lld rounds, %.0f bytes/s sent by node 0 (%.0f keys touched per round on average)\n",
           (long long)(b.syncs - a.syncs), (double)(b.bytes_sent - a.bytes_sent) / el,
           (double)(b.bytes_sent - a.bytes_sent) / (double)(b.syncs - a.syncs > 0 ? b.syncs - a.syncs : 1) /
               (4.0 + 4.0 * DIM));
    printf("ratio replicated/local %.2fx, classic/replicated %.1fx\n", r / l, c / r);
    for (int k = 0; k < 3; k++) free(t[k]);
    free(rows);
    free(g);
}

static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *res = "ok";
        if (!strcmp(c.p1, "set")) {
            int64_t keys[HOT];
            for (int i = 0; i < HOT; i++) keys[i] = HOT + i;
            if (cr_replicas_set(cr_node_replicas(n), 0, keys, HOT, &e) < 0) res = e.msg;
        } else if (cr_node_id(n) == 0)
            bench(n, w);
        cr_node_reply(n, lw, !strcmp(res, "ok"), res, strlen(res));
    }
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

int main(void) {
    test_nodes t = {.hooks = &hooks, .count = 2};
    cr_job_opts o = {.nodes = 2, .workers = 1, .seed = 1, .spawn = 0, .on_listen = test_nodes_start, .on_listen_arg = &t,
                     .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    if (!j) return printf("%s\n", e.msg), 1;
    for (int k = 0; k < 2; k++) {
        cr_table_def d;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, k ? "classic" : "hot");
        d.keys = 2 * HOT;
        d.dim = DIM;
        d.init = CR_INIT_UNIFORM;
        d.init_a = -0.1;
        d.init_b = 0.1;
        d.optim = (cr_optim){.kind = CR_OPTIM_SGD, .lr = 0.1f};
        if (cr_job_table(j, k, &d, &e) < 0) return printf("%s\n", e.msg), 1;
    }
    int rc = cr_job_call(j, "set", 3, "", 0, NULL, &e) < 0 || cr_job_call(j, "bench", 5, "", 0, NULL, &e) < 0;
    if (rc) printf("%s\n", cr_job_error(j));
    cr_job_close(&j);
    test_nodes_join(&t);
    return rc;
}
