#include "ps/cr_node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cr_alloc.h"
#include "base/cr_time.h"
#include "ps/cr_node_impl.h"
#include "ps/cr_proto.h"

#define HB_INTERVAL 0.5

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
    char *src = malloc(sn + 1), *opts = malloc(on + 1), *chunk = strdup(n->pol_chunk ? n->pol_chunk : "?");
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
        if (gen == n->clk_gen && !atomic_load(&n->stop)) pthread_cond_wait(&n->clk_cv, &n->mu);
    }
    n->ws[lw].wait_s += cr_now() - t0;
    pthread_mutex_unlock(&n->mu);
    free(snap);
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

/* ---------- server thread: pull/push requests from other nodes ---------- */

static void serve_one(cr_node *n, cr_parts *p) {
    if (p->n < 3 || cr_parts_size(p, 1) != sizeof(cr_dhdr)) return;
    cr_dhdr h;
    memcpy(&h, cr_parts_data(p, 1), sizeof h);
    cr_shard *s = h.table < atomic_load(&n->ntables) ? n->tables[h.table] : NULL;
    size_t nk = (size_t)h.nkeys;
    if (!s || cr_parts_size(p, 2) != nk * sizeof(int64_t)) return;
    int64_t *keys = cr_parts_data(p, 2), *tmp = NULL;
    if ((uintptr_t)keys % sizeof(int64_t)) {
        tmp = malloc(nk * sizeof *tmp + 1);
        memcpy(tmp, keys, nk * sizeof *tmp);
        keys = tmp;
    }
    for (size_t i = 0; i < nk; i++)
        if (keys[i] < s->lo || keys[i] >= s->hi) goto done; /* not ours: drop (client validated) */
    size_t vbytes = nk * (size_t)s->def.dim * sizeof(float);
    cr_dhdr r = h;
    r.flags = 0;
    r.raw_bytes = (int64_t)vbytes;
    zmq_send(n->data, cr_parts_data(p, 0), cr_parts_size(p, 0), ZMQ_SNDMORE);
    if (h.type == CR_D_PULL) {
        float *out = malloc(vbytes + 1);
        cr_shard_pull(s, keys, (int64_t)nk, out);
        void *frame = out;
        size_t flen = vbytes;
        if (s->def.compress && vbytes >= 65536) {
            void *z;
            size_t zn;
            if (cr_wire_deflate(out, vbytes, &z, &zn, NULL) == 0) {
                free(out);
                frame = z;
                flen = zn;
                r.flags |= CR_D_ZLIB;
            }
        }
        r.type = CR_D_PULL_REP;
        zmq_send(n->data, &r, sizeof r, ZMQ_SNDMORE);
        cr_send_owned(n->data, frame, flen, 0);
        atomic_fetch_add(&n->bytes_remote, (long long)(flen + sizeof r));
    } else if (h.type == CR_D_PUSH && p->n >= 4) {
        const float *g = cr_parts_data(p, 3);
        float *buf = NULL;
        if (h.flags & CR_D_ZLIB) {
            buf = malloc(vbytes + 1);
            if (cr_wire_inflate(g, cr_parts_size(p, 3), buf, vbytes, NULL) < 0) memset(buf, 0, vbytes);
            g = buf;
        } else if (cr_parts_size(p, 3) != vbytes || (uintptr_t)g % sizeof(float)) {
            buf = calloc(1, vbytes + 1);
            memcpy(buf, g, cr_parts_size(p, 3) < vbytes ? cr_parts_size(p, 3) : vbytes);
            g = buf;
        }
        cr_shard_push(s, keys, (int64_t)nk, g);
        free(buf);
        r.type = CR_D_PUSH_ACK;
        r.nkeys = 0;
        zmq_send(n->data, &r, sizeof r, 0);
        atomic_fetch_add(&n->bytes_remote, (long long)sizeof r);
    }
    atomic_fetch_add(&n->msgs_remote, 1);
    atomic_fetch_add(&n->served, 1);
done:
    free(tmp);
}

static void *server_main(void *arg) {
    cr_node *n = arg;
    zmq_pollitem_t it = {.socket = n->data, .events = ZMQ_POLLIN};
    while (!atomic_load(&n->stop)) {
        if (zmq_poll(&it, 1, 200) <= 0) continue;
        cr_parts p;
        while (cr_parts_recv(n->data, &p, ZMQ_DONTWAIT) > 0) {
            serve_one(n, &p);
            cr_parts_close(&p);
        }
    }
    return NULL;
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

static int send_sched(cr_node *n, const cr_ctl *h, const void *p1, size_t n1, const void *p2, size_t n2) {
    cr_ctl c = *h;
    c.node = n->id;
    return cr_ctl_send(n->sched, NULL, 0, &c, p1, n1, p2, n2);
}

static char *dupn(const void *p, size_t n) {
    char *s = malloc(n + 1);
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static int join_sched(cr_node *n, cr_err *e) {
    cr_ctl h = {.type = CR_M_REGISTER, .node = -1, .a = getpid()};
    if (cr_ctl_send(n->sched, NULL, 0, &h, n->advertise, strlen(n->advertise), NULL, 0) < 0)
        return cr_errf(e, "cannot send to scheduler %s: %s", n->opts.scheduler, zmq_strerror(errno));
    zmq_pollitem_t it = {.socket = n->sched, .events = ZMQ_POLLIN};
    double deadline = cr_now() + 30;
    for (;;) {
        double left = deadline - cr_now();
        if (left <= 0) return cr_errf(e, "no answer from scheduler %s within 30 s", n->opts.scheduler);
        if (zmq_poll(&it, 1, (long)(left * 1000) + 1) <= 0) continue;
        cr_parts p;
        if (cr_parts_recv(n->sched, &p, 0) < 0) continue;
        const void *p1, *p2;
        size_t n1, n2;
        int ok = cr_ctl_parse(&p, 0, &h, &p1, &n1, &p2, &n2) == 0 && h.type == CR_M_WELCOME;
        if (!ok && h.type == CR_M_SHUTDOWN) {
            cr_parts_close(&p);
            return cr_errf(e, "the scheduler gave up before the job started");
        }
        if (ok) {
            n->id = h.node;
            n->nodes = (int)h.a;
            n->wpn = (int)h.b;
            memcpy(&n->seed, &h.f, sizeof n->seed);
            n->addrs = calloc((size_t)n->nodes, sizeof *n->addrs);
            const char *a = p1;
            for (int i = 0; i < n->nodes; i++) {
                size_t l = a ? strnlen(a, n1 - (size_t)(a - (const char *)p1)) : 0;
                n->addrs[i] = dupn(a ? a : "", l);
                if (a) a += l + 1;
                if (a && a >= (const char *)p1 + n1) a = NULL;
            }
        }
        cr_parts_close(&p);
        if (ok) return 0;
    }
}

static int setup(cr_node *n, cr_err *e) {
    n->sched = cr_socket(n->zctx, ZMQ_DEALER);
    if (!n->opts.inproc) cr_curve_client(n->sched, &n->opts.curve);
    if (zmq_connect(n->sched, n->opts.scheduler) < 0)
        return cr_errf(e, "cannot connect to scheduler '%s': %s", n->opts.scheduler, zmq_strerror(errno));
    if (!n->opts.inproc) {
        n->data = cr_socket(n->zctx, ZMQ_ROUTER);
        const char *bind = n->opts.bind ? n->opts.bind : "tcp://127.0.0.1:*";
        if (cr_curve_check_bind(&n->opts.curve, bind, e) < 0 ||
            cr_zap_start(n->zctx, &n->opts.curve, &n->zap, e) < 0)
            return -1;
        cr_curve_server(n->data, &n->opts.curve);
        if (zmq_bind(n->data, bind) < 0) return cr_errf(e, "cannot bind '%s': %s", bind, zmq_strerror(errno));
        size_t len = sizeof n->advertise;
        zmq_getsockopt(n->data, ZMQ_LAST_ENDPOINT, n->advertise, &len);
        if (n->opts.advertise) snprintf(n->advertise, sizeof n->advertise, "%s", n->opts.advertise);
    }
    if (join_sched(n, e) < 0) return -1;
    int W = n->nodes * n->wpn;
    n->clocks = calloc((size_t)W + 1, 8);
    n->barriers = calloc((size_t)W + 1, 8);
    n->active = calloc((size_t)W + 1, 8);
    n->ws = calloc((size_t)n->wpn + 1, sizeof *n->ws);
    n->wup = calloc((size_t)n->wpn + 1, sizeof *n->wup);
    n->workers = calloc((size_t)n->wpn + 1, sizeof *n->workers);
    n->up = cr_socket(n->zctx, ZMQ_PULL);
    snprintf(n->up_ep, sizeof n->up_ep, "inproc://crescent-node-up-%p", (void *)n);
    if (zmq_bind(n->up, n->up_ep) < 0) return cr_errf(e, "inproc bind: %s", zmq_strerror(errno));
    for (int i = 0; i < n->wpn; i++) {
        n->wup[i] = cr_socket(n->zctx, ZMQ_PUSH);
        zmq_connect(n->wup[i], n->up_ep);
    }
    if (n->data) {
        if (pthread_create(&n->server, NULL, server_main, n) != 0) return cr_errf(e, "cannot start server thread");
        n->server_started = 1;
    }
    for (int i = 0; i < n->wpn; i++) {
        wstart *ws = malloc(sizeof *ws);
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
    if (items) {
        cr_ctl h = {.type = CR_M_PROGRESS, .worker = -1, .a = items};
        send_sched(n, &h, NULL, 0, NULL, 0);
    }
}

static int loop(cr_node *n, cr_err *e) {
    double timeout = n->opts.timeout > 0 ? n->opts.timeout : 3.0;
    double heard = cr_now(), hb = 0;
    zmq_pollitem_t it[2] = {{.socket = n->sched, .events = ZMQ_POLLIN}, {.socket = n->up, .events = ZMQ_POLLIN}};
    for (;;) {
        zmq_poll(it, 2, 100);
        double now = cr_now();
        cr_parts p;
        while (cr_parts_recv(n->sched, &p, ZMQ_DONTWAIT) > 0) {
            heard = now;
            int quit = cr_node_ctl_handle(n, &p);
            cr_parts_close(&p);
            if (quit) return 0;
        }
        while (cr_parts_recv(n->up, &p, ZMQ_DONTWAIT) > 0) { /* worker -> scheduler, as is */
            flush_progress(n); /* progress made before a reply is counted before it */
            for (int i = 0; i < p.n; i++)
                zmq_send(n->sched, cr_parts_data(&p, i), cr_parts_size(&p, i), i + 1 < p.n ? ZMQ_SNDMORE : 0);
            cr_parts_close(&p);
        }
        flush_progress(n);
        if (now - hb >= HB_INTERVAL) {
            cr_ctl h = {.type = CR_M_HB, .worker = -1};
            send_sched(n, &h, NULL, 0, NULL, 0);
            hb = now;
        }
        if (now - heard > timeout)
            return cr_errf(e, "node %d: scheduler %s silent for %.1f s; exiting", n->id, n->opts.scheduler,
                           now - heard);
    }
}

static void teardown(cr_node *n) {
    atomic_store(&n->stop, 1);
    pthread_mutex_lock(&n->mu);
    pthread_cond_broadcast(&n->cmd_cv);
    pthread_cond_broadcast(&n->clk_cv);
    pthread_mutex_unlock(&n->mu);
    for (int i = 0; i < n->nstarted; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 5;
        if (pthread_timedjoin_np(n->workers[i], NULL, &ts) != 0) {
            /* A worker stuck in C code: we cannot free what it uses. */
            fprintf(stderr, "crescent: node %d: worker %d did not stop; exiting\n", n->id, i);
            _exit(1);
        }
    }
    if (n->server_started) pthread_join(n->server, NULL);
    for (int i = 0; n->wup && i < n->wpn; i++) zmq_close(n->wup[i]);
    if (n->up) zmq_close(n->up);
    if (n->data) zmq_close(n->data);
    if (n->sched) zmq_close(n->sched);
    cr_zap_stop(&n->zap);
    for (int i = 0; i < atomic_load(&n->ntables); i++) cr_shard_destroy(&n->tables[i]);
    for (int i = 0; n->addrs && i < n->nodes; i++) free(n->addrs[i]);
    free(n->addrs);
    free(n->clocks);
    free(n->barriers);
    free(n->active);
    free(n->ws);
    free(n->wup);
    free(n->workers);
    free(n->cmd_buf1);
    free(n->cmd_buf2);
    free(n->pol_src);
    free(n->pol_chunk);
    free(n->pol_opts);
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->cmd_cv);
    pthread_cond_destroy(&n->clk_cv);
    if (n->own_ctx) zmq_ctx_term(n->zctx);
    free(n);
}

int cr_node_run(const cr_node_opts *o, cr_err *e) {
    cr_node *n = calloc(1, sizeof *n);
    if (!n) return cr_errf(e, "out of memory");
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
    teardown(n);
    return rc;
}
