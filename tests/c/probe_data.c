/* A hostile peer for tests/integration/ps_data_probe.sh (not a unit test:
 * it needs a running job).
 *
 *   probe_data ADDR             send malformed requests and a NaN push to the
 *                               node data socket ADDR (with the cluster key
 *                               from CRESCENT_CURVE_* if set); every one must
 *                               get an error reply and change nothing
 *   probe_data --outsider ADDR  the same NaN push without any key: must get
 *                               no reply at all (the connection is refused)
 *   probe_data --register EP    a fake REGISTER without a key to the
 *                               scheduler EP: must not be welcomed
 *
 * Prints one line per case and "N passed, N failed"; exits 0 if all passed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "base/cr_time.h"
#include "net/cr_auth.h"
#include "net/cr_filter.h"
#include "net/cr_wire.h"
#include "ps/cr_dhdr.h"
#include "ps/cr_proto.h"

static int passed, failed;
static uint32_t next_req = 1000;

static void result(int ok, const char *name, const char *detail) {
    printf("%s %s: %s\n", ok ? "ok  " : "FAIL", name, detail);
    if (ok) passed++;
    else failed++;
}

/* Send frames (sizes in lens, count n) as one message. A send that cannot
 * go within 2 s gives up: a node that refuses the handshake (the outsider
 * cases) drops the connection's pipe, and a DEALER without a pipe would
 * block in zmq_send for ever (seen under ASan, where the probe is slow
 * enough to be between frames when the refusal lands). */
static void send_frames(void *s, const void **bufs, const size_t *lens, int n) {
    int ms = 2000;
    zmq_setsockopt(s, ZMQ_SNDTIMEO, &ms, sizeof ms);
    for (int i = 0; i < n; i++)
        if (zmq_send(s, bufs[i], lens[i], i + 1 < n ? ZMQ_SNDMORE : 0) < 0) return;
}

/* Wait up to ms for a reply; returns its frame count (0: none). */
static int await_reply(void *s, cr_parts *p, long ms) {
    zmq_pollitem_t it = {.socket = s, .events = ZMQ_POLLIN};
    if (zmq_poll(&it, 1, ms) <= 0) return 0;
    return cr_parts_recv(s, p, 0) > 0 ? p->n : 0;
}

static cr_dhdr header(int type, int table, int64_t nkeys, int dim) {
    cr_dhdr h = {.type = (uint8_t)type, .table = (uint16_t)table, .req = next_req++, .worker = 99, .dim = dim,
                 .nkeys = nkeys};
    return h;
}

/* Send a request and expect a CR_D_ERROR reply. */
static void expect_error(void *s, const char *name, const void **bufs, const size_t *lens, int n) {
    send_frames(s, bufs, lens, n);
    cr_parts p;
    if (!await_reply(s, &p, 3000)) {
        result(0, name, "no reply within 3 s");
        return;
    }
    cr_dhdr r;
    int ok = p.n >= 2 && cr_parts_size(&p, 0) == sizeof r;
    if (ok) memcpy(&r, cr_parts_data(&p, 0), sizeof r);
    ok = ok && r.type == CR_D_ERROR;
    char msg[300];
    snprintf(msg, sizeof msg, "%s%.*s", ok ? "error reply: " : "unexpected reply: ",
             p.n >= 2 ? (int)(cr_parts_size(&p, 1) < 250 ? cr_parts_size(&p, 1) : 250) : 0,
             p.n >= 2 ? (const char *)cr_parts_data(&p, 1) : "");
    result(ok, name, msg);
    cr_parts_close(&p);
}

/* Pull key k of table 0 (dim 3): 1 with its row in out if this node holds
 * it, 0 if refused, -1 if no reply. */
static int pull_row(void *s, int64_t k, float out[3]) {
    cr_dhdr h = header(CR_D_PULL, 0, 1, 3);
    const void *b[] = {&h, &k};
    size_t l[] = {sizeof h, sizeof k};
    send_frames(s, b, l, 2);
    cr_parts p;
    if (!await_reply(s, &p, 3000)) return -1;
    cr_dhdr r;
    memcpy(&r, cr_parts_data(&p, 0), sizeof r);
    int ok = r.type == CR_D_PULL_REP && p.n == 2 && cr_parts_size(&p, 1) == 3 * sizeof(float);
    if (ok) memcpy(out, cr_parts_data(&p, 1), 3 * sizeof(float));
    cr_parts_close(&p);
    return ok;
}

static void malformed_cases(void *s, int64_t mine, int64_t other) {
    cr_dhdr h = header(CR_D_PULL, 0, 1, 3);
    char junk[64];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(i * 37 + 11);
    const void *b1[] = {""};
    size_t l1[] = {0};
    expect_error(s, "short frame", b1, l1, 1);
    const void *b2[] = {&h, &mine};
    size_t l2[] = {5, sizeof mine};
    expect_error(s, "header of the wrong size", b2, l2, 2);
    cr_dhdr big = header(CR_D_PULL, 0, (int64_t)1 << 40, 3);
    const void *b3[] = {&big, &mine};
    size_t l3[] = {sizeof big, sizeof mine};
    expect_error(s, "oversized nkeys", b3, l3, 2);
    cr_dhdr wdim = header(CR_D_PULL, 0, 1, 1 << 20);
    const void *b4[] = {&wdim, &mine};
    expect_error(s, "wrong dim", b4, l3, 2);
    cr_dhdr wt = header(99, 0, 1, 3);
    const void *b5[] = {&wt, &mine};
    expect_error(s, "wrong type", b5, l3, 2);
    const void *b6[] = {junk, junk};
    size_t l6[] = {sizeof(cr_dhdr), 24};
    expect_error(s, "garbage bytes", b6, l6, 2);
    cr_dhdr tp = header(CR_D_PUSH, 0, 2, 3);
    int64_t two[2] = {mine, mine};
    float vals[6] = {1, 1, 1, 1, 1, 1};
    const void *b7[] = {&tp, two, vals};
    size_t l7[] = {sizeof tp, sizeof two, 10};
    expect_error(s, "valid header, truncated payload", b7, l7, 3);
    cr_dhdr tk = header(CR_D_PUSH, 0, 2, 3);
    size_t l7b[] = {sizeof tk, 12, sizeof vals};
    const void *b7b[] = {&tk, two, vals};
    expect_error(s, "valid header, truncated keys", b7b, l7b, 3);
    cr_dhdr no = header(CR_D_PUSH, 0, 1, 3);
    const void *b8[] = {&no, &other, vals};
    size_t l8[] = {sizeof no, sizeof other, 3 * sizeof(float)};
    expect_error(s, "keys not owned by this node", b8, l8, 3);
    cr_dhdr tab = header(CR_D_PULL, 7, 1, 3);
    const void *b9[] = {&tab, &mine};
    expect_error(s, "table id out of range", b9, l3, 2);
    cr_dhdr z = header(CR_D_PUSH, 0, 1, 3);
    z.flags = CR_D_ZLIB;
    z.raw_bytes = 3 * sizeof(float);
    const void *b10[] = {&z, &mine, junk};
    size_t l10[] = {sizeof z, sizeof mine, 20};
    expect_error(s, "gradient that does not inflate", b10, l10, 3);
}

/* Requests shaped by the traffic filters (src/net/cr_filter.h) that no
 * real worker sends: a hash of a list never stored, a hash frame of the
 * wrong size, a list stored for a worker that does not exist, a
 * zero-removed gradient that does not decode. Worker 0's cache is only
 * read (a miss changes nothing), so the running job is not disturbed. */
static void filter_cases(void *s, int64_t mine) {
    unsigned char hf[12] = {1, 2, 3, 4, 5, 6, 7, 8, 2, 0, 0, 0};
    cr_dhdr kh = header(CR_D_PULL, 0, 2, 3);
    kh.worker = 0;
    kh.flags = CR_D_KHASH;
    kh.aux = 77;
    const void *b1[] = {&kh, hf};
    size_t l1[] = {sizeof kh, sizeof hf};
    expect_error(s, "key cache: a hash never stored", b1, l1, 2);
    cr_dhdr kw = kh;
    kw.req = next_req++;
    size_t l2[] = {sizeof kw, 8};
    const void *b2[] = {&kw, hf};
    expect_error(s, "key cache: hash frame of 8 bytes", b2, l2, 2);
    cr_dhdr ks = header(CR_D_PULL, 0, 2, 3);
    ks.flags = CR_D_KSTORE | CR_D_KRESET;
    ks.aux = 1;
    int64_t two[2] = {mine, mine};
    const void *b3[] = {&ks, two};
    size_t l3[] = {sizeof ks, sizeof two};
    expect_error(s, "key cache: a list from worker 99 (no such worker)", b3, l3, 2);
    cr_dhdr zh = header(CR_D_PUSH, 0, 1, 3);
    zh.flags = CR_D_ZEROS;
    zh.raw_bytes = 11;
    unsigned char bad[11] = {3, 0, 0, 0, 1, 0, 0, 0, 1, 2, 3};
    const void *b4[] = {&zh, &mine, bad};
    size_t l4[] = {sizeof zh, sizeof mine, sizeof bad};
    expect_error(s, "zero-removed gradient of an unknown kind", b4, l4, 3);
}

static void nan_push(void *s, int64_t mine, const char *name) {
    cr_dhdr h = header(CR_D_PUSH, 0, 1, 3);
    float v[3] = {1.0f, NAN, 1.0f};
    const void *b[] = {&h, &mine, v};
    size_t l[] = {sizeof h, sizeof mine, sizeof v};
    expect_error(s, name, b, l, 3);
    float inf[3] = {INFINITY, 0, 0};
    cr_dhdr h2 = header(CR_D_PUSH, 0, 1, 3);
    const void *b2[] = {&h2, &mine, inf};
    expect_error(s, "Inf push", b2, l, 3);
}

/* Find a key of table 0 this node holds and one it does not (10 keys);
 * waits up to 20 s for the table to exist. */
static int find_keys(void *s, int64_t *mine, int64_t *other) {
    double end = cr_now() + 20;
    float row[3];
    while (cr_now() < end) {
        *mine = *other = -1;
        for (int64_t k = 0; k < 10; k++) {
            int r = pull_row(s, k, row);
            if (r < 0) return -1;
            if (r == 1 && *mine < 0) *mine = k;
            if (r == 0 && *other < 0) *other = k;
        }
        if (*mine >= 0 && *other >= 0) return 0;
        zmq_poll(NULL, 0, 100); /* the job has not declared its table yet */
    }
    return -1;
}

static int probe(void *ctx, const char *addr) {
    cr_curve c;
    cr_err e;
    if (cr_curve_from_env(&c, &e) < 0) return fprintf(stderr, "%s\n", e.msg), 2;
    void *s = cr_socket(ctx, ZMQ_DEALER);
    cr_curve_client(s, &c);
    zmq_connect(s, addr);
    int64_t mine, other;
    if (find_keys(s, &mine, &other) < 0) {
        result(0, "setup", "no table 0 with keys on and off this node");
        zmq_close(s);
        return 1;
    }
    float before[3], after[3];
    pull_row(s, mine, before);
    malformed_cases(s, mine, other);
    filter_cases(s, mine);
    nan_push(s, mine, "NaN push");
    pull_row(s, mine, after);
    int finite = isfinite(after[0]) && isfinite(after[1]) && isfinite(after[2]);
    result(finite && after[0] >= before[0], "row still finite after the attack", finite ? "yes" : "NaN in the row");
    float row[3];
    result(pull_row(s, mine, row) == 1, "node still serves", "a valid pull after the attack");
    zmq_close(s);
    return 0;
}

static int outsider(void *ctx, const char *addr) {
    void *s = cr_socket(ctx, ZMQ_DEALER);
    zmq_connect(s, addr);
    int64_t k = 0;
    cr_dhdr h = header(CR_D_PUSH, 0, 1, 3);
    float v[3] = {NAN, NAN, NAN};
    const void *b[] = {&h, &k, v};
    size_t l[] = {sizeof h, sizeof k, sizeof v};
    send_frames(s, b, l, 3);
    cr_parts p;
    int got = await_reply(s, &p, 1500);
    if (got) cr_parts_close(&p);
    result(!got, "keyless NaN push", got ? "the node answered a peer without the key" : "not admitted");
    zmq_close(s);
    return 0;
}

static int fake_register(void *ctx, const char *ep) {
    void *s = cr_socket(ctx, ZMQ_DEALER);
    int ms = 2000; /* as in send_frames: a refused handshake must not block the send for ever */
    zmq_setsockopt(s, ZMQ_SNDTIMEO, &ms, sizeof ms);
    zmq_connect(s, ep);
    const char *addr = "tcp://127.0.0.1:9";
    cr_proto_msg m;
    cr_proto_encode_register(&(cr_msg_register){.pid = 1, .rank = -1, .addr = addr, .addrn = strlen(addr)}, &m, NULL);
    cr_proto_send(s, NULL, 0, &m);
    cr_parts p;
    int got = await_reply(s, &p, 4000);
    int welcomed = got && cr_proto_view(&p, 0, &m, NULL) == 0 && m.h.type == CR_M_WELCOME;
    if (got) cr_parts_close(&p);
    result(!welcomed, "fake REGISTER without the key", welcomed ? "took a node slot" : "not admitted");
    zmq_close(s);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: probe_data ADDR | --outsider ADDR | --register ENDPOINT\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    int rc;
    if (!strcmp(argv[1], "--outsider") && argc == 3) rc = outsider(ctx, argv[2]);
    else if (!strcmp(argv[1], "--register") && argc == 3) rc = fake_register(ctx, argv[2]);
    else rc = probe(ctx, argv[1]);
    zmq_ctx_term(ctx);
    printf("%d passed, %d failed\n", passed, failed);
    return rc ? rc : failed > 0;
}
