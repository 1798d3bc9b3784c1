/* The node runtime without Lua: a scheduler and two node threads on
 * loopback tcp, workers written in C (cr_node_hooks). Checks remote and
 * local pull/push, duplicates, ordering (pull after push), async requests,
 * key errors, BSP clocks, and rows/stats over the control plane. */
#include <pthread.h>
#include <stdlib.h>

#include "cr_test.h"
#include "net/cr_wire.h"
#include "ps/cr_sched.h"
#include "ps/cr_wclient.h"

static char endpoint[256];

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

static void *node_thread(void *arg) {
    (void)arg;
    cr_node_opts o = {.scheduler = endpoint, .hooks = &hooks};
    cr_err e;
    if (cr_node_run(&o, &e) < 0) printf("node: %s\n", e.msg);
    return NULL;
}

static void start_nodes(const char *ep, void *arg) {
    snprintf(endpoint, sizeof endpoint, "%s", ep);
    for (int i = 0; i < 2; i++) pthread_create(&((pthread_t *)arg)[i], NULL, node_thread, NULL);
}

static int wait_replies(cr_sched *s, int want, char *first_err, size_t n) {
    int ok = 0;
    first_err[0] = 0;
    for (int got = 0; got < want;) {
        cr_parts p;
        cr_err e;
        int rc = cr_sched_recv(s, &p, 10000, &e);
        if (rc <= 0) {
            snprintf(first_err, n, "%s", rc < 0 ? e.msg : "timeout");
            return ok;
        }
        cr_ctl h;
        const void *p1, *p2;
        size_t n1, n2;
        cr_ctl_parse(&p, 0, &h, &p1, &n1, &p2, &n2);
        if (h.type == CR_M_REPLY || h.type == CR_M_ACK) ok++, got++;
        else if (h.type == CR_M_ERROR) {
            got++;
            if (!first_err[0]) snprintf(first_err, n, "%.*s", (int)n1, (const char *)p1);
        }
        cr_parts_close(&p);
    }
    return ok;
}

static void test_two_nodes(void) {
    pthread_t t[2];
    cr_sched_opts o = {.nodes = 2, .workers = 2, .seed = 1, .spawn = 0, .on_listen = start_nodes, .on_listen_arg = t, .join_timeout = 10};
    cr_err e;
    cr_sched *s = cr_sched_start(&o, &e);
    CR_CHECK(s != NULL);
    cr_table_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "T");
    d.keys = 101;
    d.dim = 4;
    d.optim.kind = CR_OPTIM_ADD;
    cr_ctl h = {.type = CR_M_TABLE, .table = 0};
    char err[512];
    CR_CHECK(cr_sched_send(s, -1, &h, &d, sizeof d, NULL, 0, &e) == 0);
    CR_CHECK(wait_replies(s, 2, err, sizeof err) == 2);
    h = (cr_ctl){.type = CR_M_CALL};
    CR_CHECK(cr_sched_send(s, -1, &h, "work", 4, "", 0, &e) == 0);
    int ok = wait_replies(s, 4, err, sizeof err);
    if (err[0]) printf("  worker error: %s\n", err);
    CR_CHECK(ok == 4);
    /* rows over the control plane: key 100 lives on node 1 (block 51) */
    h = (cr_ctl){.type = CR_M_GETROWS, .table = 0, .a = 100, .b = 1};
    CR_CHECK(cr_sched_send(s, 1, &h, NULL, 0, NULL, 0, &e) == 0);
    cr_parts p;
    CR_CHECK(cr_sched_recv(s, &p, 10000, &e) == 1);
    cr_ctl r;
    const void *p1, *p2;
    size_t n1, n2;
    cr_ctl_parse(&p, 0, &r, &p1, &n1, &p2, &n2);
    float v[4];
    int rows_ok = r.type == CR_M_ROWS && n1 == sizeof v;
    if (rows_ok) memcpy(v, p1, sizeof v);
    cr_parts_close(&p);
    CR_CHECK(rows_ok);
    /* 3 rounds x 4 workers + one sync push and one owning push from each worker of node 0 + one owning push
     * of every key from each of the 4 workers */
    CR_CHECK_NEAR(v[0], 3 * 4 + 2 + 2 + 4, 0);
    cr_sched_close(&s);
    CR_CHECK(s == NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
}

int main(void) {
    CR_RUN(test_two_nodes);
    return cr_test_done();
}
