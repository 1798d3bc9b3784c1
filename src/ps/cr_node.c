#include "ps/cr_node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/cr_alloc.h"
#include "ps/cr_node_ctl.h"
#include "ps/cr_node_impl.h"

/* ---------- the worker API: each part answers for itself ---------- */

int cr_node_id(const cr_node *n) { return n->peers.id; }
int cr_node_count(const cr_node *n) { return n->peers.nodes; }
int cr_node_workers_per_node(const cr_node *n) { return n->peers.wpn; }
uint64_t cr_node_seed(const cr_node *n) { return n->peers.seed; }
int cr_node_stopping(const cr_node *n) { return cr_clocks_stopping(n->clk); }
void cr_node_progress(cr_node *n, int64_t items) { cr_link_progress(&n->link, items); }
int cr_node_cancelled(cr_node *n, int lw) { return cr_clocks_cancelled(n->clk, lw); }
int cr_node_table_count(cr_node *n) { return cr_shards_count(&n->shards); }
cr_replicas *cr_node_replicas(cr_node *n) { return n->replicas; }
cr_shard *cr_node_table(cr_node *n, const char *name) { return cr_shards_find(&n->shards, name); }
int64_t cr_node_worker_clock(cr_node *n, int lw) { return cr_clocks_worker(n->clk, lw); }
int cr_node_next_cmd(cr_node *n, int lw, cr_cmd *c) { return cr_clocks_next_cmd(n->clk, lw, c); }

cr_shard *cr_node_table_at(cr_node *n, int i, int *id) {
    cr_shard *s = cr_shards_at(&n->shards, i);
    if (s && id) *id = i;
    return s;
}

void cr_node_reply(cr_node *n, int lw, int ok, const char *payload, size_t len) {
    cr_msg_reply r = {.worker = cr_peers_gw(&n->peers, lw), .data = payload ? payload : "", .n = payload ? len : 0};
    cr_proto_msg m;
    cr_err e;
    if (cr_proto_encode_reply(ok ? CR_M_REPLY : CR_M_ERROR, &r, &m, &e) < 0) { /* a reply too large */
        r.data = e.msg;
        r.n = strlen(e.msg);
        cr_proto_encode_reply(CR_M_ERROR, &r, &m, NULL);
    }
    cr_link_send_worker(&n->link, lw, &m);
}

int cr_node_policy_refresh(cr_node *n, uint64_t *gen, cr_policy_load_fn load, void *arg) {
    return cr_clocks_policy_refresh(n->clk, gen, load, arg);
}

/* Advance worker lw's clock or barrier count and report both counts to
 * the scheduler. Returns the new value. */
static int64_t announce(cr_node *n, int lw, int barrier) {
    cr_msg_state st;
    int64_t mine = cr_clocks_advance(n->clk, lw, barrier, &st);
    cr_proto_msg m;
    cr_proto_encode_state(&st, &m, NULL);
    cr_link_send_worker(&n->link, lw, &m);
    return mine;
}

/* A worker's policy refused the clocks it saw: the scheduler learns it. */
static void refused(void *arg, int lw, const cr_msg_state *st) {
    cr_node *n = arg;
    cr_proto_msg m;
    cr_proto_encode_state(st, &m, NULL);
    cr_link_send_worker(&n->link, lw, &m);
}

int cr_node_clock(cr_node *n, int lw, cr_decide_fn decide, void *arg, cr_err *e) {
    return cr_clocks_wait(n->clk, lw, announce(n, lw, 0), decide, arg, refused, n, e);
}

int cr_node_barrier(cr_node *n, int lw, cr_err *e) {
    return cr_clocks_barrier(n->clk, lw, announce(n, lw, 1), e);
}

int cr_node_sleep(cr_node *n, int lw, double seconds, cr_err *e) { return cr_clocks_sleep(n->clk, lw, seconds, e); }

/* ---------- worker threads ---------- */

typedef struct {
    cr_node *n;
    int lw;
} wstart;

static void *worker_thread(void *arg) {
    wstart ws = *(wstart *)arg;
    free(arg);
    ws.n->opts.hooks->worker_main(ws.n, ws.lw);
    return NULL;
}

/* ---------- setup ---------- */

/* The advertised address: adv as given, or, when it ends in ":*" (the port
 * is the one the bind chose), with the port of the bound endpoint in out. */
static void advertised(char *out, size_t n, const char *adv) {
    size_t l = strlen(adv);
    const char *bport = strrchr(out, ':');
    if (l < 2 || strcmp(adv + l - 2, ":*") || !bport) {
        snprintf(out, n, "%s", adv);
        return;
    }
    char port[16];
    snprintf(port, sizeof port, "%s", bport + 1);
    snprintf(out, n, "%.*s:%s", (int)(l - 2), adv, port);
}

/* The data ROUTER, bound and authenticated; the address peers use in
 * n->advertise. */
static int bind_data(cr_node *n, cr_err *e) {
    void *d = n->srv.data = cr_socket(n->peers.zctx, ZMQ_ROUTER);
    /* no high-water mark: a ROUTER drops what goes over it, and with
     * relocation one request may be answered by many messages (keys that
     * waited in transit); what is queued is bounded by what was asked */
    int nohwm = 0;
    zmq_setsockopt(d, ZMQ_SNDHWM, &nohwm, sizeof nohwm);
    zmq_setsockopt(d, ZMQ_RCVHWM, &nohwm, sizeof nohwm);
    const char *bind = n->opts.bind ? n->opts.bind : "tcp://127.0.0.1:*";
    if (cr_curve_check_bind(&n->opts.curve, bind, e) < 0 || cr_zap_start(n->peers.zctx, &n->opts.curve, &n->zap, e) < 0)
        return -1;
    cr_curve_server(d, &n->opts.curve);
    if (zmq_bind(d, bind) < 0) return cr_errf(e, "cannot bind '%s': %s", bind, zmq_strerror(errno));
    size_t len = sizeof n->advertise;
    zmq_getsockopt(d, ZMQ_LAST_ENDPOINT, n->advertise, &len);
    if (n->opts.advertise) advertised(n->advertise, sizeof n->advertise, n->opts.advertise);
    return 0;
}

/* Worker clients wait for replies in zmq_poll with no timeout; this PUB,
 * polled with their peer sockets, ends such a wait at stop. Bound before
 * any worker starts, so every client's SUB is connected in time. */
static int workers_stop_signal(cr_node *n, cr_err *e) {
    n->wstop = cr_socket(n->peers.zctx, ZMQ_PUB);
    snprintf(n->wstop_ep, sizeof n->wstop_ep, "inproc://crescent-node-wstop-%p", (void *)n);
    if (!n->wstop || zmq_bind(n->wstop, n->wstop_ep) < 0)
        return cr_errf(e, "cannot create the workers' stop signal: %s", zmq_strerror(errno));
    return 0;
}

static int start_workers(cr_node *n, cr_err *e) {
    n->workers = cr_xcalloc((size_t)n->peers.wpn + 1, sizeof *n->workers);
    for (int i = 0; i < n->peers.wpn; i++) {
        wstart *ws = cr_xmalloc(sizeof *ws);
        ws->n = n;
        ws->lw = i;
        if (pthread_create(&n->workers[i], NULL, worker_thread, ws) != 0) {
            free(ws);
            return cr_errf(e, "cannot start worker thread");
        }
        n->nstarted++;
    }
    return 0;
}

/* Join, then build every part for the job's shape and start the threads. */
static int setup(cr_node *n, cr_err *e) {
    if (cr_link_connect(&n->link, n->peers.zctx, n->opts.scheduler, n->opts.inproc, &n->opts.curve, e) < 0) return -1;
    if (!n->opts.inproc && bind_data(n, e) < 0) return -1;
    if (cr_link_join(&n->link, n->advertise, n->opts.has_rank ? n->opts.rank : -1, &n->peers, e) < 0) return -1;
    int wpn = n->peers.wpn;
    n->clk = cr_clocks_new(n->peers.id, n->peers.nodes, wpn);
    cr_counters_init(&n->cnt, wpn);
    cr_dists_init(&n->samp, wpn);
    /* before the server thread, which delivers to it */
    if (!(n->replicas = cr_replicas_new(&n->peers, &n->shards, 0, e))) return -1;
    n->filt = cr_pfilter_new(CR_NODE_MAX_TABLES, cr_peers_workers(&n->peers));
    if (cr_link_open_up(&n->link, n->peers.zctx, wpn, e) < 0 || workers_stop_signal(n, e) < 0) return -1;
    if (n->srv.data && (cr_server_pipe(&n->srv, n->peers.zctx, e) < 0 || cr_server_start(&n->srv, cr_serve_main, n, e) < 0))
        return -1;
    return start_workers(n, e);
}

/* The node's main thread: scheduler commands to the handlers, worker
 * messages up, heartbeats and progress. 0 on shutdown, -1 if the scheduler
 * went silent. */
static int loop(cr_node *n, cr_err *e) {
    cr_node_ctl ctl = {.peers = &n->peers, .link = &n->link, .clk = n->clk, .shards = &n->shards,
                       .samp = &n->samp, .srv = &n->srv, .replicas = n->replicas, .filt = n->filt, .cnt = &n->cnt};
    int rc = cr_link_run(&n->link, n->opts.timeout > 0 ? n->opts.timeout : 3.0, cr_node_ctl_handle, &ctl, e);
    if (n->opts.rejoin) *n->opts.rejoin = ctl.rejoin;
    return rc;
}

/* ---------- teardown ---------- */

/* Wake every waiting worker and the server thread, and join them. -1 with a
 * message if a worker does not stop within 5 s (stuck in C code): its
 * resources are then left as they are, and the process must end (the
 * caller decides how). */
static int stop_threads(cr_node *n, cr_err *e) {
    cr_clocks_stop(n->clk);
    cr_server_stop(&n->srv);
    if (n->wstop) zmq_send(n->wstop, "", 0, ZMQ_DONTWAIT);
    for (int i = 0; i < n->nstarted; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 5;
        if (pthread_timedjoin_np(n->workers[i], NULL, &ts) != 0)
            return cr_errf(e, "node %d: worker %d did not stop within 5 s (stuck in C code); the process must exit",
                           n->peers.id, i);
    }
    return 0;
}

/* Stop the threads and free everything. Returns 0, or -1 (message in e)
 * when a worker is stuck: then nothing is freed, since it may still use it. */
static int teardown(cr_node *n, cr_err *e) {
    if (stop_threads(n, e) < 0) return -1;
    cr_replicas_destroy(&n->replicas); /* after the server thread: it delivers to the replicas */
    cr_pfilter_destroy(&n->filt);
    cr_link_close(&n->link);
    cr_server_close(&n->srv);
    if (n->wstop) zmq_close(n->wstop);
    cr_zap_stop(&n->zap);
    cr_shards_free(&n->shards);
    if (n->clk) {
        cr_dists_free(&n->samp);
        cr_counters_free(&n->cnt);
    }
    cr_clocks_destroy(&n->clk);
    cr_peers_free(&n->peers);
    free(n->workers);
    if (n->own_ctx) zmq_ctx_term(n->peers.zctx);
    free(n);
    return 0;
}

int cr_node_run(const cr_node_opts *o, cr_err *e) {
    cr_node *n = cr_xcalloc(1, sizeof *n);
    n->opts = *o;
    n->peers.zctx = o->zctx;
    n->peers.curve = &n->opts.curve;
    if (!n->peers.zctx) {
        n->peers.zctx = zmq_ctx_new();
        n->own_ctx = 1;
    }
    int rc = setup(n, e);
    if (rc == 0) rc = loop(n, e);
    cr_err te;
    if (teardown(n, &te) < 0) {
        cr_err first = *e;
        if (rc == 0) *e = te;
        else cr_errf(e, "%s; and %s", first.msg, te.msg);
        return -1;
    }
    return rc;
}
