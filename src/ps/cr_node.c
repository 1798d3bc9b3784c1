#include "ps/cr_node.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"
#include "ps/cr_node_impl.h"
#include "ps/cr_proto.h"

#define HB_INTERVAL 0.5
#define PROGRESS_INTERVAL 0.1 /* seconds between progress reports while there is progress */

/* ---------- accessors used by worker threads ---------- */

int cr_node_id(const cr_node *n) { return n->id; }
int cr_node_count(const cr_node *n) { return n->nodes; }
int cr_node_workers_per_node(const cr_node *n) { return n->wpn; }
uint64_t cr_node_seed(const cr_node *n) { return n->seed; }
int cr_node_stopping(const cr_node *n) { return atomic_load(&((cr_node *)n)->stop); }
void cr_node_progress(cr_node *n, int64_t items) { atomic_fetch_add(&n->progress, items); }

/* seen_cmd is written by worker lw itself (cr_node_next_cmd), so reading it
 * here, on that worker's thread, needs no lock. */
int cr_node_cancelled(cr_node *n, int lw) {
    uint64_t c = atomic_load(&n->cancel_gen); /* command generations start at 1 */
    return c != 0 && c == n->ws[lw].seen_cmd;
}

/* -1 with the reason in e if worker lw must leave a clock or barrier wait:
 * the node stops, or its command was cancelled. */
static int must_leave(cr_node *n, int lw, cr_err *e) {
    if (atomic_load(&n->stop)) return cr_errf(e, "node stopping");
    if (cr_node_cancelled(n, lw)) return cr_errf(e, CR_NODE_CANCELLED_MSG);
    return 0;
}
int cr_node_table_count(cr_node *n) { return atomic_load(&n->ntables); }
cr_replicas *cr_node_replicas(cr_node *n) { return n->replicas; }

cr_shard *cr_node_table_at(cr_node *n, int i, int *id) {
    if (i < 0 || i >= atomic_load(&n->ntables)) return NULL;
    if (id) *id = i;
    return n->tables[i];
}

cr_shard *cr_node_table(cr_node *n, const char *name) {
    int k = atomic_load(&n->ntables);
    for (int i = 0; i < k; i++)
        if (!strcmp(n->tables[i]->def.name, name)) return n->tables[i];
    return NULL;
}

int64_t cr_node_worker_clock(cr_node *n, int lw) {
    pthread_mutex_lock(&n->mu);
    int64_t c = n->ws[lw].clock;
    pthread_mutex_unlock(&n->mu);
    return c;
}

int cr_node_next_cmd(cr_node *n, int lw, cr_cmd *c) {
    pthread_mutex_lock(&n->mu);
    while (!atomic_load(&n->stop) && n->cmd_gen == n->ws[lw].seen_cmd) pthread_cond_wait(&n->cmd_cv, &n->mu);
    int stop = atomic_load(&n->stop);
    if (!stop) {
        n->ws[lw].seen_cmd = n->cmd_gen;
        *c = n->cmd;
    }
    pthread_mutex_unlock(&n->mu);
    return stop ? -1 : 0;
}

/* Worker lw's message to the scheduler, through the node's main thread. */
static void send_up(cr_node *n, int lw, cr_proto_msg *m) {
    m->h.node = n->id;
    cr_proto_send(n->wup[lw], NULL, 0, m);
}

void cr_node_reply(cr_node *n, int lw, int ok, const char *payload, size_t len) {
    cr_msg_reply r = {.worker = n->id * n->wpn + lw, .data = payload ? payload : "", .n = payload ? len : 0};
    cr_proto_msg m;
    cr_err e;
    if (cr_proto_encode_reply(ok ? CR_M_REPLY : CR_M_ERROR, &r, &m, &e) < 0) { /* a reply too large */
        r.data = e.msg;
        r.n = strlen(e.msg);
        cr_proto_encode_reply(CR_M_ERROR, &r, &m, NULL);
    }
    send_up(n, lw, &m);
}

int cr_node_policy_refresh(cr_node *n, uint64_t *gen, cr_policy_load_fn load, void *arg) {
    pthread_mutex_lock(&n->mu);
    if (n->pol_gen == *gen) {
        pthread_mutex_unlock(&n->mu);
        return 0;
    }
    /* Copy out under the lock: load runs Lua and must not hold it. */
    size_t sn = n->pol_srcn, on = n->pol_optsn;
    char *src = cr_xmalloc(sn + 1), *opts = cr_xmalloc(on + 1), *chunk = cr_xstrdup(n->pol_chunk ? n->pol_chunk : "?");
    memcpy(src, n->pol_src, sn);
    memcpy(opts, n->pol_opts, on);
    uint64_t g = n->pol_gen;
    pthread_mutex_unlock(&n->mu);
    int rc = load(arg, src, sn, chunk, opts, on);
    if (rc == 0) *gen = g;
    free(src);
    free(opts);
    free(chunk);
    return rc;
}

static void min_max(cr_node *n, int gw, int64_t mine, int64_t *vec, int64_t *mn, int64_t *mx) {
    int W = n->nodes * n->wpn, any = 0;
    *mn = *mx = mine;
    for (int i = 0; i < W; i++) {
        int64_t v = i == gw ? mine : vec[i];
        if (!n->active[i] && i != gw) continue;
        if (!any || v < *mn) *mn = v;
        if (!any || v > *mx) *mx = v;
        any = 1;
    }
}

/* Advance local worker lw's clock (barrier = 0) or barrier count (1), record
 * it in the node's vector and report both counts to the scheduler. Returns
 * the new value. */
static int64_t announce(cr_node *n, int lw, int barrier) {
    int gw = n->id * n->wpn + lw;
    pthread_mutex_lock(&n->mu);
    int64_t mine = barrier ? ++n->ws[lw].barrier : ++n->ws[lw].clock;
    int64_t *vec = barrier ? n->barriers : n->clocks;
    if (vec[gw] < mine) vec[gw] = mine;
    cr_msg_state st = {.worker = gw, .clock = n->ws[lw].clock, .barrier = n->ws[lw].barrier};
    pthread_mutex_unlock(&n->mu);
    cr_proto_msg m;
    cr_proto_encode_state(&st, &m, NULL);
    send_up(n, lw, &m);
    return mine;
}

/* Before a waiter at a clock sleeps on clk_cv (caller holds n->mu, released
 * meanwhile): up to CR_CLOCK_SPIN_S of yielding spin until the clocks
 * change. Block-wise jobs (DBPG: one clock per block, 64 per epoch) wait
 * at a clock for tens of microseconds, and on a virtual machine waking a
 * sleeping thread on an idle vCPU cost about as much again every time;
 * sched_yield leaves the core to any thread with work (the node's own
 * thread, which brings the news). */
#define CR_CLOCK_SPIN_S 200e-6
static void spin_for_news(cr_node *n, uint64_t gen) {
    pthread_mutex_unlock(&n->mu);
    double until = cr_now() + CR_CLOCK_SPIN_S;
    while (atomic_load(&n->clk_gen) == gen && !atomic_load(&n->stop) && cr_now() < until) sched_yield();
    pthread_mutex_lock(&n->mu);
}

int cr_node_clock(cr_node *n, int lw, cr_decide_fn decide, void *arg, cr_err *e) {
    int gw = n->id * n->wpn + lw, W = n->nodes * n->wpn;
    int64_t mine = announce(n, lw, 0);
    int64_t *snap = cr_xmalloc((size_t)W * sizeof *snap);
    double t0 = cr_now();
    int rc = 0;
    pthread_mutex_lock(&n->mu);
    for (;;) {
        if ((rc = must_leave(n, lw, e)) < 0) break;
        int64_t mn, mx;
        min_max(n, gw, mine, n->clocks, &mn, &mx);
        memcpy(snap, n->clocks, (size_t)W * sizeof *snap);
        snap[gw] = mine;
        uint64_t gen = n->clk_gen;
        pthread_mutex_unlock(&n->mu);
        int d = decide(arg, mine, mn, snap, W, e);
        pthread_mutex_lock(&n->mu);
        if (d < 0) {
            rc = -1;
            break;
        }
        if (d > 0) {
            if (mine - mn > n->ws[lw].max_gap) n->ws[lw].max_gap = mine - mn;
            break;
        }
        /* Wait for news unless something changed while deciding. */
        if (gen == n->clk_gen && !atomic_load(&n->stop)) {
            spin_for_news(n, gen);
            if (gen == n->clk_gen && !atomic_load(&n->stop)) pthread_cond_wait(&n->clk_cv, &n->mu);
        }
    }
    n->ws[lw].wait_s += cr_now() - t0;
    pthread_mutex_unlock(&n->mu);
    free(snap);
    return rc;
}

/* Waits on clk_cv, which the CANCEL handler and the teardown broadcast, so
 * that a cancel or a stop ends the sleep at once. */
int cr_node_sleep(cr_node *n, int lw, double seconds, cr_err *e) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    if (seconds > 0) {
        double t = seconds > 1e9 ? 1e9 : seconds; /* about 30 years: forever */
        until.tv_sec += (time_t)t;
        until.tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&n->mu);
    for (;;) {
        if ((rc = must_leave(n, lw, e)) < 0) break;
        if (seconds <= 0 || pthread_cond_timedwait(&n->clk_cv, &n->mu, &until) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&n->mu);
    if (rc == 0) rc = must_leave(n, lw, e); /* a cancel that came with the deadline still counts */
    return rc;
}

int cr_node_barrier(cr_node *n, int lw, cr_err *e) {
    int gw = n->id * n->wpn + lw;
    int64_t mine = announce(n, lw, 1);
    double t0 = cr_now();
    int rc = 0;
    pthread_mutex_lock(&n->mu);
    for (;;) {
        if ((rc = must_leave(n, lw, e)) < 0) break;
        int64_t mn, mx;
        min_max(n, gw, mine, n->barriers, &mn, &mx);
        if (mn >= mine) break;
        pthread_cond_wait(&n->clk_cv, &n->mu);
    }
    n->ws[lw].wait_s += cr_now() - t0;
    pthread_mutex_unlock(&n->mu);
    return rc;
}

/* ---------- relocation: keys come home (main thread) ---------- */

int cr_node_recall(cr_node *n, int table, cr_err *e) {
    cr_shard *s = n->tables[table];
    if (atomic_load(&s->dir->away) == 0 || !n->server_started) return 0;
    char cmd[5] = {'R'};
    int32_t t = table;
    memcpy(cmd + 1, &t, 4);
    if (zmq_send(n->stop_tx, cmd, sizeof cmd, 0) < 0)
        return cr_errf(e, "node %d: cannot ask the server thread to bring keys home", n->id);
    zmq_pollitem_t it = {.socket = n->stop_tx, .events = ZMQ_POLLIN};
    for (double until = cr_now() + 60; cr_now() < until;) {
        if (zmq_poll(&it, 1, 250) > 0) {
            char b[4];
            zmq_recv(n->stop_tx, b, sizeof b, 0);
            return 0;
        }
        cr_proto_msg hb; /* the wait is not silence */
        cr_proto_encode_empty(CR_M_HB, &hb, NULL);
        hb.h.node = n->id;
        cr_proto_send(n->sched, NULL, 0, &hb);
    }
    return cr_errf(e, "node %d: %lld keys of table '%s' did not come home within 60 s", n->id,
                   (long long)atomic_load(&s->dir->away), s->def.name);
}

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

/* ---------- main control loop ---------- */

/* Send m to the scheduler as this node's. */
static int send_sched(cr_node *n, cr_proto_msg *m) {
    m->h.node = n->id;
    return cr_proto_send(n->sched, NULL, 0, m);
}

/* Take a decoded WELCOME: id, job size, seed and the address book. */
static void take_welcome(cr_node *n, const cr_msg_welcome *w) {
    n->id = w->node;
    n->nodes = w->nodes;
    n->wpn = w->workers;
    n->seed = w->seed;
    n->addrs = cr_xcalloc((size_t)n->nodes, sizeof *n->addrs);
    for (int i = 0; i < n->nodes; i++) n->addrs[i] = cr_xstrdup(cr_proto_welcome_addr(w, i));
}

/* One message from the scheduler while joining: 1 once welcomed, 0 to keep
 * waiting (anything else is not for a node that has not joined yet), or -1
 * with a message when the scheduler gave up or its WELCOME is malformed. */
static int join_answer(cr_node *n, cr_parts *p, cr_err *e) {
    cr_proto_msg m;
    cr_msg_welcome w;
    cr_err why;
    if (cr_proto_view(p, 0, &m, &why) < 0) return 0;
    if (m.h.type == CR_M_SHUTDOWN) return cr_errf(e, "the scheduler gave up before the job started");
    cr_msg_reply r;
    if (m.h.type == CR_M_ERROR && cr_proto_decode_reply(&m, &r, &why) == 0)
        return cr_errf(e, "scheduler %s refused this node: %.*s", n->opts.scheduler, (int)r.n, r.data);
    if (m.h.type != CR_M_WELCOME) return 0;
    if (cr_proto_decode_welcome(&m, &w, &why) < 0)
        return cr_errf(e, "malformed answer from scheduler %s: %s", n->opts.scheduler, why.msg);
    take_welcome(n, &w);
    return 1;
}

static int join_timeout(cr_node *n, cr_err *e) {
    return cr_errf(e, "no answer from scheduler %s within 30 s%s", n->opts.scheduler,
                   n->opts.inproc     ? ""
                   : n->opts.curve.on ? " (is it using the same key?)"
                                      : " (a scheduler admits only nodes presenting its cluster key: "
                                        "set CRESCENT_CURVE_PUBLIC and CRESCENT_CURVE_SECRET)");
}

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

/* REGISTER with the scheduler and wait (up to 30 s) for its WELCOME. */
static int join_sched(cr_node *n, cr_err *e) {
    cr_msg_register r = {.pid = getpid(), .rank = n->opts.has_rank ? n->opts.rank : -1, .addr = n->advertise,
                         .addrn = strlen(n->advertise)};
    cr_proto_msg m;
    if (cr_proto_encode_register(&r, &m, e) < 0) return -1;
    if (cr_proto_send(n->sched, NULL, 0, &m) < 0)
        return cr_errf(e, "cannot send to scheduler %s: %s", n->opts.scheduler, zmq_strerror(errno));
    zmq_pollitem_t it = {.socket = n->sched, .events = ZMQ_POLLIN};
    double deadline = cr_now() + 30;
    for (;;) {
        double left = deadline - cr_now();
        if (left <= 0) return join_timeout(n, e);
        if (zmq_poll(&it, 1, (long)(left * 1000) + 1) <= 0) continue;
        cr_parts p;
        if (cr_parts_recv(n->sched, &p, 0) < 0) continue;
        int rc = join_answer(n, &p, e);
        cr_parts_close(&p);
        if (rc != 0) return rc < 0 ? -1 : 0;
    }
}

/* The server thread's stop pipe: a PAIR of inproc sockets, polled with the
 * data socket (as CZMQ's actors do), so that the thread sleeps until a
 * request or the stop comes. A PAIR, not the workers' PUB (wstop): a PUB
 * drops what it sends before a subscription has reached it, and the server
 * thread may still be starting when a job that failed at once stops. */
static int stop_pipe(cr_node *n, cr_err *e) {
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://crescent-node-stop-%p", (void *)n);
    n->srv_stop = cr_socket(n->zctx, ZMQ_PAIR);
    n->stop_tx = cr_socket(n->zctx, ZMQ_PAIR);
    if (!n->srv_stop || !n->stop_tx || zmq_bind(n->srv_stop, ep) < 0 || zmq_connect(n->stop_tx, ep) < 0)
        return cr_errf(e, "cannot create the server's stop pipe: %s", zmq_strerror(errno));
    return 0;
}

static int setup(cr_node *n, cr_err *e) {
    n->sched = cr_socket(n->zctx, ZMQ_DEALER);
    if (!n->opts.inproc) cr_curve_client(n->sched, &n->opts.curve);
    if (zmq_connect(n->sched, n->opts.scheduler) < 0)
        return cr_errf(e, "cannot connect to scheduler '%s': %s", n->opts.scheduler, zmq_strerror(errno));
    if (!n->opts.inproc) {
        n->data = cr_socket(n->zctx, ZMQ_ROUTER);
        /* no high-water mark: a ROUTER drops what goes over it, and with
         * relocation one request may be answered by many messages (keys that
         * waited in transit); what is queued is bounded by what was asked */
        int nohwm = 0;
        zmq_setsockopt(n->data, ZMQ_SNDHWM, &nohwm, sizeof nohwm);
        zmq_setsockopt(n->data, ZMQ_RCVHWM, &nohwm, sizeof nohwm);
        const char *bind = n->opts.bind ? n->opts.bind : "tcp://127.0.0.1:*";
        if (cr_curve_check_bind(&n->opts.curve, bind, e) < 0 ||
            cr_zap_start(n->zctx, &n->opts.curve, &n->zap, e) < 0)
            return -1;
        cr_curve_server(n->data, &n->opts.curve);
        if (zmq_bind(n->data, bind) < 0) return cr_errf(e, "cannot bind '%s': %s", bind, zmq_strerror(errno));
        size_t len = sizeof n->advertise;
        zmq_getsockopt(n->data, ZMQ_LAST_ENDPOINT, n->advertise, &len);
        if (n->opts.advertise) advertised(n->advertise, sizeof n->advertise, n->opts.advertise);
    }
    if (join_sched(n, e) < 0) return -1;
    if (!(n->replicas = cr_replicas_new(n, 0, e))) return -1; /* before the server thread, which delivers to it */
    int W = n->nodes * n->wpn;
    n->filt = cr_pfilter_new(CR_NODE_MAX_TABLES, W);
    n->clocks = cr_xcalloc((size_t)W + 1, 8);
    n->barriers = cr_xcalloc((size_t)W + 1, 8);
    n->active = cr_xcalloc((size_t)W + 1, 8);
    n->ws = cr_xcalloc((size_t)n->wpn + 1, sizeof *n->ws);
    n->wup = cr_xcalloc((size_t)n->wpn + 1, sizeof *n->wup);
    n->workers = cr_xcalloc((size_t)n->wpn + 1, sizeof *n->workers);
    n->up = cr_socket(n->zctx, ZMQ_PULL);
    snprintf(n->up_ep, sizeof n->up_ep, "inproc://crescent-node-up-%p", (void *)n);
    if (zmq_bind(n->up, n->up_ep) < 0) return cr_errf(e, "inproc bind: %s", zmq_strerror(errno));
    for (int i = 0; i < n->wpn; i++) {
        n->wup[i] = cr_socket(n->zctx, ZMQ_PUSH);
        zmq_connect(n->wup[i], n->up_ep);
    }
    /* Worker clients wait for replies in zmq_poll with no timeout; this
     * PUB, polled with their peer sockets, ends such a wait at stop. Bound
     * before any worker starts, so every client's SUB is connected in time. */
    n->wstop = cr_socket(n->zctx, ZMQ_PUB);
    snprintf(n->wstop_ep, sizeof n->wstop_ep, "inproc://crescent-node-wstop-%p", (void *)n);
    if (!n->wstop || zmq_bind(n->wstop, n->wstop_ep) < 0)
        return cr_errf(e, "cannot create the workers' stop signal: %s", zmq_strerror(errno));
    if (n->data) {
        if (stop_pipe(n, e) < 0) return -1;
        if (pthread_create(&n->server, NULL, cr_serve_main, n) != 0) return cr_errf(e, "cannot start server thread");
        n->server_started = 1;
    }
    for (int i = 0; i < n->wpn; i++) {
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

static void flush_progress(cr_node *n) {
    long long items = atomic_exchange(&n->progress, 0);
    if (items > 0) { /* PROGRESS counts items done: a net negative count (a script's mistake) is dropped */
        cr_msg_progress pr = {.items = items};
        cr_proto_msg m;
        cr_proto_encode_progress(&pr, &m, NULL);
        send_sched(n, &m);
    }
}

/* Forward what the workers sent up (replies, errors, clock states) to the
 * scheduler as it is. */
static void forward_up(cr_node *n) {
    cr_parts p;
    while (cr_parts_recv(n->up, &p, ZMQ_DONTWAIT) > 0) {
        flush_progress(n); /* progress made before a reply is counted before it */
        for (int i = 0; i < p.n; i++)
            zmq_send(n->sched, cr_parts_data(&p, i), cr_parts_size(&p, i), i + 1 < p.n ? ZMQ_SNDMORE : 0);
        cr_parts_close(&p);
    }
}

/* Milliseconds until the next thing this loop must do on its own: a
 * heartbeat, the scheduler's silence deadline, or (when workers have counted
 * progress that is not yet sent) the next progress report. Messages wake the
 * poll earlier; nothing is polled on a fixed tick. */
static long next_wake_ms(cr_node *n, double now, double hb_due, double deaf_at, double prog_due) {
    double t = hb_due < deaf_at ? hb_due : deaf_at;
    if (atomic_load(&n->progress) && prog_due < t) t = prog_due;
    return t <= now ? 0 : (long)((t - now) * 1000) + 1;
}

/* The node's main thread: scheduler commands, worker messages going up,
 * heartbeats and progress. Returns 0 on shutdown, -1 if the scheduler went
 * silent. */
static int loop(cr_node *n, cr_err *e) {
    double timeout = n->opts.timeout > 0 ? n->opts.timeout : 3.0;
    double heard = cr_now(), hb_due = 0, prog_due = 0;
    zmq_pollitem_t it[2] = {{.socket = n->sched, .events = ZMQ_POLLIN}, {.socket = n->up, .events = ZMQ_POLLIN}};
    for (;;) {
        zmq_poll(it, 2, next_wake_ms(n, cr_now(), hb_due, heard + timeout, prog_due));
        double now = cr_now();
        cr_parts p;
        while (cr_parts_recv(n->sched, &p, ZMQ_DONTWAIT) > 0) {
            int quit = cr_node_ctl_handle(n, &p);
            cr_parts_close(&p);
            if (quit) return 0;
            heard = now = cr_now(); /* after the handler: a long one (a big DIST) is not silence */
        }
        forward_up(n);
        if (now >= prog_due) {
            flush_progress(n);
            prog_due = now + PROGRESS_INTERVAL;
        }
        if (now >= hb_due) {
            cr_proto_msg m;
            cr_proto_encode_empty(CR_M_HB, &m, NULL);
            send_sched(n, &m);
            hb_due = now + HB_INTERVAL;
        }
        if (now - heard > timeout)
            return cr_errf(e, "node %d: scheduler %s silent for %.1f s; exiting", n->id, n->opts.scheduler,
                           now - heard);
    }
}

/* Wake every waiting worker and the server thread, and join them. -1 with a
 * message if a worker does not stop within 5 s (stuck in C code): its
 * resources are then left as they are, and the process must end (the
 * caller decides how). */
static int stop_threads(cr_node *n, cr_err *e) {
    atomic_store(&n->stop, 1);
    pthread_mutex_lock(&n->mu);
    pthread_cond_broadcast(&n->cmd_cv);
    pthread_cond_broadcast(&n->clk_cv);
    pthread_mutex_unlock(&n->mu);
    if (n->server_started) zmq_send(n->stop_tx, "", 0, 0);
    if (n->wstop) zmq_send(n->wstop, "", 0, ZMQ_DONTWAIT);
    for (int i = 0; i < n->nstarted; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 5;
        if (pthread_timedjoin_np(n->workers[i], NULL, &ts) != 0)
            return cr_errf(e, "node %d: worker %d did not stop within 5 s (stuck in C code); the process must exit",
                           n->id, i);
    }
    if (n->server_started) pthread_join(n->server, NULL);
    return 0;
}

/* Stop the threads and free everything. Returns 0, or -1 (message in e)
 * when a worker is stuck: then nothing is freed, since it may still use it. */
static int teardown(cr_node *n, cr_err *e) {
    if (stop_threads(n, e) < 0) return -1;
    cr_replicas_destroy(&n->replicas); /* after the server thread: it delivers to the replicas */
    cr_pfilter_destroy(&n->filt);
    for (int i = 0; n->wup && i < n->wpn; i++) zmq_close(n->wup[i]);
    void *socks[] = {n->up, n->data, n->sched, n->stop_tx, n->srv_stop, n->wstop};
    for (size_t i = 0; i < sizeof socks / sizeof *socks; i++)
        if (socks[i]) zmq_close(socks[i]);
    cr_zap_stop(&n->zap);
    for (int i = 0; i < atomic_load(&n->ntables); i++) cr_shard_destroy(&n->tables[i]);
    for (int i = 0; i < atomic_load(&n->ndists); i++) {
        cr_alias_free(&n->dists[i]->pi);
        cr_alias_free(&n->dists[i]->local);
        free(n->dists[i]);
    }
    for (int i = 0; n->addrs && i < n->nodes; i++) free(n->addrs[i]);
    void *bufs[] = {n->addrs, n->clocks, n->barriers, n->active, n->ws, n->wup, n->workers,
                    n->cmd_buf1, n->cmd_buf2, n->pol_src, n->pol_chunk, n->pol_opts, n->samp, n->dpend_w};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->cmd_cv);
    pthread_cond_destroy(&n->clk_cv);
    if (n->own_ctx) zmq_ctx_term(n->zctx);
    free(n);
    return 0;
}

int cr_node_run(const cr_node_opts *o, cr_err *e) {
    cr_node *n = cr_xcalloc(1, sizeof *n);
    n->opts = *o;
    n->zctx = o->zctx;
    if (!n->zctx) {
        n->zctx = zmq_ctx_new();
        n->own_ctx = 1;
    }
    pthread_mutex_init(&n->mu, NULL);
    pthread_cond_init(&n->cmd_cv, NULL);
    pthread_cond_init(&n->clk_cv, NULL);
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
