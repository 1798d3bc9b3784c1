/* Pull/push round trip of 10,000 keys x dim 64 between two nodes (node
 * runtimes on loopback tcp, worker on node 0, keys on node 1) against a bare
 * ZeroMQ DEALER/ROUTER request/reply carrying the same bytes over loopback
 * tcp, client and server in separate ZeroMQ contexts like two processes). Samples alternate; prints medians and the ratio bare/crescent (higher is
 * better for crescent; 1.0 = as fast as bare ZeroMQ). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cr_time.h"
#include "net/cr_wire.h"
#include "ps/cr_dhdr.h"
#include "ps/cr_job.h"
#include "ps/cr_wclient.h"

#include "node_util.h"
#include "stat_util.h"

#define NKEYS 10000
#define DIM 64
#define ROUNDS 1
#define RUNS 61

static char bare_ep[256];
static void *bare_ctx;
static volatile int bare_stop;

/* Bare server: pull request [id][hdr][keys] -> [id][hdr][values];
 * push [id][hdr][keys][values] -> [id][hdr]. */
static void *bare_server(void *arg) {
    void *s = arg;
    float *vals = calloc((size_t)NKEYS * DIM, sizeof(float));
    zmq_pollitem_t it = {.socket = s, .events = ZMQ_POLLIN};
    while (!bare_stop) {
        if (zmq_poll(&it, 1, 100) <= 0) continue;
        cr_parts p;
        if (cr_parts_recv(s, &p, 0) < 0) continue;
        zmq_send(s, cr_parts_data(&p, 0), cr_parts_size(&p, 0), ZMQ_SNDMORE);
        if (p.n == 3) {
            zmq_send(s, cr_parts_data(&p, 1), cr_parts_size(&p, 1), ZMQ_SNDMORE);
            zmq_send(s, vals, (size_t)NKEYS * DIM * sizeof(float), 0);
        } else
            zmq_send(s, cr_parts_data(&p, 1), cr_parts_size(&p, 1), 0);
        cr_parts_close(&p);
    }
    free(vals);
    return NULL;
}

static double bare_round(void *c, int64_t *keys, float *vals) {
    double t0 = cr_now();
    cr_dhdr h = {.type = CR_D_PULL, .nkeys = NKEYS, .dim = DIM};
    cr_parts p;
    for (int r = 0; r < ROUNDS; r++) {
        zmq_send(c, &h, sizeof h, ZMQ_SNDMORE);
        zmq_send(c, keys, NKEYS * sizeof *keys, 0);
        cr_parts_recv(c, &p, 0);
        memcpy(vals, cr_parts_data(&p, 1), cr_parts_size(&p, 1)); /* a consumer copies it out too */
        cr_parts_close(&p);
        zmq_send(c, &h, sizeof h, ZMQ_SNDMORE);
        zmq_send(c, keys, NKEYS * sizeof *keys, ZMQ_SNDMORE);
        zmq_send(c, vals, (size_t)NKEYS * DIM * sizeof(float), 0);
        cr_parts_recv(c, &p, 0);
        cr_parts_close(&p);
    }
    return (cr_now() - t0) / ROUNDS;
}

static double ps_round(cr_wclient *w, cr_shard *s, int64_t *keys, float *vals) {
    double t0 = cr_now();
    cr_err e;
    for (int r = 0; r < ROUNDS; r++) { /* what T:pull / T:push do */
        if (cr_wclient_pull_borrow(w, s, keys, NKEYS, vals, &e) < 0 ||
            cr_wclient_push_borrow(w, s, keys, NKEYS, vals, &e) < 0) {
            fprintf(stderr, "pushpull: %s\n", e.msg);
            exit(1);
        }
    }
    return (cr_now() - t0) / ROUNDS;
}

static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        char out[256] = "idle";
        if (cr_node_id(n) == 0) {
            cr_shard *s = cr_node_table_at(n, 0, NULL);
            int64_t *keys = malloc(NKEYS * sizeof *keys);
            float *vals = calloc((size_t)NKEYS * DIM, sizeof(float));
            for (int i = 0; i < NKEYS; i++) keys[i] = NKEYS + (int64_t)((i * 7919L) % NKEYS); /* node 1, shuffled */
            /* the client gets its own context (its own I/O thread), as a
             * separate process would: same hops as between two nodes */
            void *cctx = zmq_ctx_new();
            void *bc = cr_socket(cctx, ZMQ_DEALER);
            zmq_connect(bc, bare_ep);
            ps_round(w, s, keys, vals); /* warm up both */
            bare_round(bc, keys, vals);
            double tp[RUNS], tb[RUNS];
            for (int r = 0; r < RUNS; r++) {
                tp[r] = ps_round(w, s, keys, vals);
                tb[r] = bare_round(bc, keys, vals);
            }
            double mp = st_median(tp, RUNS), mb = st_median(tb, RUNS); /* sorts */
            fprintf(stderr, "  (min crescent %.3f ms, bare %.3f ms; p25 %.3f / %.3f)\n", tp[0] * 1e3, tb[0] * 1e3,
                    tp[RUNS / 4] * 1e3, tb[RUNS / 4] * 1e3);
            snprintf(out, sizeof out,
                     "pushpull %d keys x dim %d (%.2f MB each way), median of %d alternating samples x %d round trip:\n"
                     "  crescent pull+push  %.3f ms\n  bare zeromq        %.3f ms\n"
                     "  ratio bare/crescent %.2fx (bar >= 0.70)",
                     NKEYS, DIM, NKEYS * DIM * 4 / 1e6, RUNS, ROUNDS, mp * 1e3, mb * 1e3, mb / mp);
            zmq_close(bc);
            zmq_ctx_term(cctx);
            free(keys);
            free(vals);
        }
        cr_node_reply(n, lw, 1, out, strlen(out));
    }
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

static void bind_any(void *s, char *ep, size_t n) {
    zmq_bind(s, "tcp://127.0.0.1:*");
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &n);
}

/* A worker's report (not the idle one's) goes to stdout. */
static int print_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)arg, (void)worker, (void)e;
    if (n > 4 && memcmp(data, "idle", 4)) printf("%.*s\n", (int)n, data);
    return 0;
}

int main(void) {
    bare_ctx = zmq_ctx_new();
    void *bs = cr_socket(bare_ctx, ZMQ_ROUTER);
    bind_any(bs, bare_ep, sizeof bare_ep);
    pthread_t bt;
    pthread_create(&bt, NULL, bare_server, bs);
    test_nodes t = {.hooks = &hooks, .count = 2, .log = stderr};
    cr_job_opts o = {.nodes = 2, .workers = 1, .seed = 1, .spawn = 0, .on_listen = test_nodes_start, .on_listen_arg = &t,
                     .join_timeout = 10, .timeout = 30};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    if (!j) {
        fprintf(stderr, "pushpull: %s\n", e.msg);
        return 1;
    }
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "T");
    d.keys = 2 * NKEYS;
    d.dim = DIM;
    d.optim = (cr_optim){.kind = CR_OPTIM_SGD, .lr = 0.0f};
    cr_job_cb cb = {.result = print_result};
    int rc = 0;
    if (cr_job_table(j, 0, &d, &e) < 0 || cr_job_call(j, "bench", 5, "", 0, &cb, &e) < 0) {
        fprintf(stderr, "pushpull: %s\n", cr_job_error(j));
        rc = 1;
    }
    cr_job_close(&j);
    test_nodes_join(&t);
    bare_stop = 1;
    pthread_join(bt, NULL);
    zmq_close(bs);
    zmq_ctx_term(bare_ctx);
    return rc;
}
