#include "net/cr_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int cr_parts_recv(void *sock, cr_parts *p, int flags) {
    p->n = 0;
    int more = 1;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sock, p->n ? 0 : flags) < 0) {
            int err = errno;
            zmq_msg_close(&m);
            cr_parts_close(p);
            errno = err;
            return -1;
        }
        more = zmq_msg_more(&m);
        if (p->n < CR_PARTS_MAX) p->part[p->n++] = m;
        else zmq_msg_close(&m);
    }
    return p->n;
}

void cr_parts_close(cr_parts *p) {
    for (int i = 0; i < p->n; i++) zmq_msg_close(&p->part[i]);
    p->n = 0;
}

static void free_fn(void *data, void *hint) {
    (void)hint;
    free(data);
}

int cr_send_owned(void *sock, void *buf, size_t len, int more) {
    zmq_msg_t m;
    if (zmq_msg_init_data(&m, buf, len, free_fn, NULL) < 0) {
        free(buf);
        return -1;
    }
    if (zmq_msg_send(&m, sock, more ? ZMQ_SNDMORE : 0) < 0) {
        zmq_msg_close(&m);
        return -1;
    }
    return 0;
}

int cr_wire_deflate(const void *src, size_t n, void **out, size_t *outlen, cr_err *e) {
    uLongf cap = compressBound((uLong)n);
    void *buf = malloc(cap ? cap : 1);
    if (!buf) return cr_errf(e, "out of memory compressing %zu bytes", n);
    if (compress2(buf, &cap, src, (uLong)n, 1) != Z_OK) {
        free(buf);
        return cr_errf(e, "zlib compression failed");
    }
    *out = buf;
    *outlen = cap;
    return 0;
}

int cr_wire_inflate(const void *src, size_t n, void *dst, size_t raw, cr_err *e) {
    uLongf got = (uLongf)raw;
    if (uncompress(dst, &got, src, (uLong)n) != Z_OK || got != raw)
        return cr_errf(e, "corrupt compressed frame (%zu bytes, expected %zu inflated)", n, raw);
    return 0;
}

void *cr_socket(void *ctx, int type) {
    void *s = zmq_socket(ctx, type);
    if (s) {
        int zero = 0;
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    }
    return s;
}
