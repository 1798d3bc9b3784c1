/* The control protocol (src/ps/cr_proto.h): every message survives an
 * encode -> frames on a socket -> view -> decode round trip, and every
 * decoder answers a short, oversized, truncated, mistyped or garbage message
 * with an error, never a crash (run under ASan/UBSan too). */
#include <stdlib.h>

#include "cr_test.h"
#include "ps/cr_proto.h"

static void *ctx, *tx, *rx;

/* Send m through an inproc PAIR and view what arrives (p stays open). */
static int roundtrip(const cr_proto_msg *m, cr_parts *p, cr_proto_msg *out) {
    if (cr_proto_send(tx, NULL, 0, m) < 0 || cr_parts_recv(rx, p, 0) < 0) return -1;
    return cr_proto_view(p, 0, out, NULL);
}

static void test_register_welcome(void) {
    cr_proto_msg m, v;
    cr_parts p;
    cr_msg_register r = {.pid = 4242, .addr = "tcp://127.0.0.1:5555", .addrn = 20}, r2;
    CR_CHECK(cr_proto_encode_register(&r, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    int ok = cr_proto_decode_register(&v, &r2, NULL) == 0 && r2.pid == 4242 && r2.addrn == 20 &&
             !memcmp(r2.addr, r.addr, 20);
    cr_parts_close(&p);
    CR_CHECK(ok);
    const char book[] = "tcp://a:1\0tcp://b:2\0";
    cr_msg_welcome w = {.node = 1, .nodes = 2, .workers = 3, .seed = 0xfeedbeefcafeULL, .book = book, .bookn = sizeof book - 1}, w2;
    CR_CHECK(cr_proto_encode_welcome(&w, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    ok = cr_proto_decode_welcome(&v, &w2, NULL) == 0 && w2.node == 1 && w2.nodes == 2 && w2.workers == 3 &&
         w2.seed == w.seed && !strcmp(cr_proto_welcome_addr(&w2, 1), "tcp://b:2") && !cr_proto_welcome_addr(&w2, 2);
    cr_parts_close(&p);
    CR_CHECK(ok);
}

static void test_table_script_call(void) {
    cr_proto_msg m, v;
    cr_parts p;
    cr_msg_table t = {.id = 3}, t2;
    snprintf(t.def.name, sizeof t.def.name, "W");
    t.def.keys = 10;
    t.def.dim = 4;
    t.def.optim.kind = CR_OPTIM_SGD;
    CR_CHECK(cr_proto_encode_table(&t, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    int ok = cr_proto_decode_table(&v, &t2, NULL) == 0 && t2.id == 3 && !memcmp(&t.def, &t2.def, sizeof t.def);
    cr_parts_close(&p);
    CR_CHECK(ok);
    for (int type = CR_M_MODEL; type <= CR_M_POLICY; type += CR_M_POLICY - CR_M_MODEL) {
        cr_msg_script s = {.src = "return {}", .srcn = 9, .chunk = "m.lua", .chunkn = 5, .opts = "{a=1}", .optsn = 5}, s2;
        CR_CHECK(cr_proto_encode_script(type, &s, &m, NULL) == 0);
        CR_CHECK(roundtrip(&m, &p, &v) == 0);
        cr_proto_msg_free(&m);
        ok = cr_proto_decode_script(&v, &s2, NULL) == 0 && v.h.type == type && s2.srcn == 9 && s2.chunkn == 5 &&
             s2.optsn == 5 && !memcmp(s2.src, "return {}", 9) && !memcmp(s2.chunk, "m.lua", 5) && !memcmp(s2.opts, "{a=1}", 5);
        cr_parts_close(&p);
        CR_CHECK(ok);
    }
    cr_msg_call c = {.fn = "epoch", .fnn = 5, .args = "{}", .argsn = 2}, c2;
    CR_CHECK(cr_proto_encode_call(&c, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    ok = cr_proto_decode_call(&v, &c2, NULL) == 0 && c2.fnn == 5 && !memcmp(c2.fn, "epoch", 5) && c2.argsn == 2;
    cr_parts_close(&p);
    CR_CHECK(ok);
}

static void test_clocks_rows(void) {
    cr_proto_msg m, v;
    cr_parts p;
    int64_t cb[6] = {1, 2, 3, 4, 1, 0};
    cr_msg_clocks c = {.W = 2, .clocks = cb, .barriers = cb + 2, .active = cb + 4}, c2;
    CR_CHECK(cr_proto_encode_clocks(CR_M_CLOCKS, &c, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    int ok = cr_proto_decode_clocks(&v, 2, &c2, NULL) == 0 && cr_proto_i64(c2.clocks, 1) == 2 &&
             cr_proto_i64(c2.barriers, 0) == 3 && cr_proto_i64(c2.active, 0) == 1 && cr_proto_i64(c2.active, 1) == 0;
    ok = ok && cr_proto_decode_clocks(&v, 3, &c2, NULL) < 0; /* the receiver's W must match */
    cr_parts_close(&p);
    CR_CHECK(ok);
    CR_CHECK(cr_proto_encode_clocks(CR_M_SETCLOCKS, &c, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    ok = cr_proto_decode_clocks(&v, 2, &c2, NULL) == 0 && v.h.type == CR_M_SETCLOCKS && !c2.active &&
         cr_proto_i64(c2.barriers, 1) == 4;
    cr_parts_close(&p);
    CR_CHECK(ok);
    float vals[6] = {1, 2, 3, 4, 5, 6}, st[2] = {7, 8};
    cr_msg_rows r = {.table = 1, .lo = 5, .count = 2, .values = vals, .valuesn = sizeof vals, .state = st, .staten = sizeof st}, r2;
    for (int type = CR_M_GETROWS; type <= CR_M_ROWS; type++) {
        if (type != CR_M_GETROWS && type != CR_M_SETROWS && type != CR_M_ROWS) continue;
        CR_CHECK(cr_proto_encode_rows(type, &r, &m, NULL) == 0);
        CR_CHECK(roundtrip(&m, &p, &v) == 0);
        ok = cr_proto_decode_rows(&v, 3, 1, &r2, NULL) == 0 && r2.table == 1 && r2.lo == 5 && r2.count == 2 &&
             (type == CR_M_GETROWS ? !r2.values : r2.valuesn == sizeof vals && !memcmp(r2.values, vals, sizeof vals) &&
                                                     !memcmp(r2.state, st, sizeof st));
        cr_parts_close(&p);
        CR_CHECK(ok);
    }
    cr_msg_setlr s = {.table = 2, .lr = 0.125}, s2;
    CR_CHECK(cr_proto_encode_setlr(&s, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    ok = cr_proto_decode_setlr(&v, &s2, NULL) == 0 && s2.table == 2 && s2.lr == 0.125;
    cr_parts_close(&p);
    CR_CHECK(ok);
    s.lr = 1.0 / 0.0;
    CR_CHECK(cr_proto_encode_setlr(&s, &m, NULL) < 0);
}

static void test_answers(void) {
    cr_proto_msg m, v;
    cr_parts p;
    for (int type = CR_M_REPLY; type <= CR_M_ERROR; type++) {
        cr_msg_reply r = {.worker = 3, .data = "{x=1}", .n = 5}, r2;
        CR_CHECK(cr_proto_encode_reply(type, &r, &m, NULL) == 0);
        CR_CHECK(roundtrip(&m, &p, &v) == 0);
        int ok = cr_proto_decode_reply(&v, &r2, NULL) == 0 && v.h.type == type && r2.worker == 3 && r2.n == 5;
        cr_parts_close(&p);
        CR_CHECK(ok);
    }
    cr_msg_state s = {.worker = 2, .clock = 9, .barrier = 4}, s2;
    CR_CHECK(cr_proto_encode_state(&s, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    int ok = cr_proto_decode_state(&v, &s2, NULL) == 0 && s2.worker == 2 && s2.clock == 9 && s2.barrier == 4;
    cr_parts_close(&p);
    CR_CHECK(ok);
    cr_msg_progress g = {.items = 77}, g2;
    CR_CHECK(cr_proto_encode_progress(&g, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    ok = cr_proto_decode_progress(&v, &g2, NULL) == 0 && g2.items == 77;
    cr_parts_close(&p);
    CR_CHECK(ok);
    cr_msg_dead d = {.node = 1, .why = "gone", .whyn = 4}, d2;
    CR_CHECK(cr_proto_encode_dead(&d, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    ok = cr_proto_decode_dead(&v, &d2, NULL) == 0 && d2.node == 1 && d2.whyn == 4;
    cr_parts_close(&p);
    CR_CHECK(ok);
    const int empty[] = {CR_M_HB, CR_M_STATS, CR_M_ACK, CR_M_CANCEL, CR_M_SHUTDOWN};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        CR_CHECK(cr_proto_encode_empty(empty[i], &m, NULL) == 0);
        CR_CHECK(roundtrip(&m, &p, &v) == 0);
        ok = cr_proto_decode_empty(&v, NULL) == 0 && v.h.type == empty[i];
        cr_parts_close(&p);
        CR_CHECK(ok);
    }
    CR_CHECK(cr_proto_encode_empty(CR_M_CALL, &m, NULL) < 0);
}

/* ---------- hostile input ---------- */

/* Every decoder, with output structs of its own; returns how many accepted m. */
static int decode_all(const cr_proto_msg *m, int W) {
    cr_msg_register a;
    cr_msg_welcome b;
    cr_msg_table c;
    cr_msg_script d;
    cr_msg_call f;
    cr_msg_clocks g;
    cr_msg_setlr h;
    cr_msg_rows i;
    cr_msg_reply k;
    cr_msg_state l;
    cr_msg_progress n;
    cr_msg_dead o;
    cr_err e;
    return (cr_proto_decode_register(m, &a, &e) == 0) + (cr_proto_decode_welcome(m, &b, &e) == 0) +
           (cr_proto_decode_table(m, &c, &e) == 0) + (cr_proto_decode_script(m, &d, &e) == 0) +
           (cr_proto_decode_call(m, &f, &e) == 0) + (cr_proto_decode_clocks(m, W, &g, &e) == 0) +
           (cr_proto_decode_setlr(m, &h, &e) == 0) + (cr_proto_decode_rows(m, 3, 1, &i, &e) == 0) +
           (cr_proto_decode_reply(m, &k, &e) == 0) + (cr_proto_decode_state(m, &l, &e) == 0) +
           (cr_proto_decode_progress(m, &n, &e) == 0) + (cr_proto_decode_dead(m, &o, &e) == 0) +
           (cr_proto_decode_empty(m, &e) == 0);
}

/* One valid message of each type with payloads (W = 2; rows of dim 3, sdim 1). */
static int samples(cr_proto_msg *out) {
    static int64_t cb[6] = {1, 2, 3, 4, 1, 1};
    static float vals[6], st[2];
    static const char book[] = "a\0b\0";
    static cr_msg_table t = {.id = 0};
    snprintf(t.def.name, sizeof t.def.name, "T");
    t.def.keys = 4;
    t.def.dim = 3;
    int k = 0;
    cr_proto_encode_register(&(cr_msg_register){.pid = 1, .addr = "x", .addrn = 1}, &out[k++], NULL);
    cr_proto_encode_welcome(&(cr_msg_welcome){.node = 0, .nodes = 2, .workers = 1, .book = book, .bookn = 4}, &out[k++], NULL);
    cr_proto_encode_table(&t, &out[k++], NULL);
    cr_proto_encode_call(&(cr_msg_call){.fn = "f", .fnn = 1, .args = "{}", .argsn = 2}, &out[k++], NULL);
    cr_msg_clocks c = {.W = 2, .clocks = cb, .barriers = cb + 2, .active = cb + 4};
    cr_proto_encode_clocks(CR_M_CLOCKS, &c, &out[k++], NULL);
    cr_proto_encode_clocks(CR_M_SETCLOCKS, &c, &out[k++], NULL);
    cr_msg_rows r = {.count = 2, .values = vals, .valuesn = sizeof vals, .state = st, .staten = sizeof st};
    cr_proto_encode_rows(CR_M_ROWS, &r, &out[k++], NULL);
    cr_proto_encode_rows(CR_M_SETROWS, &r, &out[k++], NULL);
    cr_proto_encode_reply(CR_M_REPLY, &(cr_msg_reply){.worker = 0, .data = "1", .n = 1}, &out[k++], NULL);
    cr_proto_encode_dead(&(cr_msg_dead){.node = 0, .why = "x", .whyn = 1}, &out[k++], NULL);
    return k;
}

/* A payload frame dropped, or one added, is refused by every decoder; a
 * size-checked payload one byte short or long is refused by its own. */
static void test_truncated_and_oversized(void) {
    cr_proto_msg s[16];
    int n = samples(s);
    char big[64] = {0};
    for (int i = 0; i < n; i++) {
        CR_CHECK(decode_all(&s[i], 2) == 1);
        cr_proto_msg m = s[i];
        m.np--;
        CR_CHECK(decode_all(&m, 2) == 0);
        m = s[i];
        if (m.np < 2) {
            m.p[m.np] = big;
            m.n[m.np++] = 8;
            CR_CHECK(decode_all(&m, 2) == 0);
        }
        int sized = m.h.type == CR_M_TABLE || m.h.type == CR_M_CLOCKS || m.h.type == CR_M_SETCLOCKS ||
                    m.h.type == CR_M_ROWS || m.h.type == CR_M_SETROWS || m.h.type == CR_M_WELCOME;
        for (int f = 0; sized && f < s[i].np; f++) {
            m = s[i];
            m.n[f]--; /* truncated */
            CR_CHECK(decode_all(&m, 2) == 0);
        }
    }
    /* oversized counts and lengths */
    char *huge = calloc(CR_PROTO_MAX_SCRIPT + 2, 1);
    CR_CHECK(huge != NULL);
    cr_proto_msg m;
    cr_msg_register r;
    cr_proto_encode_register(&(cr_msg_register){.pid = 1, .addr = "x", .addrn = 1}, &m, NULL);
    m.n[0] = CR_PROTO_MAX_ADDR + 1;
    m.p[0] = huge;
    int refused = cr_proto_decode_register(&m, &r, NULL) < 0;
    cr_msg_call c;
    cr_proto_encode_call(&(cr_msg_call){.fn = "f", .fnn = 1, .args = "", .argsn = 0}, &m, NULL);
    m.p[1] = huge;
    m.n[1] = CR_PROTO_MAX_SCRIPT + 1;
    refused += cr_proto_decode_call(&m, &c, NULL) < 0;
    cr_msg_script sc;
    cr_proto_encode_script(CR_M_MODEL, &(cr_msg_script){.src = "", .chunk = "c", .chunkn = 1}, &m, NULL);
    cr_proto_msg_free(&m);
    m.p[1] = huge; /* chunk name of MAX_SCRIPT bytes, NUL at the end */
    m.n[1] = CR_PROTO_MAX_SCRIPT + 1;
    memset(huge, 'c', CR_PROTO_MAX_SCRIPT);
    refused += cr_proto_decode_script(&m, &sc, NULL) < 0;
    free(huge);
    cr_msg_welcome w;
    cr_proto_msg wm = s[1];
    wm.h.a = CR_PROTO_MAX_NODES + 1;
    refused += cr_proto_decode_welcome(&wm, &w, NULL) < 0;
    wm.h.a = 2;
    wm.h.b = 1 << 30;
    refused += cr_proto_decode_welcome(&wm, &w, NULL) < 0;
    cr_msg_rows rows;
    cr_proto_msg rm = s[6];
    rm.h.b = INT64_MAX / 2; /* count * dim * 4 overflows */
    refused += cr_proto_decode_rows(&rm, 3, 1, &rows, NULL) < 0;
    rm.h.b = -1;
    refused += cr_proto_decode_rows(&rm, 3, 1, &rows, NULL) < 0;
    CR_CHECK(refused == 7);
}

/* Mistyped: a decoder takes only its own type, so a sample under any other
 * type is taken by at most that type's decoder (when the shapes agree, as a
 * REPLY's and a DEAD's do), never by its own. Garbage: random header bytes
 * and payloads never crash. */
static void test_garbage(void) {
    cr_proto_msg s[16];
    int n = samples(s);
    for (int i = 0; i < n; i++)
        for (int t = -3; t < 30; t++) {
            cr_proto_msg m = s[i];
            m.h.type = t;
            CR_CHECK(decode_all(&m, 2) <= 1);
        }
    CR_CHECK(decode_all(&(cr_proto_msg){.h = {.type = CR_M_CALL}, .np = 1, .p = {"f"}, .n = {1}}, 2) == 0);
    uint64_t x = 88172645463325252ULL;
    unsigned char buf[3][200];
    for (int round = 0; round < 20000; round++) {
        for (int f = 0; f < 3; f++)
            for (size_t b = 0; b < sizeof buf[f]; b++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                buf[f][b] = (unsigned char)x;
            }
        cr_proto_msg m;
        memcpy(&m.h, buf[0], sizeof m.h);
        m.h.type = (int32_t)(x % 24); /* mostly known types, so decoders go deep */
        m.np = (int)(x >> 8) % 3;
        for (int f = 0; f < 2; f++) {
            m.p[f] = buf[f + 1];
            m.n[f] = (size_t)((x >> (16 + 8 * f)) % sizeof buf[f + 1]);
        }
        m.owned = NULL;
        decode_all(&m, (int)((x >> 40) % 5));
    }
    /* garbage frames on a socket: the viewer refuses short headers, unknown
     * types and too many frames */
    cr_parts p;
    cr_proto_msg v;
    zmq_send(tx, "abc", 3, 0);
    CR_CHECK(cr_parts_recv(rx, &p, 0) == 1);
    int bad = cr_proto_view(&p, 0, &v, NULL) < 0;
    cr_parts_close(&p);
    cr_ctl h = {.type = 77};
    zmq_send(tx, &h, sizeof h, 0);
    cr_parts_recv(rx, &p, 0);
    bad += cr_proto_view(&p, 0, &v, NULL) < 0;
    cr_parts_close(&p);
    h.type = CR_M_HB;
    for (int f = 0; f < 5; f++) zmq_send(tx, &h, sizeof h, f < 4 ? ZMQ_SNDMORE : 0);
    cr_parts_recv(rx, &p, 0);
    bad += cr_proto_view(&p, 0, &v, NULL) < 0;
    cr_parts_close(&p);
    CR_CHECK(bad == 3);
}

int main(void) {
    ctx = zmq_ctx_new();
    tx = cr_socket(ctx, ZMQ_PAIR);
    rx = cr_socket(ctx, ZMQ_PAIR);
    zmq_bind(rx, "inproc://test-proto");
    zmq_connect(tx, "inproc://test-proto");
    CR_RUN(test_register_welcome);
    CR_RUN(test_table_script_call);
    CR_RUN(test_clocks_rows);
    CR_RUN(test_answers);
    CR_RUN(test_truncated_and_oversized);
    CR_RUN(test_garbage);
    zmq_close(tx);
    zmq_close(rx);
    zmq_ctx_term(ctx);
    return cr_test_done();
}
