#ifndef NODE_UTIL_H
#define NODE_UTIL_H
/* Node threads for the C tests and benches that run a job in one process:
 * the job's on_listen callback starts `count` nodes (cr_node_run with the
 * caller's worker hooks) as threads that join the scheduler's endpoint; after
 * cr_job_close, test_nodes_join waits for them.
 *
 *   static test_nodes nodes = {.hooks = &hooks, .count = 2};
 *   cr_job_opts o = {..., .on_listen = test_nodes_start, .on_listen_arg = &nodes};
 *   ... cr_job_close(&j); test_nodes_join(&nodes);
 *
 * test_nodes_node is the thread body; a test may call it directly to run one
 * node in a thread of its own (ep and hooks set). */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps/cr_node.h"
#include "ps/cr_wclient.h"

#define TEST_NODES_MAX 8

typedef struct test_nodes {
    const cr_node_hooks *hooks;
    int count;      /* nodes test_nodes_start starts, at most TEST_NODES_MAX */
    FILE *log;      /* where a node's error goes; NULL: stdout */
    char ep[256];   /* the scheduler's endpoint, set by test_nodes_start */
    int started;
    pthread_t th[TEST_NODES_MAX];
} test_nodes;

/* Run one node until the job ends; its error, if any, is printed. */
static inline void *test_nodes_node(void *arg) {
    test_nodes *t = arg;
    cr_node_opts o = {.scheduler = t->ep, .hooks = t->hooks};
    cr_err e;
    if (cr_node_run(&o, &e) < 0) fprintf(t->log ? t->log : stdout, "node: %s\n", e.msg);
    return NULL;
}

/* on_listen callback: arg is the test_nodes. */
static inline void test_nodes_start(const char *ep, void *arg) {
    test_nodes *t = arg;
    snprintf(t->ep, sizeof t->ep, "%s", ep);
    int n = t->count < TEST_NODES_MAX ? t->count : TEST_NODES_MAX;
    for (t->started = 0; t->started < n; t->started++)
        if (pthread_create(&t->th[t->started], NULL, test_nodes_node, t)) break;
}

static inline void test_nodes_join(test_nodes *t) {
    for (int i = 0; i < t->started; i++) pthread_join(t->th[i], NULL);
    t->started = 0;
}

/* The integer after `name` in a result or stats text s ("rows_in=12"), or
 * -1 when s has no `name`. */
static inline long long test_field(const char *s, const char *name) {
    const char *p = strstr(s, name);
    return p ? atoll(p + strlen(name)) : -1;
}

/* Local worker 0 of node n writes every key k of the node's part of table 0
 * as a row of `dim` values k (the sampling tests then check each row they
 * draw against its key). Returns "ok", or "fill" when the push failed. */
static inline const char *test_fill_rows(cr_node *n, cr_wclient *w, int lw, int dim) {
    cr_shard *s = cr_node_table_at(n, 0, NULL);
    if (lw != 0 || s->hi <= s->lo) return "ok";
    int64_t m = s->hi - s->lo;
    int64_t *keys = malloc((size_t)m * sizeof *keys);
    float *rows = malloc((size_t)(m * dim) * sizeof *rows);
    const char *r = "fill";
    if (keys && rows) {
        for (int64_t i = 0; i < m; i++) {
            keys[i] = s->lo + i;
            for (int j = 0; j < dim; j++) rows[i * dim + j] = (float)(s->lo + i);
        }
        cr_err e;
        if (cr_wclient_push_borrow(w, s, keys, m, rows, &e) == 0) r = "ok";
    }
    free(keys);
    free(rows);
    return r;
}

#endif
