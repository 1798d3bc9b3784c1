/* What counting accesses (COUNTS, docs/management.md "Counters") costs a
 * worker's pulls: one node, one worker, batches of 100 keys of a dim-64
 * table, all local (shared memory: the path where counting weighs most),
 * counting off and on alternating, 21 samples of 200,000 keys each:
 *
 *   exact   a 10,000-key table (one counter per key)
 *   cm      a 100,000-key table (count-min, width 4096, depth 4)
 *
 * Keys are uniform (the sketch's cache-missing case). Last line: the median
 * ns per key of each, and on / off. Built with -DCOUNT_PATH_BEFORE against
 * the library of a commit before counting existed, it times that
 * library's pulls (both columns: no counting) for a before/after check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_rng.h"
#include "base/cr_time.h"
#include "ps/cr_job.h"
#include "ps/cr_wclient.h"

#include "node_util.h"

#define DIM 64
#define BATCH 100
#define ROUNDS 2000
#define SAMPLES 21

/* "T": pull ROUNDS batches of table T; answers the ns per key. */
static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    float *out = malloc(BATCH * DIM * sizeof *out);
    int64_t *keys = malloc((size_t)ROUNDS * BATCH * sizeof *keys);
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        int t = c.n2 > 0 ? c.p2[0] - '0' : 0;
        cr_shard *s = cr_node_table_at(n, t, NULL);
        cr_rng r;
        cr_rng_seed(&r, 11);
        for (int64_t i = 0; i < (int64_t)ROUNDS * BATCH; i++) keys[i] = (int64_t)cr_rng_below(&r, (uint64_t)s->def.keys);
        double t0 = cr_now();
        int rc = 0;
        for (int q = 0; q < ROUNDS && rc == 0; q++) rc = cr_wclient_pull_borrow(w, s, keys + (size_t)q * BATCH, BATCH, out, &e);
        char msg[64];
        snprintf(msg, sizeof msg, "%.3f", (cr_now() - t0) * 1e9 / ((double)ROUNDS * BATCH));
        cr_node_reply(n, lw, rc == 0, rc == 0 ? msg : e.msg, strlen(rc == 0 ? msg : e.msg));
    }
    free(keys);
    free(out);
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

static double got;
static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)arg, (void)e;
    char b[64];
    snprintf(b, sizeof b, "%.*s", (int)n, data);
    if (worker >= 0) got = atof(b);
    return 0;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double sample(cr_job *j, int t, int on) {
    cr_err e;
    cr_job_cb cb = {.result = on_result};
    char arg[2] = {(char)('0' + t), 0};
#ifdef COUNT_PATH_BEFORE /* built against a library without counting: both halves are "off" */
    int rc = 0;
#else
    int rc = cr_job_count(j, t, on, &e);
#endif
    if (rc < 0 || cr_job_call(j, "pull", 4, arg, 1, &cb, &e) < 0) {
        fprintf(stderr, "count_path: %s\n", e.msg);
        exit(1);
    }
    return got;
}

int main(void) {
    test_nodes nodes = {.hooks = &hooks, .count = 1};
    cr_job_opts o = {.nodes = 1, .workers = 1, .seed = 3, .on_listen = test_nodes_start, .on_listen_arg = &nodes,
                     .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    if (!j) return fprintf(stderr, "count_path: %s\n", e.msg), 1;
    const char *names[2] = {"exact", "cm"};
    int64_t sizes[2] = {10000, 100000};
    double med[2][2];
    for (int t = 0; t < 2; t++) {
        cr_table_def d;
        memset(&d, 0, sizeof d);
        d.keys = sizes[t];
        d.dim = DIM;
        d.optim.kind = CR_OPTIM_ADD;
        snprintf(d.name, sizeof d.name, "%s", names[t]);
        if (cr_job_table(j, t, &d, &e) < 0) return fprintf(stderr, "count_path: %s\n", e.msg), 1;
        double v[2][SAMPLES];
        sample(j, t, 0); /* warm up */
        for (int i = 0; i < SAMPLES; i++) /* alternating, the first of each pair in turn */
            for (int k = 0; k < 2; k++) {
                int on = (i + k) % 2;
                v[on][i] = sample(j, t, on);
            }
        for (int on = 0; on < 2; on++) {
            qsort(v[on], SAMPLES, sizeof v[on][0], cmp);
            med[t][on] = v[on][SAMPLES / 2];
        }
        printf("%-5s %6lld keys: off %.2f ns/key, on %.2f ns/key (min %.2f / %.2f)\n", names[t], (long long)sizes[t],
               med[t][0], med[t][1], v[0][0], v[1][0]);
    }
    cr_job_close(&j);
    test_nodes_join(&nodes);
    printf("count_path: exact off %.2f on %.2f (%.2fx), cm off %.2f on %.2f (%.2fx) ns/key\n", med[0][0], med[0][1],
           med[0][1] / med[0][0], med[1][0], med[1][1], med[1][1] / med[1][0]);
    return 0;
}
