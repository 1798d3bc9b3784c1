/* DIST and SAMPLING, the sampling messages of the control protocol
 * (src/ps/cr_proto.h): both survive a trip through a socket, and their
 * decoders refuse every malformed shape (kind, counts against frame sizes,
 * caps, names, bad configurations) with a message, before any allocation. */
#include <stdlib.h>

#include "cr_test.h"
#include "ps/cr_proto.h"

static void *ctx, *tx, *rx;

static int roundtrip(const cr_proto_msg *m, cr_parts *p, cr_proto_msg *out) {
    if (cr_proto_send(tx, NULL, 0, m) < 0 || cr_parts_recv(rx, p, 0) < 0) return -1;
    return cr_proto_view(p, 0, out, NULL);
}

static void test_dist_roundtrip(void) {
    cr_proto_msg m, v;
    cr_parts p;
    double w[5] = {1, 0, 2.5, 3, 0.25};
    /* weights 2..4 of 9 */
    cr_msg_dist d = {.table = 2, .kind = CR_DIST_WEIGHTS, .name = "neg", .namen = 3, .nweights = 9, .offset = 2,
                     .npart = 5, .weights = w}, d2;
    CR_CHECK(cr_proto_encode_dist(&d, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    cr_proto_msg_free(&m);
    int ok = cr_proto_decode_dist(&v, &d2, NULL) == 0 && d2.table == 2 && d2.kind == CR_DIST_WEIGHTS &&
             d2.namen == 3 && !memcmp(d2.name, "neg", 3) && d2.nweights == 9 && d2.offset == 2 && d2.npart == 5 &&
             !memcmp(d2.weights, w, sizeof w);
    cr_parts_close(&p);
    CR_CHECK(ok);
    cr_msg_dist u = {.table = 0, .kind = CR_DIST_UNIFORM, .name = "uni", .namen = 3};
    CR_CHECK(cr_proto_encode_dist(&u, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    ok = cr_proto_decode_dist(&v, &d2, NULL) == 0 && d2.kind == CR_DIST_UNIFORM && d2.nweights == 0 && !d2.weights;
    cr_parts_close(&p);
    CR_CHECK(ok);
}

/* A DIST message as frames, for the malformed cases; the weights frame is
 * an int64 offset then doubles. */
static double frame[8];
static cr_proto_msg dist_msg(int64_t kind, int64_t nw, const void *name, size_t namen, int64_t off, size_t wn) {
    cr_proto_msg m;
    memset(&m, 0, sizeof m);
    memcpy(frame, &off, 8);
    for (int i = 1; i < 8; i++) frame[i] = 1;
    m.h.type = CR_M_DIST;
    m.h.a = kind;
    m.h.b = nw;
    m.np = 2;
    m.p[0] = name;
    m.n[0] = namen;
    m.p[1] = frame;
    m.n[1] = wn;
    return m;
}

static void test_dist_malformed(void) {
    char big[80];
    memset(big, 'a', sizeof big);
    cr_msg_dist d;
    cr_err e;
    struct { int64_t kind, nw; const char *name; size_t namen; int64_t off; size_t wn; } cases[] = {
        {2, 0, "x", 1, 0, 0},                                /* unknown kind */
        {CR_DIST_UNIFORM, 4, "x", 1, 0, 40},                 /* uniform with weights */
        {CR_DIST_WEIGHTS, 4, "x", 1, 0, 36},                 /* frame not offset + doubles */
        {CR_DIST_WEIGHTS, 4, "x", 1, 0, 8},                  /* an offset and no weights */
        {CR_DIST_WEIGHTS, 4, "x", 1, 0, 0},                  /* no frame at all */
        {CR_DIST_WEIGHTS, 4, "x", 1, 2, 32},                 /* [2, 5) outside 4 weights */
        {CR_DIST_WEIGHTS, 4, "x", 1, -1, 16},                /* negative offset */
        {CR_DIST_WEIGHTS, 0, "x", 1, 0, 16},                 /* no weights in all */
        {CR_DIST_WEIGHTS, CR_PROTO_MAX_WEIGHTS + 1, "x", 1, 0, 16}, /* over the cap */
        {CR_DIST_WEIGHTS, -1, "x", 1, 0, 16},                /* negative count */
        {CR_DIST_UNIFORM, 0, "", 0, 0, 0},                   /* empty name */
        {CR_DIST_UNIFORM, 0, big, sizeof big, 0, 0},         /* long name */
        {CR_DIST_UNIFORM, 0, "a\0b", 3, 0, 0},               /* NUL in the name */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_proto_msg m = dist_msg(cases[i].kind, cases[i].nw, cases[i].name, cases[i].namen, cases[i].off, cases[i].wn);
        if (cr_proto_decode_dist(&m, &d, &e) == 0) printf("  case %zu decoded\n", i);
        CR_CHECK(cr_proto_decode_dist(&m, &d, &e) < 0 && strstr(e.msg, "DIST:"));
    }
    cr_proto_msg one = dist_msg(CR_DIST_WEIGHTS, 4, "x", 1, 0, 40);
    CR_CHECK(cr_proto_decode_dist(&one, &d, &e) == 0 && d.npart == 4); /* the shape the cases break */
    one.np = 1;
    CR_CHECK(cr_proto_decode_dist(&one, &d, &e) < 0);
    double w[2] = {1, 2};
    cr_msg_dist bad = {.kind = CR_DIST_WEIGHTS, .name = "x", .namen = 1, .weights = w, .nweights = 3, .offset = 2,
                       .npart = 2};
    CR_CHECK(cr_proto_encode_dist(&bad, &one, &e) < 0 && one.owned == NULL); /* past the end: refused, freed */
    bad.offset = 0;
    bad.npart = CR_DIST_PART + 1;
    CR_CHECK(cr_proto_encode_dist(&bad, &one, &e) < 0); /* a part over the part cap */
}

static cr_sampling_entry entry(const char *name, int64_t level, int64_t pool, int64_t reuse, int64_t postpone) {
    cr_sampling_entry x;
    memset(&x, 0, sizeof x);
    snprintf(x.name, sizeof x.name, "%s", name);
    x.level = level;
    x.pool = pool;
    x.reuse = reuse;
    x.postpone = postpone;
    return x;
}

static void test_sampling_roundtrip(void) {
    cr_proto_msg m, v;
    cr_parts p;
    cr_sampling_entry es[3] = {entry("", 2, 100, 4, 0), entry("neg", 3, 50, 2, 1), entry("E", 4, 1, 1, 0)};
    cr_msg_sampling s = {.label = "bounded:pool=100", .labeln = 16, .count = 3, .entries = es}, s2;
    CR_CHECK(cr_proto_encode_sampling(&s, &m, NULL) == 0);
    CR_CHECK(roundtrip(&m, &p, &v) == 0);
    int ok = cr_proto_decode_sampling(&v, &s2, NULL) == 0 && s2.count == 3 && s2.labeln == 16;
    for (int i = 0; ok && i < 3; i++) {
        cr_sampling_entry x;
        cr_proto_sampling_entry(&s2, i, &x);
        ok = !memcmp(&x, &es[i], sizeof x);
    }
    cr_parts_close(&p);
    CR_CHECK(ok);
}

static void test_sampling_malformed(void) {
    cr_msg_sampling s;
    cr_proto_msg m;
    cr_err e;
    cr_sampling_entry cases[][2] = {
        {entry("x", 1, 1, 1, 0), entry("", 1, 1, 1, 0)},    /* the default has a name */
        {entry("", 1, 1, 1, 0), entry("", 1, 1, 1, 0)},    /* a later entry has none */
        {entry("", 0, 1, 1, 0), entry("a", 1, 1, 1, 0)},   /* level 0 */
        {entry("", 5, 1, 1, 0), entry("a", 1, 1, 1, 0)},   /* level 5 */
        {entry("", 2, 0, 1, 0), entry("a", 1, 1, 1, 0)},   /* pool 0 */
        {entry("", 2, 1, 0, 0), entry("a", 1, 1, 1, 0)},   /* reuse 0 */
        {entry("", 1, 1, 1, 0), entry("a", 2, 9, 9, 1)},   /* postponing at level 2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_msg_sampling in = {.label = "t", .labeln = 1, .count = 2, .entries = cases[i]};
        CR_CHECK(cr_proto_encode_sampling(&in, &m, &e) < 0);
    }
    cr_sampling_entry un = entry("", 1, 1, 1, 0);
    memset(un.name, 'z', sizeof un.name); /* not terminated */
    cr_sampling_entry two[2] = {entry("", 1, 1, 1, 0), un};
    cr_msg_sampling in = {.label = "t", .labeln = 1, .count = 2, .entries = two};
    CR_CHECK(cr_proto_encode_sampling(&in, &m, &e) < 0 && strstr(e.msg, "not terminated"));
    in.count = 0;
    CR_CHECK(cr_proto_encode_sampling(&in, &m, &e) < 0);
    in.count = 1;
    CR_CHECK(cr_proto_encode_sampling(&in, &m, &e) == 0);
    m.h.a = 2; /* count says 2, the frame holds 1 */
    CR_CHECK(cr_proto_decode_sampling(&m, &s, &e) < 0 && strstr(e.msg, "entries frame"));
    m.h.a = CR_PROTO_MAX_SCHEME + 1;
    CR_CHECK(cr_proto_decode_sampling(&m, &s, &e) < 0);
    m.h.a = 1;
    m.n[0] = CR_PROTO_MAX_NAME + 1; /* label over the cap */
    CR_CHECK(cr_proto_decode_sampling(&m, &s, &e) < 0);
}

int main(void) {
    ctx = zmq_ctx_new();
    tx = cr_socket(ctx, ZMQ_PAIR);
    rx = cr_socket(ctx, ZMQ_PAIR);
    zmq_bind(rx, "inproc://test-proto-sampling");
    zmq_connect(tx, "inproc://test-proto-sampling");
    CR_RUN(test_dist_roundtrip);
    CR_RUN(test_dist_malformed);
    CR_RUN(test_sampling_roundtrip);
    CR_RUN(test_sampling_malformed);
    zmq_close(tx);
    zmq_close(rx);
    zmq_ctx_term(ctx);
    return cr_test_done();
}
