/* The node runtime without Lua: a scheduler and two node threads on
 * loopback tcp, workers written in C (cr_node_hooks). Checks remote and
 * local pull/push, duplicates, ordering (pull after push), async requests,
 * key errors, BSP clocks, rows over the control plane through the job
 * client (src/ps/cr_job.h), malformed frames sent to the scheduler's
 * control socket while a job runs, and a malformed REGISTER while it forms. */
#include <pthread.h>
#include <stdlib.h>

#include "cr_test.h"
#include "net/cr_auth.h"
#include "node_util.h"
#include "ps/cr_job.h"
#include "ps/cr_proto.h"
#include "ps/cr_wclient.h"

static int bsp(void *arg, int64_t my, int64_t mn, const int64_t *clocks, int nw, cr_err *e) {
    (void)arg, (void)clocks, (void)nw, (void)e;
    return mn >= my;
}

/* One command: p1 = "work". Worker gw pushes +1 (add rule) to every key of
 * table 0 `rounds` times, one clock each, pulling in between. Replies with
 * "ok" or the first failure. */
static const char *work(cr_node *n, cr_wclient *w, int lw, char *msg, size_t msgn) {
    cr_shard *s = cr_node_table_at(n, 0, NULL);
    if (!s) return "no table";
    int64_t K = s->def.keys, dim = s->def.dim;
    int64_t *keys = malloc((size_t)(K + 1) * sizeof *keys);
    float *ones = malloc((size_t)((K + 1) * dim) * sizeof *ones), *out = malloc((size_t)((K + 1) * dim) * sizeof *out);
    for (int64_t k = 0; k < K; k++) keys[k] = K - 1 - k; /* reversed: order must be kept */
    keys[K] = 0;                                          /* a duplicate */
    for (int64_t i = 0; i < (K + 1) * dim; i++) ones[i] = 1;
    cr_err e;
    const char *err = NULL;
    int W = cr_node_count(n) * cr_node_workers_per_node(n);
    for (int r = 1; r <= 3 && !err; r++) {
        uint32_t q;
        if (cr_wclient_push_copy(w, s, keys, K, ones, &q, &e) < 0 || cr_wclient_wait(w, q, &e) < 0) err = "push";
        if (!err && (cr_wclient_pull_copy(w, s, keys, K + 1, out, &q, &e) < 0 || cr_wclient_wait(w, q, &e) < 0))
            err = "pull";
        /* our own push is visible at once; others' not necessarily */
        for (int64_t i = 0; !err && i <= K; i++)
            if (out[i * dim] < r || out[i * dim + dim - 1] != out[i * dim]) err = "pull after push";
        if (!err && out[(K - 1) * dim] != out[K * dim]) err = "duplicate key";
        if (!err && cr_node_clock(n, lw, bsp, NULL, &e) < 0) err = "clock";
        /* after a BSP clock every worker's push of this round is in */
        if (!err && (cr_wclient_pull_copy(w, s, keys, K, out, &q, &e) < 0 || cr_wclient_wait(w, q, &e) < 0)) err = "pull2";
        for (int64_t i = 0; !err && i < K; i++)
            if (out[i * dim] < (float)(r * W)) {
                snprintf(msg, msgn, "bsp: key %lld = %g after round %d", (long long)keys[i], out[i * dim], r);
                err = msg;
            }
    }
    /* sync forms (caller's buffers borrowed) on keys that all live elsewhere */
    if (!err) {
        int other = 1 - cr_node_id(n);
        int64_t lo = other * s->block, cnt = (other == 0 ? s->block : K - s->block);
        float *before = malloc((size_t)(cnt * dim) * sizeof *before);
        for (int64_t i = 0; i < cnt; i++) keys[i] = lo + i;
        if (cr_wclient_pull_borrow(w, s, keys, cnt, before, &e) < 0 || cr_wclient_push_borrow(w, s, keys, cnt, ones, &e) < 0 ||
            cr_wclient_pull_borrow(w, s, keys, cnt, out, &e) < 0)
            err = "sync forms";
        for (int64_t i = 0; !err && i < cnt * dim; i++)
            if (out[i] < before[i] + 1) err = "sync push not seen by sync pull";
        /* owning push (the client takes and NULLs our buffers): one node, no copy; then all K keys (mixed) */
        for (int part = 0; part < 2 && !err; part++) {
            int64_t m = part ? K : cnt;
            int64_t *tk = malloc((size_t)m * sizeof *tk);
            float *tv = malloc((size_t)(m * dim) * sizeof *tv);
            for (int64_t i = 0; i < m; i++) tk[i] = part ? i : lo + i;
            for (int64_t i = 0; i < m * dim; i++) tv[i] = 1;
            uint32_t q;
            if (cr_wclient_push_take(w, s, &tk, m, &tv, &q, &e) < 0 || tk || tv || cr_wclient_wait(w, q, &e) < 0)
                err = "push_take";
        }
        if (!err && cr_wclient_pull_borrow(w, s, keys, cnt, out, &e) < 0) err = "pull after push_take";
        for (int64_t i = 0; !err && i < cnt * dim; i++)
            if (out[i] < before[i] + 3) err = "push_take not seen";
        free(before);
    }
    int64_t bad = K;
    uint32_t q;
    if (!err && cr_wclient_pull_copy(w, s, &bad, 1, out, &q, &e) == 0) err = "key out of range accepted";
    if (!err && !strstr(e.msg, "out of range")) err = "range message";
    free(keys);
    free(ones);
    free(out);
    return err ? err : "ok";
}

static void worker_main(cr_node *n, int lw) {
    cr_err e;
    cr_wclient *w = cr_wclient_new(n, lw, &e);
    cr_cmd c;
    char msg[256];
    while (cr_node_next_cmd(n, lw, &c) == 0) {
        const char *r = w ? work(n, w, lw, msg, sizeof msg) : "no client";
        cr_node_reply(n, lw, !strcmp(r, "ok"), r, strlen(r));
    }
    cr_wclient_destroy(&w);
}

static const cr_node_hooks hooks = {worker_main};

/* ---------- a stranger on the control socket ----------
 * A process that connects to the scheduler's endpoint the way a hand-started
 * node does (a DEALER; CURVE keys from CRESCENT_CURVE_* if the job uses
 * them) and sends malformed frames while the job runs. Each must be answered
 * with an ERROR, and the job must not notice. */

typedef struct stranger {
    char ep[256];
    int sent, refused;
    char last[256];
} stranger;

/* Send frames (n of them: data/len pairs), then wait up to 5 s for an ERROR. */
static void probe(void *sock, stranger *st, int n, const void *const *data, const size_t *len) {
    for (int i = 0; i < n; i++) zmq_send(sock, data[i], len[i], i + 1 < n ? ZMQ_SNDMORE : 0);
    st->sent++;
    zmq_pollitem_t it = {.socket = sock, .events = ZMQ_POLLIN};
    if (zmq_poll(&it, 1, 5000) <= 0) return;
    cr_parts p;
    cr_proto_msg m;
    cr_msg_reply r;
    if (cr_parts_recv(sock, &p, 0) < 0) return;
    if (cr_proto_view(&p, 0, &m, NULL) == 0 && cr_proto_decode_reply(&m, &r, NULL) == 0 && m.h.type == CR_M_ERROR) {
        st->refused++;
        snprintf(st->last, sizeof st->last, "%.*s", (int)r.n, r.data);
    }
    cr_parts_close(&p);
}

static void *stranger_main(void *arg) {
    stranger *st = arg;
    void *ctx = zmq_ctx_new(), *sock = cr_socket(ctx, ZMQ_DEALER);
    cr_curve c;
    if (cr_curve_from_env(&c, NULL) == 0) cr_curve_client(sock, &c);
    zmq_connect(sock, st->ep);
    char garbage[300];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (char)(i * 131 + 7);
    cr_ctl h = {.type = CR_M_REGISTER, .a = 1234};
    char big[4096];
    memset(big, 'a', sizeof big);
    /* short frame */
    probe(sock, st, 1, (const void *[]){"abc"}, (size_t[]){3});
    /* oversized count: a REGISTER whose address is 4 KB */
    probe(sock, st, 2, (const void *[]){&h, big}, (size_t[]){sizeof h, sizeof big});
    /* wrong type */
    h.type = 99;
    probe(sock, st, 1, (const void *[]){&h}, (size_t[]){sizeof h});
    /* garbage bytes, three frames of them */
    probe(sock, st, 3, (const void *[]){garbage, garbage + 100, garbage + 200}, (size_t[]){100, 100, 100});
    /* a valid CALL header with its payloads cut off */
    h.type = CR_M_CALL;
    probe(sock, st, 1, (const void *[]){&h}, (size_t[]){sizeof h});
    /* a well-formed REGISTER: the job has all its nodes */
    h.type = CR_M_REGISTER;
    probe(sock, st, 2, (const void *[]){&h, "tcp://127.0.0.1:1"}, (size_t[]){sizeof h, 17});
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return NULL;
}

static int on_result(void *arg, int worker, const char *data, size_t n, cr_err *e) {
    (void)worker, (void)e;
    if (n == 2 && !memcmp(data, "ok", 2)) (*(int *)arg)++;
    return 0;
}

static void test_two_nodes(void) {
    test_nodes t = {.hooks = &hooks, .count = 2};
    cr_job_opts o = {.nodes = 2, .workers = 2, .seed = 1, .spawn = 0, .on_listen = test_nodes_start, .on_listen_arg = &t,
                     .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    CR_CHECK(j != NULL);
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "T");
    d.keys = 101;
    d.dim = 4;
    d.optim.kind = CR_OPTIM_ADD;
    CR_CHECK(cr_job_table(j, 0, &d, &e) == 0);
    stranger st = {0};
    snprintf(st.ep, sizeof st.ep, "%s", cr_job_endpoint(j));
    pthread_t sth;
    pthread_create(&sth, NULL, stranger_main, &st);
    int ok = 0;
    cr_job_cb cb = {.result = on_result, .arg = &ok};
    int rc = cr_job_call(j, "work", 4, "", 0, &cb, &e);
    if (rc < 0) printf("  worker error: %s\n", cr_job_error(j));
    CR_CHECK(rc == 0);
    CR_CHECK(ok == 4);
    pthread_join(sth, NULL);
    printf("  stranger: %d of %d malformed messages refused (last: %s)\n", st.refused, st.sent, st.last);
    CR_CHECK(st.sent == 6 && st.refused == 6);
    CR_CHECK_STR(st.last, "the job has all its nodes");
    /* rows over the control plane: key 100 lives on node 1 (block 51) */
    float v[4];
    CR_CHECK(cr_job_get_rows(j, 0, 1, 100, 1, 4, 0, v, NULL, &e) == 0);
    /* 3 rounds x 4 workers + one sync push and one owning push from each worker of node 0 + one owning push
     * of every key from each of the 4 workers */
    CR_CHECK_NEAR(v[0], 3 * 4 + 2 + 2 + 4, 0);
    /* a range that is not on the node is an error answer, not silence */
    CR_CHECK(cr_job_get_rows(j, 0, 0, 100, 1, 4, 0, v, NULL, &e) < 0);
    CR_CHECK(strstr(e.msg, "not on node 0") != NULL);
    /* set rows, read them back; the job is still usable after the error */
    float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CR_CHECK(cr_job_set_rows(j, 0, 1, 99, 2, 4, 0, w, NULL, &e) == 0);
    float back[8];
    CR_CHECK(cr_job_get_rows(j, 0, 1, 99, 2, 4, 0, back, NULL, &e) == 0);
    CR_CHECK(!memcmp(w, back, sizeof w));
    CR_CHECK(cr_job_set_lr(j, 0, 0.5, &e) == 0);
    CR_CHECK(cr_job_set_lr(j, 7, 0.5, &e) < 0); /* no table 7: an ERROR answer */
    cr_job_close(&j);
    CR_CHECK(j == NULL);
    test_nodes_join(&t);
}

/* ---------- a malformed REGISTER while the job is forming ----------
 * A REGISTER with pid 0 must not take a node slot: it is answered with an
 * ERROR naming the fault, and the real node that comes next joins. */

typedef struct late {
    pthread_t t;
    test_nodes node; /* the real node, run in t after the bad REGISTER */
    char answer[256];
    int type;
} late;

static void *bad_then_node(void *arg) {
    late *l = arg;
    void *ctx = zmq_ctx_new(), *sock = cr_socket(ctx, ZMQ_DEALER);
    zmq_connect(sock, l->node.ep);
    cr_proto_msg m;
    cr_proto_encode_register(&(cr_msg_register){.pid = 0, .addr = "tcp://127.0.0.1:1", .addrn = 17}, &m, NULL);
    cr_proto_send(sock, NULL, 0, &m);
    zmq_pollitem_t it = {.socket = sock, .events = ZMQ_POLLIN};
    cr_parts p;
    cr_msg_reply r;
    if (zmq_poll(&it, 1, 5000) > 0 && cr_parts_recv(sock, &p, 0) > 0) {
        if (cr_proto_view(&p, 0, &m, NULL) == 0 && cr_proto_decode_reply(&m, &r, NULL) == 0) {
            l->type = m.h.type;
            snprintf(l->answer, sizeof l->answer, "%.*s", (int)r.n, r.data);
        }
        cr_parts_close(&p);
    }
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return test_nodes_node(&l->node);
}

static void start_late(const char *ep, void *arg) {
    late *l = arg;
    snprintf(l->node.ep, sizeof l->node.ep, "%s", ep);
    pthread_create(&l->t, NULL, bad_then_node, arg);
}

static void test_bad_register(void) {
    late l = {.node = {.hooks = &hooks}};
    cr_job_opts o = {.nodes = 1, .workers = 1, .seed = 1, .spawn = 0, .on_listen = start_late, .on_listen_arg = &l,
                     .join_timeout = 10};
    cr_err e;
    cr_job *j = cr_job_start(&o, &e);
    CR_CHECK(j != NULL);
    cr_job_close(&j);
    pthread_join(l.t, NULL);
    printf("  malformed REGISTER answered: %s\n", l.answer);
    CR_CHECK(l.type == CR_M_ERROR);
    CR_CHECK_STR(l.answer, "REGISTER: bad pid 0");
}

/* The size limits live in one place and name the limit. */
static void test_check_size(void) {
    cr_err e;
    CR_CHECK(cr_job_check_size(4, 2, &e) == 0);
    CR_CHECK(cr_job_check_size(2, 0, &e) == 0); /* tables only */
    CR_CHECK(cr_job_check_size(0, 1, &e) < 0);
    CR_CHECK(cr_job_check_size(1, -1, &e) < 0);
    CR_CHECK(cr_job_check_size(1000, 1, &e) < 0);
    CR_CHECK(strstr(e.msg, "at most") != NULL);
}

int main(void) {
    CR_RUN(test_two_nodes);
    CR_RUN(test_bad_register);
    CR_RUN(test_check_size);
    return cr_test_done();
}
