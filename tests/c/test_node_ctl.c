/* The node's command handlers (src/ps/cr_node_ctl.c) against a hand-made,
 * hostile scheduler: one node (1 worker) joins a bare ROUTER, then gets
 * malformed and unknown control messages. Each must be answered with an
 * ERROR (a malformed CALL with one per worker), never silence, and the node
 * must still answer well-formed requests afterwards. A node whose WELCOME
 * is malformed ends with an error saying why. */
#include <pthread.h>

#include "base/cr_time.h"
#include "cr_test.h"
#include "ps/cr_node.h"
#include "ps/cr_proto.h"

static char endpoint[256];

static void worker_main(cr_node *n, int lw) {
    cr_cmd c;
    while (cr_node_next_cmd(n, lw, &c) == 0) cr_node_reply(n, lw, 1, "1", 1);
}

static const cr_node_hooks hooks = {worker_main};

static void *node_thread(void *arg) {
    (void)arg;
    cr_node_opts o = {.scheduler = endpoint, .hooks = &hooks, .timeout = 60};
    cr_err e;
    if (cr_node_run(&o, &e) < 0) printf("node: %s\n", e.msg);
    return NULL;
}

static char rid[256];
static size_t ridlen;

/* Next message from the node other than a heartbeat: its type (0: none in 5 s). */
static int next_answer(void *router, char *text, size_t textn) {
    for (;;) {
        zmq_pollitem_t it = {.socket = router, .events = ZMQ_POLLIN};
        if (zmq_poll(&it, 1, 5000) <= 0) return 0;
        cr_parts p;
        cr_proto_msg m;
        if (cr_parts_recv(router, &p, 0) < 0) return 0;
        int type = cr_proto_view(&p, 1, &m, NULL) == 0 ? m.h.type : -1;
        if (type == CR_M_REGISTER) {
            ridlen = cr_parts_size(&p, 0);
            memcpy(rid, cr_parts_data(&p, 0), ridlen);
        }
        if (text) snprintf(text, textn, "%.*s", m.np ? (int)m.n[0] : 0, m.np ? (const char *)m.p[0] : "");
        cr_parts_close(&p);
        if (type != CR_M_HB) return type;
    }
}

/* Send raw frames to the node (after its routing id). */
static void raw(void *router, int n, const void *const *data, const size_t *len) {
    zmq_send(router, rid, ridlen, ZMQ_SNDMORE);
    for (int i = 0; i < n; i++) zmq_send(router, data[i], len[i], i + 1 < n ? ZMQ_SNDMORE : 0);
}

static void send_msg(void *router, cr_proto_msg *m) { cr_proto_send(router, rid, ridlen, m); }

static void test_hostile_scheduler(void) {
    void *ctx = zmq_ctx_new(), *router = cr_socket(ctx, ZMQ_ROUTER);
    CR_CHECK(zmq_bind(router, "tcp://127.0.0.1:*") == 0);
    size_t len = sizeof endpoint;
    zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len);
    pthread_t t;
    pthread_create(&t, NULL, node_thread, NULL);
    char text[512];
    CR_CHECK(next_answer(router, text, sizeof text) == CR_M_REGISTER);
    char book[300];
    size_t bn = strlen(text) + 1;
    memcpy(book, text, bn);
    cr_proto_msg m;
    CR_CHECK(cr_proto_encode_welcome(&(cr_msg_welcome){.node = 0, .nodes = 1, .workers = 1, .book = book, .bookn = bn}, &m, NULL) == 0);
    send_msg(router, &m);
    cr_ctl h = {.type = 99};
    int errors = 0;
    raw(router, 1, (const void *[]){"abc"}, (size_t[]){3}); /* short frame */
    errors += next_answer(router, NULL, 0) == CR_M_ERROR;
    raw(router, 1, (const void *[]){&h}, (size_t[]){sizeof h}); /* unknown type */
    errors += next_answer(router, text, sizeof text) == CR_M_ERROR;
    CR_CHECK(strstr(text, "unknown control message type 99") != NULL);
    send_msg(router, &m); /* a WELCOME again: known, but not for a running node */
    errors += next_answer(router, text, sizeof text) == CR_M_ERROR;
    CR_CHECK(strstr(text, "does not take WELCOME") != NULL);
    cr_msg_table tb = {.id = 0};
    snprintf(tb.def.name, sizeof tb.def.name, "T");
    tb.def.keys = 10;
    tb.def.dim = 2;
    cr_proto_encode_table(&tb, &m, NULL);
    m.n[0]--; /* truncated definition */
    send_msg(router, &m);
    errors += next_answer(router, NULL, 0) == CR_M_ERROR;
    m.n[0]++;
    send_msg(router, &m);
    CR_CHECK(next_answer(router, NULL, 0) == CR_M_ACK);
    cr_proto_encode_rows(CR_M_GETROWS, &(cr_msg_rows){.table = 5, .count = 1}, &m, NULL); /* no table 5 */
    send_msg(router, &m);
    errors += next_answer(router, NULL, 0) == CR_M_ERROR;
    float v[4] = {0};
    cr_proto_encode_rows(CR_M_SETROWS, &(cr_msg_rows){.table = 0, .count = 2, .values = v, .valuesn = 12}, &m, NULL);
    send_msg(router, &m); /* 12 bytes for 2 rows of dim 2 */
    errors += next_answer(router, NULL, 0) == CR_M_ERROR;
    cr_proto_encode_rows(CR_M_GETROWS, &(cr_msg_rows){.table = 0, .lo = 8, .count = INT64_MAX / 4}, &m, NULL);
    send_msg(router, &m); /* oversized count */
    errors += next_answer(router, NULL, 0) == CR_M_ERROR;
    int64_t cl[3] = {0};
    cr_proto_encode_clocks(CR_M_SETCLOCKS, &(cr_msg_clocks){.W = 3, .clocks = cl, .barriers = cl}, &m, NULL);
    send_msg(router, &m); /* 3 workers' clocks for a job of 1 */
    errors += next_answer(router, NULL, 0) == CR_M_ERROR;
    h.type = CR_M_CALL;
    raw(router, 2, (const void *[]){&h, "epoch"}, (size_t[]){sizeof h, 5}); /* args cut off */
    errors += next_answer(router, text, sizeof text) == CR_M_ERROR;
    h.type = CR_M_HB;
    raw(router, 4, (const void *[]){&h, "", "", ""}, (size_t[]){sizeof h, 0, 0, 0}); /* too many frames */
    errors += next_answer(router, NULL, 0) == CR_M_ERROR;
    h = (cr_ctl){.type = CR_M_SETLR, .f = 0.0 / 0.0};
    raw(router, 1, (const void *[]){&h}, (size_t[]){sizeof h}); /* NaN learning rate */
    errors += next_answer(router, NULL, 0) == CR_M_ERROR;
    CR_CHECK(errors == 11);
    /* still serving */
    cr_proto_encode_empty(CR_M_STATS, &m, NULL);
    send_msg(router, &m);
    CR_CHECK(next_answer(router, text, sizeof text) == CR_M_REPLY);
    CR_CHECK(strstr(text, "{node=0,") == text);
    cr_proto_encode_call(&(cr_msg_call){.fn = "f", .fnn = 1, .args = "{}", .argsn = 2}, &m, NULL);
    send_msg(router, &m);
    CR_CHECK(next_answer(router, text, sizeof text) == CR_M_REPLY);
    cr_proto_encode_empty(CR_M_SHUTDOWN, &m, NULL);
    send_msg(router, &m);
    pthread_join(t, NULL);
    zmq_close(router);
    zmq_ctx_term(ctx);
}

/* A node whose scheduler sends a malformed WELCOME (it announces 2 nodes,
 * its address book holds 1) does not join with half an address book: it
 * ends at once with an error naming what is wrong. */
static cr_err welcome_err;
static int welcome_rc;

static void *node_thread_err(void *arg) {
    (void)arg;
    cr_node_opts o = {.scheduler = endpoint, .hooks = &hooks, .timeout = 60};
    welcome_rc = cr_node_run(&o, &welcome_err);
    return NULL;
}

static void test_malformed_welcome(void) {
    void *ctx = zmq_ctx_new(), *router = cr_socket(ctx, ZMQ_ROUTER);
    CR_CHECK(zmq_bind(router, "tcp://127.0.0.1:*") == 0);
    size_t len = sizeof endpoint;
    zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len);
    pthread_t t;
    pthread_create(&t, NULL, node_thread_err, NULL);
    char text[512];
    int reg = next_answer(router, text, sizeof text);
    cr_proto_msg m;
    size_t bn = strlen(text) + 1;
    cr_proto_encode_welcome(&(cr_msg_welcome){.node = 0, .nodes = 1, .workers = 1, .book = text, .bookn = bn}, &m, NULL);
    m.h.a = 2; /* two nodes, one address */
    send_msg(router, &m);
    double t0 = cr_now();
    pthread_join(t, NULL);
    double took = cr_now() - t0;
    zmq_close(router);
    zmq_ctx_term(ctx);
    CR_CHECK(reg == CR_M_REGISTER);
    printf("  node: %s\n", welcome_err.msg);
    CR_CHECK(welcome_rc < 0);
    CR_CHECK(strstr(welcome_err.msg, "WELCOME: address book holds fewer than 2 addresses") != NULL);
    CR_CHECK(took < 5); /* not the 30 s join timeout */
}

int main(void) {
    CR_RUN(test_hostile_scheduler);
    CR_RUN(test_malformed_welcome);
    return cr_test_done();
}
