/* Wire format: multipart frames over an inproc pair, zero-copy frames, zlib. */
#include <stdlib.h>

#include "cr_test.h"
#include "net/cr_wire.h"

/* A multipart message arrives whole: every frame, in order, empty ones
 * included (control messages are typed by src/ps/cr_proto.h, tested in
 * test_proto.c). */
static void test_parts_roundtrip(void) {
    void *ctx = zmq_ctx_new();
    void *a = cr_socket(ctx, ZMQ_PAIR), *b = cr_socket(ctx, ZMQ_PAIR);
    CR_CHECK(zmq_bind(a, "inproc://wire-test") == 0 && zmq_connect(b, "inproc://wire-test") == 0);
    const char h[] = "a header frame";
    zmq_send(a, h, sizeof h, ZMQ_SNDMORE);
    zmq_send(a, "epoch", 5, ZMQ_SNDMORE);
    zmq_send(a, "", 0, 0);
    cr_parts p;
    CR_CHECK(cr_parts_recv(b, &p, 0) == 3);
    CR_CHECK(cr_parts_size(&p, 0) == sizeof h && !memcmp(cr_parts_data(&p, 0), h, sizeof h));
    CR_CHECK(cr_parts_size(&p, 1) == 5 && !memcmp(cr_parts_data(&p, 1), "epoch", 5));
    CR_CHECK(cr_parts_size(&p, 2) == 0);
    cr_parts_close(&p);
    /* owned frame: no copy, freed by zmq */
    int64_t *keys = malloc(3 * sizeof *keys);
    keys[0] = 1, keys[1] = 99, keys[2] = -1;
    CR_CHECK(cr_send_owned(a, keys, 3 * sizeof *keys, 0) == 0);
    CR_CHECK(cr_parts_recv(b, &p, 0) == 1);
    CR_CHECK(cr_parts_size(&p, 0) == 24 && ((int64_t *)cr_parts_data(&p, 0))[1] == 99);
    cr_parts_close(&p);
    CR_CHECK(cr_parts_recv(b, &p, ZMQ_DONTWAIT) == -1); /* nothing pending */
    zmq_close(a);
    zmq_close(b);
    zmq_ctx_term(ctx);
}

static void test_zlib(void) {
    size_t n = 100000;
    float *v = malloc(n * sizeof *v), *back = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = (float)(i % 17);
    void *z;
    size_t zn;
    cr_err e;
    CR_CHECK(cr_wire_deflate(v, n * sizeof *v, &z, &zn, &e) == 0);
    CR_CHECK(zn < n * sizeof *v / 4);
    CR_CHECK(cr_wire_inflate(z, zn, back, n * sizeof *v, &e) == 0);
    CR_CHECK(!memcmp(v, back, n * sizeof *v));
    CR_CHECK(cr_wire_inflate(z, zn / 2, back, n * sizeof *v, &e) == -1); /* truncated */
    CR_CHECK(strstr(e.msg, "corrupt compressed frame") != NULL);
    free(z);
    free(v);
    free(back);
}

int main(void) {
    CR_RUN(test_parts_roundtrip);
    CR_RUN(test_zlib);
    return cr_test_done();
}
